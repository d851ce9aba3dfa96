"""The simulated GitHub answers over HTTP as GitHub does where a client can tell the difference.

Links name the origin the client used (https behind the front), 201 answers
carry ``Location``, a review comment that is no reply has no
``in_reply_to_id``, an exhausted GraphQL window is a 200 with an error of type
``RATE_LIMITED``, a secondary rate limit is a 403/429 with ``retry-after``
(and the World counts GitHub's content and per-minute point limits itself),
and a token without write permission is refused (REST 403, GraphQL
``FORBIDDEN``). Each is read through the real client, and the hands' writer
where a write is refused: both fail closed with a structured code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from act.core.errors import ActError
from act.edge.ghops import GitHubWriter
from observe.github.client import GitHubClient
from observe.github.errors import GitHubObservationError
from observe.network import Network
from simulator.app import GitHubApp, Server, secondary_rate_limit
from simulator.clock import SimClock
from simulator.front import API_HOST, Front, LoopbackServer
from simulator.world import USERS, SecondaryLimits, World
from tests.helpers import examples
from tests.simulation import NAME, OWNER, TOKEN, Api, make_world

REPO = f"/repos/{OWNER}/{NAME}"
RESOLVE = """mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}"""
PULL_STATE = """query($owner: String!, $name: String!, $number: Int!) {
  rateLimit { cost remaining }
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { isDraft } }
}"""
# What a fine-grained token that may read the pull request but write nothing grants.
READ_ONLY = {"pull_requests": "read", "issues": "read", "contents": "read", "metadata": "read"}


@pytest.fixture
def world(tmp_path: Path):
    created = make_world(tmp_path)
    yield created
    created.close()


def open_pull(world: World, *, draft: bool = False) -> int:
    world.commit(OWNER, NAME, "fix", {"src/app.py": "print('hello')\n"}, "Fix the greeting")
    return world.open_pull_request(OWNER, NAME, head="fix", title="Fix", draft=draft)["number"]


@pytest.fixture
def served(world: World):
    """(server, client with an injected sleep, the sleeps it was asked for) on 127.0.0.1."""
    server = Server(world).start()
    sleeps: list[float] = []
    client = GitHubClient(
        f"{OWNER}/{NAME}", host=server.url, token=TOKEN, use_cache=False, sleep=sleeps.append, deadline_seconds=30
    )
    yield server, client, sleeps
    client.close()
    server.stop()


# -- 1. Links behind the HTTPS front ------------------------------------------------------


def test_links_behind_the_https_front_name_https_and_every_page_is_read(world, tmp_path):
    number = open_pull(world)
    for index in range(130):
        world.add_issue_comment(OWNER, NAME, number, USERS["human_reviewer"], f"note {index}")
    upstream = LoopbackServer(GitHubApp(world)).start()
    front = Front({API_HOST: upstream.address}, tmp_path / "front").start()
    network = Network(https_proxy=front.proxy_url, ca_file=str(front.ca_file))
    client = GitHubClient(f"{OWNER}/{NAME}", token=TOKEN, use_cache=False, network=network)
    try:
        first = client.get("issues.list_comments", issue_number=number, per_page=100)
        assert (first.link or "").startswith(f"<https://{API_HOST}{REPO}/issues/{number}/comments?")
        comments = client.get_all("issues.list_comments", issue_number=number)
    finally:
        client.close()
        front.stop()
        upstream.stop()
    assert [c["body"] for c in comments] == [f"note {index}" for index in range(130)]


def test_links_on_plain_http_name_plain_http(world):
    number = open_pull(world)
    for index in range(3):
        world.add_issue_comment(OWNER, NAME, number, USERS["human_reviewer"], f"note {index}")
    status, _, headers = Api(world)("GET", f"{REPO}/issues/{number}/comments?per_page=1")
    assert status == 200 and headers["Link"].startswith("<http://localhost/")  # werkzeug's test client host


# -- 2. Location on 201 ----------------------------------------------------------------------


def test_a_created_resource_is_named_by_location_where_github_sends_it(world):
    api = Api(world)
    world.commit(OWNER, NAME, "fix", {"src/app.py": "print('hello')\n"}, "Fix the greeting")
    status, pull, headers = api("POST", f"{REPO}/pulls", {"title": "Fix", "head": "fix", "base": "main"})
    assert status == 201 and headers["Location"] == pull["url"] == f"https://api.github.com{REPO}/pulls/1"
    status, comment, headers = api("POST", f"{REPO}/issues/1/comments", {"body": "hello"})
    assert status == 201 and headers["Location"] == comment["url"]
    assert comment["url"] == f"https://api.github.com{REPO}/issues/comments/{comment['id']}"
    thread = world.add_review_thread(OWNER, NAME, 1, USERS["codex_bot"], "**P2** finding", path="src/app.py")
    root = thread["comments"][0]["rest"]
    status, reply, headers = api("POST", f"{REPO}/pulls/1/comments/{root['id']}/replies", {"body": "done"})
    assert status == 201 and headers["Location"] == reply["url"]
    sha = pull["head"]["sha"]
    status, commit_status, headers = api("POST", f"{REPO}/statuses/{sha}", {"state": "success", "context": "ci"})
    assert status == 201 and headers["Location"] == f"https://api.github.com{REPO}/statuses/{sha}"
    # GitHub's description lists no Location for a new reaction or check run.
    status, _, headers = api("POST", f"{REPO}/issues/1/reactions", {"content": "+1"})
    assert status == 201 and "Location" not in headers


# -- 3. in_reply_to_id only on replies ----------------------------------------------------------


def test_a_review_comment_that_is_no_reply_has_no_in_reply_to_id(fake):
    fake.add_review_comment(USERS["codex_bot"], "**P2** a finding", fake.head_sha, "2026-10-01T10:00:00Z")
    status, comments, _ = Api(fake.world, fake.token)("GET", "/repos/Octo-Org/widgets/pulls/7/comments")
    assert status == 200 and len(comments) == 1
    assert "in_reply_to_id" not in comments[0]


def test_only_a_reply_carries_in_reply_to_id(world):
    number = open_pull(world)
    thread = world.add_review_thread(OWNER, NAME, number, USERS["codex_bot"], "**P2** finding", path="src/app.py")
    root = thread["comments"][0]["rest"]
    world.reply_to_review_comment(OWNER, NAME, number, root["id"], USERS["loop_owner"], "fixed")
    _, comments, _ = Api(world)("GET", f"{REPO}/pulls/{number}/comments")
    assert ["in_reply_to_id" in c for c in comments] == [False, True]
    assert comments[1]["in_reply_to_id"] == root["id"]


# -- 4. GraphQL rate-limit exhaustion -------------------------------------------------------------


def exhaust(world: World, resource: str) -> None:
    window = world.rate_window(TOKEN, resource)
    window.used = window.limit


def test_an_exhausted_graphql_window_answers_200_with_rate_limited(world):
    number = open_pull(world)
    exhaust(world, "graphql")
    variables = {"owner": OWNER, "name": NAME, "number": number}
    status, answer, headers = Api(world)("POST", "/graphql", {"query": PULL_STATE, "variables": variables})
    assert status == 200 and headers["X-RateLimit-Remaining"] == "0"
    assert answer["data"] is None and [e["type"] for e in answer["errors"]] == ["RATE_LIMITED"]
    assert answer["errors"][0]["message"].startswith("API rate limit exceeded for user ID ")


def test_the_client_fails_closed_on_graphql_rate_limited_without_retrying(world, served):
    _, client, sleeps = served
    number = open_pull(world)
    exhaust(world, "graphql")
    with pytest.raises(GitHubObservationError) as failed:
        client.graphql(PULL_STATE, {"owner": OWNER, "name": NAME, "number": number})
    assert failed.value.code == "github-rate-limited" and "RATE_LIMITED" in failed.value.message
    assert sleeps == [] and client.stats["graphql_requests"] == 1


def test_an_exhausted_rest_window_still_answers_403(world, served):
    _, client, _ = served
    exhaust(world, "core")
    with pytest.raises(GitHubObservationError) as failed:
        client.get("pulls.list")
    assert failed.value.code == "github-rate-limited"


# -- 5. Secondary rate limits ----------------------------------------------------------------------


@pytest.mark.parametrize("status", [403, 429])
def test_a_secondary_limit_answers_with_retry_after_and_githubs_message(world, status):
    secondary_rate_limit(world, "GET", rf"^{REPO}/pulls$", retry_after=30, status=status)
    answered, body, headers = Api(world)("GET", f"{REPO}/pulls")
    assert answered == status and headers["Retry-After"] == "30"
    assert body["message"].startswith("You have exceeded a secondary rate limit.")
    assert headers["X-RateLimit-Remaining"] != "0"  # the primary window is not what ran out
    assert Api(world)("GET", f"{REPO}/pulls")[0] == 200  # consumed: the next answer is normal


@pytest.mark.parametrize("status", [403, 429])
def test_a_read_is_retried_after_retry_after(world, served, status):
    _, client, sleeps = served
    number = open_pull(world)
    secondary_rate_limit(world, "GET", rf"/pulls/{number}$", retry_after=7, status=status)
    assert client.get("pulls.get", pull_number=number).body["number"] == number
    assert sleeps == [7.0] and client.stats["retries"] == 1


def test_a_graphql_read_is_retried_after_retry_after(world, served):
    _, client, sleeps = served
    number = open_pull(world)
    secondary_rate_limit(world, "POST", r"^/graphql$", retry_after=5)
    data = client.graphql(PULL_STATE, {"owner": OWNER, "name": NAME, "number": number})
    assert data["repository"]["pullRequest"]["isDraft"] is False and sleeps == [5.0]


def test_a_read_whose_retry_after_passes_the_deadline_fails_closed_at_once(world):
    server = Server(world).start()
    sleeps: list[float] = []
    client = GitHubClient(
        f"{OWNER}/{NAME}", host=server.url, token=TOKEN, use_cache=False, sleep=sleeps.append, deadline_seconds=20
    )
    secondary_rate_limit(world, "GET", rf"^{REPO}/pulls$", retry_after=45)
    try:
        with pytest.raises(GitHubObservationError) as failed:
            client.get("pulls.list")
    finally:
        client.close()
        server.stop()
    assert failed.value.code == "github-deadline-exceeded" and "github-rate-limited" in failed.value.message
    assert sleeps == []


def test_a_read_whose_retry_after_passes_the_wait_cap_fails_closed(world, served):
    _, client, sleeps = served
    secondary_rate_limit(world, "GET", rf"^{REPO}/pulls$", retry_after=600)
    with pytest.raises(GitHubObservationError) as failed:
        client.get("pulls.list")
    assert failed.value.code == "github-rate-limited" and sleeps == []


def create_comment(api: Api, number: int, body: str) -> tuple[int, Any, dict[str, str]]:
    return api("POST", f"{REPO}/issues/{number}/comments", {"body": body})


def test_more_than_eighty_content_generating_requests_a_minute_are_refused_until_one_leaves(world):
    number = open_pull(world)
    api = Api(world)
    for index in range(80):
        assert create_comment(api, number, f"note {index}")[0] == 201
        if index == 39:
            world.clock.advance(20)  # the first forty leave the minute 20 s before the rest
    status, body, headers = create_comment(api, number, "one too many")
    assert (status, headers["Retry-After"]) == (403, "40")
    assert body["message"].startswith("You have exceeded a secondary rate limit.")
    assert headers["X-RateLimit-Remaining"] != "0"  # the primary window is not what ran out
    assert api("GET", f"{REPO}/pulls/{number}")[0] == 200  # reads are not content-generating
    assert len(world.repository(OWNER, NAME).issue_comments[number]) == 80
    assert world.secondary_refusals == [(TOKEN, "POST", f"{REPO}/issues/{number}/comments")]
    assert world.content_generated == {TOKEN: 80}
    status, _, headers = create_comment(api, number, "still too many")
    assert (status, headers["Retry-After"]) == (403, "40")  # the refusal before was not counted
    world.clock.advance(39)
    assert create_comment(api, number, "a second early")[0] == 403
    world.clock.advance(1)
    assert create_comment(api, number, "in time")[0] == 201


def test_the_hourly_content_limit_counts_an_hour_and_graphql_mutations(world):
    number = open_pull(world)
    world.secondary_limits = SecondaryLimits(content_per_hour=3)
    api = Api(world)
    thread = world.add_review_thread(OWNER, NAME, number, USERS["codex_bot"], "**P2** finding", path="src/app.py")
    assert create_comment(api, number, "first")[0] == 201
    world.clock.advance(100)
    assert "errors" not in api.graphql(RESOLVE, {"threadId": thread["id"]})  # a mutation generates content
    world.clock.advance(100)
    assert api("PATCH", f"{REPO}/pulls/{number}", {"title": "Renamed"})[0] == 200
    world.clock.advance(100)
    status, _, headers = create_comment(api, number, "fourth in the hour")
    assert (status, headers["Retry-After"]) == (403, str(3600 - 300))
    status, _, headers = api("POST", "/graphql", {"query": RESOLVE, "variables": {"threadId": thread["id"]}})
    assert status == 403 and headers["Retry-After"] == str(3600 - 300)
    query = {"query": PULL_STATE, "variables": {"owner": OWNER, "name": NAME, "number": number}}
    assert api("POST", "/graphql", query)[0] == 200  # a query is no content
    world.clock.advance(3600 - 300)
    assert create_comment(api, number, "an hour after the first")[0] == 201


def test_a_read_is_never_refused_by_a_content_limit_nor_a_write_promised_a_time_it_never_fits(world):
    number = open_pull(world)
    api = Api(world)
    for index in range(3):
        assert create_comment(api, number, f"note {index}")[0] == 201
    world.secondary_limits = SecondaryLimits(content_per_minute=1)  # lowered below what was already sent
    assert api("GET", f"{REPO}/pulls/{number}")[0] == 200
    world.secondary_limits = SecondaryLimits(rest_points_per_minute=4)  # a write alone weighs 5
    world.clock.advance(60)
    assert [create_comment(api, number, "never")[2].get("Retry-After") for _ in range(2)] == ["60", "60"]
    world.secondary_limits = None
    assert create_comment(api, number, "unlimited")[0] == 201
    assert world.content_generated == {TOKEN: 4}  # counted with the limits off too


def test_points_a_minute_weigh_a_write_as_five_reads_per_resource(world):
    number = open_pull(world)
    world.secondary_limits = SecondaryLimits(rest_points_per_minute=11, graphql_points_per_minute=1)
    api = Api(world)
    assert create_comment(api, number, "five points")[0] == 201
    assert api("PATCH", f"{REPO}/pulls/{number}", {"title": "ten points"})[0] == 200
    assert api("GET", f"{REPO}/pulls/{number}")[0] == 200  # eleven
    status, _, headers = api("GET", f"{REPO}/pulls/{number}")
    assert (status, headers["Retry-After"]) == (403, "60")
    query = {"query": PULL_STATE, "variables": {"owner": OWNER, "name": NAME, "number": number}}
    assert api("POST", "/graphql", query)[0] == 200  # GraphQL keeps its own count
    assert api("POST", "/graphql", query)[0] == 403


def test_the_reader_waits_out_the_limits_retry_after_on_the_clock_and_reads(world):
    number = open_pull(world)
    world.secondary_limits = SecondaryLimits(rest_points_per_minute=3)
    server = Server(world).start()
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        world.clock.advance(seconds)

    client = GitHubClient(
        f"{OWNER}/{NAME}", host=server.url, token=TOKEN, use_cache=False, sleep=sleep, deadline_seconds=30
    )
    try:
        client.get("pulls.get", pull_number=number)
        client.get("pulls.get", pull_number=number)
        world.clock.advance(55)
        client.get("pulls.get", pull_number=number)
        assert client.get("pulls.get", pull_number=number).body["number"] == number
    finally:
        client.close()
        server.stop()
    assert sleeps == [5.0] and client.stats["retries"] == 1
    assert world.secondary_refusals == [(TOKEN, "GET", f"{REPO}/pulls/{number}")]


def test_a_write_refused_by_the_content_limit_is_uncertain_and_never_resent(world, served):
    _, client, sleeps = served
    number = open_pull(world)
    world.secondary_limits = SecondaryLimits(content_per_minute=0)
    with pytest.raises(ActError) as failed:
        GitHubWriter(client, f"{OWNER}/{NAME}").write("issues.create_comment", issue_number=number, body="hello")
    assert failed.value.code == "github-write-uncertain"
    assert sleeps == [] and client.channel.sent == 1
    assert world.repository(OWNER, NAME).issue_comments.get(number, []) == []


def test_a_write_hitting_a_secondary_limit_is_never_retried(world, served):
    _, client, sleeps = served
    number = open_pull(world)
    secondary_rate_limit(world, "POST", rf"/issues/{number}/comments$", retry_after=1, times=3)
    with pytest.raises(ActError) as failed:
        GitHubWriter(client, f"{OWNER}/{NAME}").write("issues.create_comment", issue_number=number, body="hello")
    assert failed.value.code == "github-write-uncertain"
    assert sleeps == [] and client.channel.sent == 1
    assert world.repository(OWNER, NAME).issue_comments.get(number, []) == []


# -- 6. Token permissions ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("token", "message"),
    [
        ("ghp_readOnlyPersonalToken00000000000000000", "Resource not accessible by personal access token"),
        ("ghs_readOnlyInstallationToken000000000000", "Resource not accessible by integration"),
    ],
)
def test_a_token_without_write_permission_is_refused_as_github_refuses(world, token, message):
    number = open_pull(world, draft=True)
    world.add_token(token, "loop-owner", permissions=READ_ONLY)
    api = Api(world, token)
    assert api("GET", f"{REPO}/pulls/{number}")[0] == 200  # reading is allowed
    status, body, _ = api("POST", f"{REPO}/issues/{number}/comments", {"body": "hello"})
    assert (status, body["message"]) == (403, message)
    assert api("PATCH", f"{REPO}/pulls/{number}", {"title": "Other"})[0] == 403
    assert api("PUT", f"{REPO}/pulls/{number}/merge", {})[0] == 403
    thread = world.add_review_thread(OWNER, NAME, number, USERS["codex_bot"], "**P2** finding", path="src/app.py")
    answer = api.graphql(RESOLVE, {"threadId": thread["id"]})
    assert answer["data"] == {"resolveReviewThread": None}
    assert [(e["type"], e["message"], e["path"]) for e in answer["errors"]] == [
        ("FORBIDDEN", message, ["resolveReviewThread"])
    ]
    assert thread["isResolved"] is False
    pull = world.pull_request(OWNER, NAME, number)
    assert pull["draft"] is True and pull["title"] == "Fix"
    assert not world.repository(OWNER, NAME).issue_comments.get(number)


def test_a_token_with_the_permission_it_needs_may_write(world):
    number = open_pull(world)
    token = "ghs_commentsOnlyInstallationToken00000000"
    world.add_token(token, "loop-owner", permissions={**READ_ONLY, "issues": "write"})
    api = Api(world, token)
    assert api("POST", f"{REPO}/issues/{number}/comments", {"body": "hello"})[0] == 201
    assert api("PATCH", f"{REPO}/pulls/{number}", {"title": "Other"})[0] == 403


@pytest.fixture
def read_only_writer(world: World):
    token = "ghs_readOnlyInstallationToken000000000000"
    world.add_token(token, "loop-owner", permissions=READ_ONLY)
    server = Server(world).start()
    client = GitHubClient(f"{OWNER}/{NAME}", host=server.url, token=token, use_cache=False, sleep=lambda _: None)
    yield GitHubWriter(client, f"{OWNER}/{NAME}"), client
    client.close()
    server.stop()


def test_the_hands_stop_with_write_refused_when_marking_ready_is_forbidden(world, read_only_writer):
    writer, client = read_only_writer
    number = open_pull(world, draft=True)
    with pytest.raises(ActError) as stopped:
        writer.mark_ready(number)
    assert stopped.value.code == "github-write-refused" and "FORBIDDEN" in stopped.value.message
    assert world.pull_request(OWNER, NAME, number)["draft"] is True
    assert [entry for entry in world.log if entry[1] == "/graphql"] == [("POST", "/graphql", 200)]  # never resent


def test_the_hands_stop_with_write_refused_when_resolving_is_forbidden(world, read_only_writer):
    writer, _ = read_only_writer
    number = open_pull(world)
    thread = world.add_review_thread(OWNER, NAME, number, USERS["codex_bot"], "**P2** finding", path="src/app.py")
    with pytest.raises(ActError) as stopped:
        writer.resolve_thread(thread["id"])
    assert stopped.value.code == "github-write-refused" and thread["isResolved"] is False


def test_the_hands_stop_with_write_refused_when_commenting_is_forbidden(world, read_only_writer):
    writer, _ = read_only_writer
    number = open_pull(world)
    user_id = writer.user_id()
    with pytest.raises(ActError) as stopped:
        writer.post_comment_once(number, user_id, "hello <!-- marker -->", "<!-- marker -->", "request-codex-review")
    assert stopped.value.code == "github-write-refused" and "HTTP 403" in stopped.value.message
    assert world.repository(OWNER, NAME).issue_comments.get(number, []) == []


def test_an_unknown_graphql_error_in_a_mutation_stays_uncertain(world, served):
    _, client, _ = served
    world.graphql_errors()
    with pytest.raises(ActError) as failed:
        GitHubWriter(client, f"{OWNER}/{NAME}").graphql_mutation(RESOLVE, {"threadId": "PRRT_missing"})
    assert failed.value.code == "github-write-uncertain"


def test_the_executor_stops_at_a_refused_write_and_a_rerun_stops_there_again(tmp_path, monkeypatch, capsys):
    """A token that may push but not open pull requests: ``execute`` stops at create-pr, exit 1, nothing after."""
    from tests.executor_stack import TOKEN as STACK_TOKEN
    from tests.executor_stack import init_args, start

    stack = start(tmp_path, monkeypatch)
    try:
        made = stack.loop(capsys, *init_args(stack))
        where = ["--state-dir", made["state_dir"]]
        for expected in ("fetch-base", "create-branch", "run-validation", "stage-files", "commit", "push"):
            performed = stack.loop(capsys, "execute", *where, "--one")["performed"]
            assert [p["operation"] for p in performed] == [expected]
            if expected == "fetch-base":  # past the preflight: the token loses a permission mid-run
                stack.world.token_permissions[STACK_TOKEN] = {**READ_ONLY, "contents": "write"}
        for _ in range(2):
            refused = stack.loop(capsys, "execute", *where, status=1)
            assert [e["code"] for e in refused["errors"]] == ["github-write-refused"]
            assert "HTTP 403" in refused["errors"][0]["message"]
        assert stack.pulls() == []
        # The preflight's probes (an empty-bodied write answered 422, creating nothing) left out.
        posts = [e for e in stack.world.log if e[0] in ("POST", "PATCH", "PUT", "DELETE") and e[2] != 422]
        assert posts == [("POST", "/repos/octo-org/gadgets/pulls", 403)] * 2  # one attempt per run, none after
    finally:
        stack.stop()


def test_a_push_with_a_token_that_may_only_read_is_refused_and_the_executor_stops(tmp_path, monkeypatch, capsys):
    """GitHub refuses the push (403) of a token without contents write; ``execute`` stops at push, nothing moves."""
    from tests.executor_stack import TOKEN as STACK_TOKEN
    from tests.executor_stack import init_args, start

    stack = start(tmp_path, monkeypatch)
    try:
        made = stack.loop(capsys, *init_args(stack))
        where = ["--state-dir", made["state_dir"]]
        for expected in ("fetch-base", "create-branch", "run-validation", "stage-files", "commit"):
            performed = stack.loop(capsys, "execute", *where, "--one")["performed"]
            assert [p["operation"] for p in performed] == [expected]
            if expected == "fetch-base":  # past the preflight: the token loses a permission mid-run
                stack.world.token_permissions[STACK_TOKEN] = READ_ONLY
        refused = stack.loop(capsys, "execute", *where, status=1)
        (error,) = refused["errors"]
        assert error["code"] == "git-command-failed" and "returned error: 403" in error["message"]
        assert stack.remote_tip("fix/greeting") is None and stack.pulls() == []
    finally:
        stack.stop()


# One request of a random sequence: seconds to wait before it, REST or GraphQL, content-generating or not.
REQUESTS = st.lists(
    st.tuples(
        st.one_of(st.sampled_from([0, 1, 59, 60]), st.integers(0, 40)),
        st.sampled_from(["core", "graphql"]),
        st.booleans(),
    ),
    min_size=1,
    max_size=60,
)
SMALL = SecondaryLimits(
    content_per_minute=3, content_per_hour=7, rest_points_per_minute=12, graphql_points_per_minute=9
)


def fits(history: list[tuple[int, str, bool]], at: int, resource: str, content: bool) -> bool:
    """Whether one more request fits SMALL at ``at``, by counting the whole history of admitted requests."""

    def total(window: int, weigh: Any) -> int:
        return sum(weigh(r, c) for t, r, c in history if t > at - window) + weigh(resource, content)

    def points(of: str) -> Any:
        return lambda r, c: (5 if c else 1) if r == of else 0

    return (
        total(60, lambda r, c: int(c)) <= SMALL.content_per_minute
        and total(3600, lambda r, c: int(c)) <= SMALL.content_per_hour
        and total(60, points("core")) <= SMALL.rest_points_per_minute
        and total(60, points("graphql")) <= SMALL.graphql_points_per_minute
    )


@settings(max_examples=examples(4))
@given(REQUESTS)
def test_a_refusal_names_exactly_when_the_same_request_would_fit(requests):
    world = World(clock=SimClock())
    world.secondary_limits = SMALL
    history: list[tuple[int, str, bool]] = []
    try:
        for pause, resource, content in requests:
            world.clock.advance(pause)
            now = world.clock.epoch_seconds()
            wait = world.admit("t", resource, content=content)
            assert (wait == 0) == fits(history, now, resource, content)
            if wait:  # the first moment the same request fits, with nothing else sent meanwhile
                assert fits(history, now + wait, resource, content)
                assert not fits(history, now + wait - 1, resource, content)
            else:
                history.append((now, resource, content))
        assert world.content_generated.get("t", 0) == sum(content for _, _, content in history)
    finally:
        world.close()
