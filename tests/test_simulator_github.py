"""The simulated GitHub as a stateful service: git-backed tips, pull requests
through the API, comments, reviews, threads, checks, ETags, paging and
per-token rate limits, all stamped by the simulated clock."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.github.client import GitHubClient
from observe.github.pull_request import observe_pull_request
from simulator import graphql_api
from simulator.app import Server
from simulator.clock import iso
from simulator.world import USERS, World
from tests.simulation import NAME, OTHER_TOKEN, OWNER, TOKEN, Api, git, make_world

REPO = f"/repos/{OWNER}/{NAME}"
THREADS = """query($owner: String!, $name: String!, $number: Int!) {
  rateLimit { cost remaining }
  repository(owner: $owner, name: $name) { pullRequest(number: $number) {
    reviewThreads(first: 100) { totalCount nodes { id isResolved path line
      comments(first: 100) { totalCount nodes { id body createdAt
        author { login ... on Bot { databaseId } ... on User { databaseId } } } } } } } }
}"""


@pytest.fixture
def world(tmp_path: Path):
    created = make_world(tmp_path)
    yield created
    created.close()


@pytest.fixture
def api(world: World) -> Api:
    return Api(world)


def open_pull(world: World, api: Api, branch: str = "feature/x", **extra) -> dict:
    world.commit(OWNER, NAME, branch, {"src/app.py": "print('hello')\n"}, "Fix the greeting")
    status, pull, _ = api(
        "POST", f"{REPO}/pulls", {"title": "Fix greeting", "head": branch, "base": "main", "body": "Typo.", **extra}
    )
    assert status == 201
    return pull


def test_a_real_git_push_moves_the_branch_and_the_pull_request_head(world, api, tmp_path):
    pull = open_pull(world, api)
    checkout = tmp_path / "checkout"
    git(tmp_path, "clone", "-q", "--branch", "feature/x", str(world.bare_repository(OWNER, NAME)), str(checkout))
    (checkout / "NEWS").write_text("fixed\n")
    git(checkout, "add", "NEWS")
    git(checkout, "commit", "-q", "-m", "news")
    pushed = git(checkout, "rev-parse", "HEAD")
    assert pushed != pull["head"]["sha"]

    git(checkout, "push", "-q", "origin", "feature/x")

    _, fresh, _ = api("GET", f"{REPO}/pulls/{pull['number']}")
    _, ref, _ = api("GET", f"{REPO}/git/ref/heads/feature/x")
    _, branch, _ = api("GET", f"{REPO}/branches/feature/x")
    assert fresh["head"]["sha"] == ref["object"]["sha"] == branch["commit"]["sha"] == pushed
    assert branch["commit"]["commit"]["message"] == "news"
    assert [p["sha"] for p in branch["commit"]["parents"]] == [pull["head"]["sha"]]


def test_a_push_moves_review_comments_and_outdates_threads_on_changed_files(world, api):
    pull = open_pull(world, api)
    reviewed = pull["head"]["sha"]
    api(
        "POST",
        f"{REPO}/pulls/1/reviews",
        {
            "event": "COMMENT",
            "comments": [{"path": "src/app.py", "line": 1, "body": "a"}, {"path": "README.md", "line": 1, "body": "b"}],
        },
    )
    pushed = world.commit(OWNER, NAME, "feature/x", {"src/app.py": "print('hello!')\n"}, "Address a")
    world.notice_push(OWNER, NAME)

    comments = api("GET", f"{REPO}/pulls/1/comments")[1]
    assert {(c["commit_id"], c["original_commit_id"]) for c in comments} == {(pushed, reviewed)}
    threads = api.graphql(THREADS, {"owner": OWNER, "name": NAME, "number": 1})["data"]["repository"]["pullRequest"][
        "reviewThreads"
    ]
    assert [t["path"] for t in threads["nodes"]] == ["src/app.py", "README.md"]
    outdated = api.graphql(
        "query($owner: String!, $name: String!) { rateLimit { cost } repository(owner: $owner, name: $name) {"
        " pullRequest(number: 1) { reviewThreads(first: 10) { nodes { isOutdated } } } } }",
        {"owner": OWNER, "name": NAME},
    )
    assert [n["isOutdated"] for n in outdated["data"]["repository"]["pullRequest"]["reviewThreads"]["nodes"]] == [
        True,
        False,
    ]


def test_pull_requests_are_created_listed_updated_closed_and_reopened(world, api):
    pull = open_pull(world, api)
    assert (pull["number"], pull["state"], pull["user"]["login"], pull["created_at"]) == (
        1,
        "open",
        "loop-owner",
        world.clock.iso(),
    )
    assert pull["head"]["sha"] == world.repository(OWNER, NAME).tip("feature/x")
    assert pull["base"]["sha"] == world.repository(OWNER, NAME).tip("main")
    assert (
        api("POST", f"{REPO}/pulls", {"head": "feature/x", "base": "main"})[0] == 422
    )  # one open PR per head and base
    assert api("POST", f"{REPO}/pulls", {"head": "no-such-branch", "base": "main"})[0] == 422

    world.clock.advance(60)
    status, edited, _ = api("PATCH", f"{REPO}/pulls/1", {"title": "Fix the greeting", "state": "closed"})
    assert status == 200 and edited["title"] == "Fix the greeting" and edited["state"] == "closed"
    assert edited["closed_at"] == edited["updated_at"] == world.clock.iso() != pull["created_at"]
    assert api("GET", f"{REPO}/pulls")[1] == []
    assert [p["number"] for p in api("GET", f"{REPO}/pulls?state=closed")[1]] == [1]

    assert api("PATCH", f"{REPO}/pulls/1", {"state": "open"})[1]["state"] == "open"
    assert [p["number"] for p in api("GET", f"{REPO}/pulls?head=octo-org:feature/x")[1]] == [1]
    assert api("GET", f"{REPO}/pulls?head=octo-org:other")[1] == []


def test_merge_checks_the_head_and_writes_a_merge_commit(world, api):
    pull = open_pull(world, api)
    base_before = world.repository(OWNER, NAME).tip("main")

    status, error, _ = api("PUT", f"{REPO}/pulls/1/merge", {"sha": "0" * 40})
    assert status == 409 and "Head branch was modified" in error["message"]

    world.clock.advance(120)
    status, merged, _ = api("PUT", f"{REPO}/pulls/1/merge", {"sha": pull["head"]["sha"]})
    assert status == 200 and merged["merged"] is True
    bare = world.repository(OWNER, NAME).bare
    assert bare.ref("main") == merged["sha"]
    parents = bare.git("rev-list", "--parents", "-n", "1", merged["sha"]).split()[1:]
    assert parents == [base_before, pull["head"]["sha"]]
    assert bare.git("show", f"{merged['sha']}:src/app.py") == "print('hello')"
    _, after, _ = api("GET", f"{REPO}/pulls/1")
    assert (after["state"], after["merged"], after["merged_at"], after["merge_commit_sha"]) == (
        "closed",
        True,
        world.clock.iso(),
        merged["sha"],
    )
    assert api("PUT", f"{REPO}/pulls/1/merge", {})[0] == 405
    assert api("GET", f"{REPO}/pulls/1/merge")[0] == 204

    assert api("DELETE", f"{REPO}/git/refs/heads/feature/x")[0] == 204  # the head branch, deleted after the merge
    assert bare.ref("feature/x") is None and api("GET", f"{REPO}/git/ref/heads/feature/x")[0] == 404
    assert api("GET", f"{REPO}/pulls/1")[1]["head"]["sha"] == pull["head"]["sha"]  # a merged PR keeps its head


@pytest.mark.parametrize("packed", [False, True], ids=["loose-refs", "packed-refs"])
def test_a_deleted_branch_is_gone_even_when_a_pinned_tip_shadowed_a_packed_one(world, api, packed):
    """A branch pinned to a commit git does not hold, over a tip in packed-refs, is deleted whole."""
    open_pull(world, api)
    bare = world.repository(OWNER, NAME).bare
    if packed:
        bare.git("pack-refs", "--all")
    bare.pin_ref("feature/x", "ab" * 20)
    assert bare.ref("feature/x") == "ab" * 20
    assert api("DELETE", f"{REPO}/git/refs/heads/feature/x")[0] == 204
    assert bare.ref("feature/x") is None and "feature/x" not in bare.branches()
    assert api("GET", f"{REPO}/git/ref/heads/feature/x")[0] == 404
    assert api("DELETE", f"{REPO}/git/refs/heads/feature/x")[0] == 422


def test_issue_comments_are_created_edited_and_deleted_on_the_clock(world, api):
    open_pull(world, api)
    status, comment, _ = api("POST", f"{REPO}/issues/1/comments", {"body": "@codex review"})
    assert (
        status == 201
        and comment["user"]["id"] == USERS["loop_owner"]["id"]
        and comment["created_at"] == world.clock.iso()
    )
    _, by_reviewer, _ = api("POST", f"{REPO}/issues/1/comments", {"body": "LGTM"}, token=OTHER_TOKEN)
    assert by_reviewer["user"]["login"] == "human-reviewer"

    world.clock.advance(300)
    status, edited, _ = api("PATCH", f"{REPO}/issues/comments/{comment['id']}", {"body": "@codex review please"})
    assert status == 200 and edited["updated_at"] == world.clock.iso() != edited["created_at"]
    assert api("GET", f"{REPO}/issues/comments/{comment['id']}")[1]["body"] == "@codex review please"

    assert api("DELETE", f"{REPO}/issues/comments/{comment['id']}")[0] == 204
    assert api("GET", f"{REPO}/issues/comments/{comment['id']}")[0] == 404
    assert [c["body"] for c in api("GET", f"{REPO}/issues/1/comments")[1]] == ["LGTM"]
    assert api("POST", f"{REPO}/issues/1/comments", {})[0] == 422
    assert api("POST", f"{REPO}/issues/99/comments", {"body": "x"})[0] == 404


def test_reactions_are_unique_per_account_and_content(world, api):
    open_pull(world, api)
    first = api("POST", f"{REPO}/issues/1/reactions", {"content": "+1"})
    again = api("POST", f"{REPO}/issues/1/reactions", {"content": "+1"})
    other = api("POST", f"{REPO}/issues/1/reactions", {"content": "+1"}, token=OTHER_TOKEN)
    assert (first[0], again[0], other[0]) == (201, 200, 201)
    assert first[1]["id"] == again[1]["id"] != other[1]["id"]
    assert api("POST", f"{REPO}/issues/1/reactions", {"content": "thumbs"})[0] == 422
    _, comment, _ = api("POST", f"{REPO}/issues/1/comments", {"body": "hi"})
    assert api("POST", f"{REPO}/issues/comments/{comment['id']}/reactions", {"content": "eyes"})[0] == 201
    assert [r["content"] for r in api("GET", f"{REPO}/issues/comments/{comment['id']}/reactions")[1]] == ["eyes"]
    assert len(api("GET", f"{REPO}/issues/1/reactions")[1]) == 2


def test_review_comments_open_threads_that_replies_and_mutations_change(world, api):
    pull = open_pull(world, api)
    status, review, _ = api(
        "POST",
        f"{REPO}/pulls/1/reviews",
        {
            "event": "COMMENT",
            "body": "Two things",
            "comments": [
                {"path": "src/app.py", "line": 1, "body": "Typo"},
                {"path": "README.md", "line": 1, "body": "Title"},
            ],
        },
        token=OTHER_TOKEN,
    )
    assert status == 200 and review["state"] == "COMMENTED" and review["commit_id"] == pull["head"]["sha"]
    comments = api("GET", f"{REPO}/pulls/1/comments")[1]
    assert [c["body"] for c in comments] == ["Typo", "Title"] and {c["pull_request_review_id"] for c in comments} == {
        review["id"]
    }

    world.clock.advance(30)
    status, reply, _ = api("POST", f"{REPO}/pulls/1/comments/{comments[0]['id']}/replies", {"body": "Fixed."})
    assert status == 201 and reply["in_reply_to_id"] == comments[0]["id"] and reply["created_at"] == world.clock.iso()

    data = api.graphql(THREADS, {"owner": OWNER, "name": NAME, "number": 1})["data"]
    threads = data["repository"]["pullRequest"]["reviewThreads"]
    assert threads["totalCount"] == 2
    first = threads["nodes"][0]
    assert (first["path"], first["line"], first["isResolved"]) == ("src/app.py", 1, False)
    assert [c["body"] for c in first["comments"]["nodes"]] == ["Typo", "Fixed."]
    assert first["comments"]["nodes"][0]["author"] == {
        "login": "human-reviewer",
        "databaseId": USERS["human_reviewer"]["id"],
    }

    resolved = api.graphql(
        "mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { id isResolved } } }",
        {"id": first["id"]},
    )
    assert resolved["data"]["resolveReviewThread"]["thread"] == {"id": first["id"], "isResolved": True}
    again = api.graphql(THREADS, {"owner": OWNER, "name": NAME, "number": 1})["data"]
    assert [t["isResolved"] for t in again["repository"]["pullRequest"]["reviewThreads"]["nodes"]] == [True, False]

    missing = api.graphql('mutation { resolveReviewThread(input: {threadId: "PRRT_nope"}) { thread { id } } }')
    assert missing["errors"][0]["type"] == "NOT_FOUND" and missing["data"] == {"resolveReviewThread": None}


def test_a_draft_is_marked_ready_through_graphql(world, api):
    pull = open_pull(world, api, draft=True)
    assert pull["draft"] is True
    answer = api.graphql(
        "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id})"
        " { pullRequest { number isDraft } } }",
        {"id": pull["node_id"]},
    )
    assert answer["data"]["markPullRequestReadyForReview"]["pullRequest"] == {"number": 1, "isDraft": False}
    assert api("GET", f"{REPO}/pulls/1")[1]["draft"] is False


def test_graphql_rejects_what_the_schema_does_not_have_and_names_missing_things(world, api):
    unknown = api.graphql("query { viewer { login } }")
    assert "data" not in unknown and "viewer" in unknown["errors"][0]["message"]
    missing = api.graphql('query { rateLimit { cost } repository(owner: "octo-org", name: "nope") { id } }')
    assert missing["data"]["repository"] is None and missing["errors"][0]["type"] == "NOT_FOUND"
    assert missing["errors"][0]["path"] == ["repository"]


def test_check_runs_and_statuses_bind_to_a_commit(world, api):
    pull = open_pull(world, api)
    head = pull["head"]["sha"]
    assert (
        api(
            "POST",
            f"{REPO}/check-runs",
            {"name": "ci/test", "head_sha": head, "status": "completed", "conclusion": "success"},
        )[0]
        == 201
    )
    assert api("POST", f"{REPO}/check-runs", {"name": "ci/lint", "head_sha": head, "status": "completed"})[0] == 422
    assert api("POST", f"{REPO}/statuses/{head}", {"state": "pending", "context": "deploy"})[0] == 201
    assert api("POST", f"{REPO}/statuses/{head}", {"state": "success", "context": "deploy"})[0] == 201

    runs = api("GET", f"{REPO}/commits/{head}/check-runs")[1]
    assert runs["total_count"] == 1 and runs["check_runs"][0]["name"] == "ci/test"
    combined = api("GET", f"{REPO}/commits/feature/x/status")[1]
    assert (combined["state"], combined["sha"], [s["state"] for s in combined["statuses"]]) == (
        "success",
        head,
        ["success"],
    )
    assert api("GET", f"{REPO}/commits/{'0' * 40}/status")[1]["total_count"] == 0


def test_branch_protection_is_served_or_refused(world, api):
    world.repository(OWNER, NAME).admins.add(USERS["loop_owner"]["login"])
    assert api("GET", f"{REPO}/branches/main/protection")[0] == 404
    assert api("GET", f"{REPO}/branches/main")[1]["protected"] is False
    world.set_protection(
        OWNER, NAME, "main", {"url": "x", "required_status_checks": {"contexts": ["ci/test"], "strict": True}}
    )
    branch = api("GET", f"{REPO}/branches/main")[1]
    assert branch["protected"] is True and branch["protection"]["required_status_checks"]["contexts"] == ["ci/test"]
    assert api("GET", f"{REPO}/branches/main/protection")[0] == 200
    world.set_protection(OWNER, NAME, "main", 403)
    assert api("GET", f"{REPO}/branches/main/protection")[0] == 403


def test_classic_protection_is_read_with_admin_rights_only(world, api):
    """As on GitHub: readers without admin rights see that the branch is protected, never the rules."""
    world.set_protection(OWNER, NAME, "main", {"url": "x", "lock_branch": {"enabled": True}})
    assert api("GET", f"{REPO}/branches/main", token=OTHER_TOKEN)[1]["protected"] is True
    # A personal token whose account has no admin role: 404, as for a branch that does not exist.
    status, body, _ = api("GET", f"{REPO}/branches/main/protection", token=OTHER_TOKEN)
    assert (status, body["message"]) == (404, "Not Found")
    world.repository(OWNER, NAME).admins.add(USERS["human_reviewer"]["login"])
    assert api("GET", f"{REPO}/branches/main/protection", token=OTHER_TOKEN)[1]["lock_branch"] == {"enabled": True}
    # A token with a permission list needs "administration", whatever its account's role.
    fine_grained, app = "github_pat_simulatorNoAdministration0000", "ghs_simulatorInstallationNoAdmin00000"
    for token in (fine_grained, app):
        world.add_token(token, USERS["human_reviewer"]["login"], permissions={"contents": "write", "metadata": "read"})
    status, body, _ = api("GET", f"{REPO}/branches/main/protection", token=fine_grained)
    assert (status, body["message"]) == (403, "Resource not accessible by personal access token")
    status, body, _ = api("GET", f"{REPO}/branches/main/protection", token=app)
    assert (status, body["message"]) == (403, "Resource not accessible by integration")
    world.token_permissions[app]["administration"] = "read"
    assert api("GET", f"{REPO}/branches/main/protection", token=app)[0] == 200
    # The rulesets that apply to a branch are readable with read access.
    assert api("GET", f"{REPO}/rules/branches/main", token=fine_grained)[0] == 200


def test_etags_and_rate_limits_are_per_token_in_simulated_time(world, api):
    open_pull(world, api)
    status, _, headers = api("GET", f"{REPO}/pulls/1")
    used = int(headers["X-RateLimit-Used"])
    assert status == 200 and headers["X-RateLimit-Resource"] == "core"
    assert int(headers["X-RateLimit-Reset"]) == world.clock.epoch_seconds() + 3600

    status, body, again = api("GET", f"{REPO}/pulls/1", headers={"If-None-Match": headers["ETag"]})
    assert (status, body, again["X-RateLimit-Used"]) == (304, None, str(used))  # a 304 costs nothing
    world.clock.advance(1)
    api("POST", f"{REPO}/issues/1/comments", {"body": "changed"})
    assert (
        api("GET", f"{REPO}/pulls/1", headers={"If-None-Match": headers["ETag"]})[0] == 200
    )  # the comment count moved

    assert api("GET", "/user", token=OTHER_TOKEN)[2]["X-RateLimit-Used"] == "1"  # another token, another window
    world.rate_window(TOKEN).used = world.rate_window(TOKEN).limit
    status, error, limited = api("GET", "/user")
    assert status == 403 and limited["X-RateLimit-Remaining"] == "0" and "rate limit exceeded" in error["message"]
    world.clock.advance(3600)
    assert api("GET", "/user")[0] == 200  # a new window


def test_lists_page_with_links_and_bad_credentials_are_refused(world, api):
    open_pull(world, api)
    for index in range(5):
        world.add_issue_comment(OWNER, NAME, 1, "drive-by", f"comment {index}")
    status, page, headers = api("GET", f"{REPO}/issues/1/comments?per_page=2&page=2")
    assert [c["body"] for c in page] == ["comment 2", "comment 3"]
    assert 'page=3>; rel="next"' in headers["Link"] and 'page=1>; rel="prev"' in headers["Link"]
    assert api("GET", f"{REPO}/issues/1/comments?per_page=2&page=9")[1] == []
    assert api("GET", "/user", token="ghp_unknown")[0] == 401
    assert api("GET", f"/repos/{OWNER}/nope/pulls")[0] == 404


def test_the_observer_reads_a_world_built_through_the_api(world, api):
    """The real collector's GitHub observer, over HTTP, against a PR opened and reviewed through the API."""
    open_pull(world, api)
    api("POST", f"{REPO}/issues/1/comments", {"body": "@codex review"})
    api(
        "POST",
        f"{REPO}/pulls/1/reviews",
        {"event": "COMMENT", "body": "b", "comments": [{"path": "src/app.py", "line": 1, "body": "x"}]},
        token=OTHER_TOKEN,
    )
    server = Server(world).start()
    try:
        client = GitHubClient(
            f"{OWNER}/{NAME}",
            host=server.url,
            token=TOKEN,
            use_cache=False,
            environ={},
            sleep=lambda _: None,
            clock=world.clock.epoch_seconds,
        )
        document = observe_pull_request(client, f"{OWNER}/{NAME}", 1, "0" * 32)
        client.close()
    finally:
        server.stop()
    assert (
        document["pull_request"]["head_sha"]
        == document["head_tip_sha"]
        == world.repository(OWNER, NAME).tip("feature/x")
    )
    assert document["base_tip_sha"] == world.repository(OWNER, NAME).tip("main")
    assert len(document["threads"]) == 1 and document["threads"][0]["thread"]["content_version_at"] == iso(
        world.clock.now
    )


def test_a_graphql_query_costs_its_connections_requests_and_points_are_counted_across_windows(world, api):
    open_pull(world, api)
    variables = {"owner": OWNER, "name": NAME, "number": 1}
    # 1 request for the threads, 100 for their comments: 101 / 100 rounds to 1, reported and charged.
    assert api.graphql(THREADS, variables)["data"]["rateLimit"]["cost"] == 1
    assert world.rate_window(TOKEN, "graphql").used == 1
    wide = """query($n: Int) { a: repository(owner: "o", name: "x") { ...pulls } }
      fragment pulls on Repository { pullRequests(first: $n) { nodes {
        reviewThreads(first: 100) { nodes { comments(last: 50) { totalCount } } } } } }"""
    # 1 + 100 + 100 * 100 requests: 10101 / 100 rounds to 101; a body that does not parse costs 1.
    assert graphql_api.query_cost({"query": wide, "variables": {"n": 100}}) == 101
    assert graphql_api.query_cost({"query": wide, "variables": {"n": 10}}) == 10  # 1 + 10 + 1000 = 1011 -> 10
    assert graphql_api.query_cost({"query": "query {"}) == 1
    api("GET", f"{REPO}/pulls/1")
    api("GET", "/user")
    world.clock.advance(3600)  # a new window: the running totals keep counting
    api("GET", f"{REPO}/pulls/1")
    assert world.rate_window(TOKEN, "core").used == 1
    repository = f"{OWNER}/{NAME}".lower()
    assert world.rate_spent[(TOKEN, "graphql")] == world.rate_spent_on[(repository, "graphql")] == 1
    assert world.rate_spent[(TOKEN, "core")] - world.rate_spent_on[(repository, "core")] == 1  # GET /user
