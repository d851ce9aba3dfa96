"""The GitHub observer against a fake GitHub on 127.0.0.1 (simulator/fakegithub.py).

ghapi talks real HTTP to the fake; nothing of ours is mocked. Each scenario
builds PR state from recorded payload shapes (fixtures/github) and checks the
normalized document; each fault must raise GitHubObservationError and never
return a document; no output may contain the token.
"""

from __future__ import annotations

import base64
import json
import os
import re
import stat
from pathlib import Path
from urllib.parse import quote

import pytest

from evaluator.canonical import digest, text_digest
from evaluator.markers import claim_marker, classify_issue_comment, reply_round
from evaluator.policy import MAX_GITHUB_RESPONSE_BYTES
from evaluator.redact import contains_secret
from observe.errors import GITHUB_CODES
from observe.github.client import GitHubClient
from observe.github.codex_signals import parse_summary_rows
from observe.github.errors import GitHubObservationError
from observe.github.pull_request import observe_pull_request
from observe.github.pulls import existing_pull_request
from observe.github.token import resolve_token
from simulator.fakegithub import (
    BODIES,
    OTHER_RUN_ID,
    PR_NUMBER,
    REPOSITORY,
    RUN_ID,
    TOKEN,
    USERS,
    at,
    codex_body,
    fixture,
    request_body,
    sha_for,
)
from simulator.hostile import DrippingServer

CODEX, REACTOR, LOOKALIKE = USERS["codex_bot"], USERS["codex_as_reactor"], USERS["lookalike_bot"]
OWNER_USER, REVIEWER, STRANGER = USERS["loop_owner"], USERS["human_reviewer"], USERS["other_human"]

DOCUMENT_KEYS = {
    "authenticated_user_id",
    "pull_request",
    "base_tip_sha",
    "head_tip_sha",
    "requests",
    "marker_anomalies",
    "claims",
    "responses",
    "unavailable_replies",
    "unrecognized_replies",
    "summary_rows",
    "plus_one_reactions",
    "threads",
    "gates",
    "gate_unknowns",
}
PULL_REQUEST_KEYS = {
    "number",
    "url",
    "state",
    "is_draft",
    "same_repository",
    "repository",
    "base_branch",
    "head_branch",
    "head_sha",
    "title_sha256",
    "body_sha256",
}
RESPONSE_KEYS = {
    "body_sha256",
    "bot_id",
    "bot_type",
    "commit_sha",
    "content_version_at",
    "created_at",
    "id",
    "source",
    "trigger_request_comment_id",
    "zero_findings_signal",
}


_SLEEPS: list[float] = []


@pytest.fixture(scope="module")
def shared_cache(tmp_path_factory):
    """One ETag cache for the module's clients, carried over between tests as between wakeups.

    That is sound because the fake's ETags are digests of the exact body.
    """
    return tmp_path_factory.mktemp("cache")


@pytest.fixture
def sleeps():
    _SLEEPS.clear()
    return _SLEEPS


@pytest.fixture
def client(fake, server, shared_cache, sleeps):
    """A fresh client per test, as each command has: its own channel and its own collection deadline.

    Its clock is the simulation's, which also stamps the rate-limit reset.
    """
    made = GitHubClient(
        REPOSITORY,
        host=server.url,
        token=TOKEN,
        cache_dir=shared_cache,
        timeout=3.0,
        environ={},
        sleep=_SLEEPS.append,
        clock=lambda: server.world.clock.epoch_seconds(),
    )
    yield made
    made.close()


@pytest.fixture
def make_client(fake, tmp_path, sleeps):
    clients = []

    def make(**options):
        options.setdefault("token", TOKEN)
        options.setdefault("cache_dir", tmp_path / "cache")
        options.setdefault("timeout", 3.0)
        options.setdefault("environ", {})
        options.setdefault("sleep", sleeps.append)
        options.setdefault("clock", lambda: fake.world.clock.epoch_seconds())
        client = GitHubClient(REPOSITORY, host=fake.url, **options)
        clients.append(client)
        return client

    yield make
    for client in clients:
        client.close()


def observe(client):
    return observe_pull_request(client, REPOSITORY, PR_NUMBER, RUN_ID)


def assert_token_absent(*values):
    for value in values:
        text = value if isinstance(value, str) else json.dumps(value, default=repr)
        assert TOKEN not in text


# -- scenarios ----------------------------------------------------------------


def test_no_response_yet_gives_the_exact_document_shape(fake, client):
    request = fake.add_request(0, at(10))
    fake.add_issue_comment(STRANGER, "LGTM, waiting for the bot", at(20))

    document = observe(client)

    assert set(document) == DOCUMENT_KEYS
    assert set(document["pull_request"]) == PULL_REQUEST_KEYS
    assert document["authenticated_user_id"] == OWNER_USER["id"]
    assert document["pull_request"] == {
        "number": PR_NUMBER,
        "url": f"https://github.com/{REPOSITORY}/pull/{PR_NUMBER}",
        "state": "open",
        "is_draft": False,
        "same_repository": True,
        "repository": REPOSITORY.lower(),
        "base_branch": "main",
        "head_branch": "feature/loop",
        "head_sha": fake.head_sha,
        "title_sha256": text_digest("Loop: tighten retries"),
        "body_sha256": text_digest("Makes retries bounded."),
    }
    assert document["base_tip_sha"] == fake.base_sha
    assert document["head_tip_sha"] == fake.head_sha
    assert document["requests"] == [
        {
            "comment_id": request["id"],
            "created_at": at(10),
            "round": 0,
            "head_sha": fake.head_sha,
            "body_sha256": text_digest(request["body"]),
        }
    ]
    for key in (
        "marker_anomalies",
        "claims",
        "responses",
        "unavailable_replies",
        "summary_rows",
        "plus_one_reactions",
        "threads",
        "gate_unknowns",
    ):
        assert document[key] == [], key
    assert document["gates"] == {
        "approvals": "pass",
        "branch_protection": "pass",
        "checks": "pass",
        "mergeability": "pass",
    }
    assert_token_absent(document, client.stats)
    # The state binds no list of open PRs, so a wakeup does not ask for one.
    assert fake.requests_to(r"/pulls\?") == [] and fake.requests_to(r"/pulls/7$")


def test_findings_review_and_inline_comments_are_responses(fake, client):
    request = fake.add_request(0, at(10))
    head = fake.head_sha
    review = fake.add_review(CODEX, codex_body("findings_review", head), "COMMENTED", head, at(100))
    # commit_id moves to the newest head; original_commit_id is what the finding was written against.
    p1 = fake.add_review_comment(
        CODEX, BODIES["finding_comment_p1"], head, at(101), commit_id=sha_for("later"), review_id=review["id"]
    )
    p2 = fake.add_review_comment(CODEX, BODIES["finding_comment_p2"], head, at(101), review_id=review["id"])
    thread = fake.add_thread(CODEX, BODIES["finding_comment_p1"], at(101), path="src/retry.py", line=12)
    fake.add_thread(REVIEWER, "Why not a constant?", at(150), resolved=True, line=None)

    document = observe(client)

    responses = document["responses"]
    assert [(r["source"], r["id"]) for r in responses] == [
        ("review", str(review["id"])),
        ("review-comment", str(p1["id"])),
        ("review-comment", str(p2["id"])),
    ]
    assert all(set(r) == RESPONSE_KEYS for r in responses)
    assert {r["commit_sha"] for r in responses} == {head}
    assert {r["trigger_request_comment_id"] for r in responses} == {request["id"]}
    assert not any(r["zero_findings_signal"] for r in responses)
    assert (
        responses[0]["body_sha256"] == text_digest(review["body"])
        and responses[0]["created_at"] == at(100) == responses[0]["content_version_at"]
    )
    assert all(r["bot_id"] == 199175422 and r["bot_type"] == "Bot" for r in responses)
    codex_thread = next(t for t in document["threads"] if t["thread"]["id"] == thread["id"])
    assert codex_thread == {
        "thread": {
            "body_sha256": text_digest(BODIES["finding_comment_p1"]),
            "content_version_at": at(101),
            "id": thread["id"],
            "position_sha256": digest(
                {"diff_side": "RIGHT", "line": 12, "original_line": 12, "path": "src/retry.py", "start_line": None}
            ),
            "root_comment_id": thread["comments"][0]["id"],
        },
        "is_resolved": False,
        "is_outdated": False,
        "root_is_codex": True,
        "addressed_round": None,
        # What the agent is shown: the very body and position the digests above bind.
        "text": {"path": "src/retry.py", "start_line": None, "line": 12, "body": BODIES["finding_comment_p1"]},
    }
    assert [t["root_is_codex"] for t in document["threads"]].count(False) == 1


def test_plus_one_reaction_by_codex_counts_and_look_alikes_do_not(fake, client):
    fake.add_request(0, at(10))
    genuine = fake.add_reaction(REACTOR, "+1", at(60))  # reactions endpoint reports the bot as "User"
    fake.add_reaction(LOOKALIKE, "+1", at(61))
    fake.add_reaction(STRANGER, "+1", at(62))
    fake.add_reaction(REACTOR, "eyes", at(5))

    document = observe(client)

    assert document["plus_one_reactions"] == [{"id": str(genuine["id"]), "created_at": at(60)}]
    assert document["responses"] == []


def test_clean_comment_is_a_zero_findings_response_bound_to_the_requested_head(fake, client):
    old_head = fake.head_sha
    fake.add_request(0, at(10), sha=old_head)
    fake.force_push(sha_for("head-2"))
    second = fake.add_request(1, at(200))
    clean = fake.add_issue_comment(CODEX, codex_body("clean_comment", fake.head_sha), at(260))

    document = observe(client)

    assert document["responses"] == [
        {
            "body_sha256": text_digest(clean["body"]),
            "bot_id": 199175422,
            "bot_type": "Bot",
            "commit_sha": fake.head_sha,  # "**Reviewed commit:** `<sha10>`" expanded against the requests
            "content_version_at": at(260),
            "created_at": at(260),
            "id": str(clean["id"]),
            "source": "issue-comment",
            "trigger_request_comment_id": second["id"],
            "zero_findings_signal": True,
        }
    ]


def test_trigger_is_the_latest_request_strictly_before_the_response_as_instants(fake, client):
    first = fake.add_request(0, at(10))
    # 10:05:00+02:00 is 08:05:00Z: earlier than the first request, though it sorts later as text.
    fake.add_issue_comment(OWNER_USER, request_body(1, fake.head_sha), "2026-10-01T10:05:00+02:00")
    same_instant = fake.add_request(2, at(100))
    response = fake.add_issue_comment(CODEX, codex_body("clean_comment", fake.head_sha), at(100))

    document = observe(client)

    assert document["responses"][0]["id"] == str(response["id"])
    assert document["responses"][0]["trigger_request_comment_id"] == first["id"]
    assert [r["comment_id"] for r in document["requests"]] == sorted(r["comment_id"] for r in document["requests"])
    assert same_instant["id"] in [r["comment_id"] for r in document["requests"]]


@pytest.mark.parametrize(
    "body_name, status",
    [("summary_running", "running"), ("summary_completed", "completed"), ("summary_failed", "failed")],
)
def test_summary_rows_are_read_and_are_not_responses(fake, client, body_name, status):
    fake.add_request(0, at(10))
    summary = fake.add_issue_comment(CODEX, codex_body(body_name, fake.head_sha), at(15), at(300))

    document = observe(client)

    assert document["summary_rows"] == [
        {"comment_id": str(summary["id"]), "status": status, "head_sha": fake.head_sha, "content_version_at": at(300)}
    ]
    assert document["responses"] == []


def test_summary_row_for_an_unrequested_head_has_a_null_sha(fake, client):
    fake.add_request(0, at(10))
    fake.add_issue_comment(CODEX, codex_body("summary_completed", sha_for("never-requested")), at(15))

    assert observe(client)["summary_rows"][0]["head_sha"] is None


def test_summary_parser_keeps_code_review_rows_and_rejects_unknown_statuses():
    sha = sha_for("x")
    assert parse_summary_rows(1, codex_body("summary_with_security_row", sha)) == [("completed", sha[:7])]
    with pytest.raises(GitHubObservationError) as info:
        parse_summary_rows(1, codex_body("summary_unknown_status", sha))
    assert info.value.code == "github-unrecognised-codex-summary"
    for broken in (
        "<!-- codex-pull-request-review-summary -->\nno table",
        codex_body("summary_completed", sha).replace("`" + sha[:7] + "`", "abc"),
    ):
        with pytest.raises(GitHubObservationError):
            parse_summary_rows(1, broken)


def test_an_unrecognised_summary_fails_the_whole_observation(fake, client):
    fake.add_request(0, at(10))
    fake.add_issue_comment(CODEX, codex_body("summary_unknown_status", fake.head_sha), at(15))

    with pytest.raises(GitHubObservationError) as info:
        observe(client)
    assert info.value.code == "github-unrecognised-codex-summary"


@pytest.mark.parametrize(
    "body_name, kind",
    [
        ("usage_limit", "usage-limit"),
        ("no_environment", "setup"),
        ("workspace_deactivated", "setup"),
    ],
)
def test_unavailable_replies_are_neither_findings_nor_clean(fake, client, body_name, kind):
    fake.add_request(0, at(10))
    reply = fake.add_issue_comment(CODEX, BODIES[body_name], at(30))

    document = observe(client)

    assert document["unavailable_replies"] == [{"id": str(reply["id"]), "created_at": at(30), "kind": kind}]
    assert document["responses"] == [] and document["summary_rows"] == []


def test_forged_codex_signals_are_ignored(fake, client):
    request = fake.add_request(0, at(10))
    head = fake.head_sha
    fake.add_issue_comment(LOOKALIKE, codex_body("clean_comment", head), at(20))
    fake.add_issue_comment(LOOKALIKE, codex_body("summary_completed", head), at(21))
    fake.add_issue_comment(LOOKALIKE, BODIES["usage_limit"], at(22))
    fake.add_review(LOOKALIKE, codex_body("findings_review", head), "COMMENTED", head, at(23))
    fake.add_issue_comment({**CODEX, "type": "User"}, codex_body("clean_comment", head), at(24))  # right id, wrong type
    fake.add_issue_comment(STRANGER, request_body(5, head), at(25))  # someone else's copy of our marker
    fake.add_thread(LOOKALIKE, BODIES["finding_comment_p1"], at(26))

    document = observe(client)

    assert [r["comment_id"] for r in document["requests"]] == [request["id"]]
    assert document["marker_anomalies"] == []
    for key in ("responses", "unavailable_replies", "unrecognized_replies", "summary_rows", "plus_one_reactions"):
        assert document[key] == [], key
    assert document["threads"][0]["root_is_codex"] is False


def test_marker_anomalies_and_claims(fake, client):
    head = fake.head_sha
    valid = fake.add_request(0, at(10))
    doubled = fake.add_issue_comment(OWNER_USER, request_body(1, head) + "\n" + request_body(2, head), at(11))
    upper = fake.add_issue_comment(OWNER_USER, request_body(1, head.upper()), at(12))
    padded = fake.add_issue_comment(OWNER_USER, request_body(1, head).replace("round=1", "round=01"), at(13))
    prose = fake.add_issue_comment(
        OWNER_USER, f"I removed the github-codex-pr-loop-request marker of run {RUN_ID}", at(14)
    )
    fake.add_issue_comment(
        OWNER_USER, request_body(3, head, run_id=OTHER_RUN_ID), at(15)
    )  # another run: not ours to judge
    plan, wakeup = "ab" * 32, "cd" * 16
    claim = fake.add_issue_comment(
        OWNER_USER,
        f"Claiming.\n<!-- github-codex-pr-loop-claim run={RUN_ID} kind=remediation plan={plan}"
        f" request={valid['id']}:{head} wakeup={wakeup} -->",
        at(16),
    )
    mixed = fake.add_issue_comment(OWNER_USER, claim["body"] + "\n" + request_body(4, head), at(17))

    document = observe(client)

    assert [r["comment_id"] for r in document["requests"]] == [valid["id"]]
    assert document["marker_anomalies"] == [str(c["id"]) for c in (doubled, upper, padded, prose, mixed)]
    assert document["claims"] == [
        {
            "comment_id": claim["id"],
            "created_at": at(16),
            "kind": "remediation",
            "plan_hash": plan,
            "request_key": f"{valid['id']}:{head}",
            "wakeup_id": wakeup,
        }
    ]


def test_marker_parsing_is_exact():
    sha = sha_for("m")
    assert classify_issue_comment(request_body(12, sha), RUN_ID).kind == "request"
    assert classify_issue_comment(request_body(12, sha).replace(" -->", "  -->"), RUN_ID).kind == "anomaly"
    assert classify_issue_comment("no markers here", RUN_ID).kind == "none"
    assert reply_round(f"Fixed.\n<!-- github-codex-pr-loop-reply run={RUN_ID} round=3 -->", RUN_ID) == 3
    assert (
        reply_round(
            f"<!-- github-codex-pr-loop-reply run={RUN_ID} round=3 -->"
            f"<!-- github-codex-pr-loop-reply run={RUN_ID} round=4 -->",
            RUN_ID,
        )
        is None
    )


def test_edited_comment_changes_content_version_even_with_a_warm_cache(fake, client):
    fake.add_request(0, at(10))
    comment = fake.add_issue_comment(CODEX, codex_body("clean_comment", fake.head_sha), at(60))
    before = observe(client)

    comment.update({"body": comment["body"] + "\n\nEdit: also checked the docs.", "updated_at": at(900)})
    after = observe(client)

    old, new = before["responses"][0], after["responses"][0]
    assert (old["content_version_at"], new["content_version_at"]) == (at(60), at(900))
    assert old["created_at"] == new["created_at"] == at(60)
    assert old["body_sha256"] != new["body_sha256"] == text_digest(comment["body"])


def test_force_push_moves_the_head(fake, client):
    first_head = fake.head_sha
    fake.add_request(0, at(10))
    fake.add_review(CODEX, codex_body("findings_review", first_head), "COMMENTED", first_head, at(100))
    before = observe(client)

    fake.force_push(sha_for("rewritten"))
    after = observe(client)

    assert before["pull_request"]["head_sha"] == before["head_tip_sha"] == first_head
    assert after["pull_request"]["head_sha"] == after["head_tip_sha"] == sha_for("rewritten")
    assert after["responses"][0]["commit_sha"] == first_head  # the review still names what it reviewed


def test_deleted_head_branch_gives_a_null_head_tip(fake, client):
    fake.refs.pop((REPOSITORY.lower(), "feature/loop"))
    assert observe(client)["head_tip_sha"] is None


@pytest.mark.parametrize("merged, expected", [(False, "closed"), (True, "merged")])
def test_closed_and_merged_pull_requests(fake, client, merged, expected):
    fake.pull.update({"state": "closed", "merged": merged, "mergeable": None, "mergeable_state": "unknown"})
    fake.add_open_pull(9, "other", sha_for("other"))

    document = observe(client)

    assert document["pull_request"]["state"] == expected
    assert document["gates"]["mergeability"] == "fail"


def test_the_initial_snapshot_binds_every_open_pull_request(fake, client):
    user_id, open_prs, existing = existing_pull_request(client, REPOSITORY, "feature/loop")
    mine = {
        "number": PR_NUMBER,
        "head_branch": "feature/loop",
        "head_sha": fake.head_sha,
        "base_branch": "main",
        "same_repository": True,
    }
    assert user_id == OWNER_USER["id"] and open_prs == digest([mine])
    assert existing["existing_pr_number"] == PR_NUMBER and existing["existing_pr_same_repository"] is True

    fake.add_open_pull(9, "other", sha_for("other"))
    _, with_other, existing = existing_pull_request(client, REPOSITORY, "feature/loop")
    other = {
        "number": 9,
        "head_branch": "other",
        "head_sha": sha_for("other"),
        "base_branch": "main",
        "same_repository": True,
    }
    assert with_other == digest([mine, other]) and existing["existing_pr_number"] == PR_NUMBER

    fake.force_push(sha_for("rewritten"))
    assert existing_pull_request(client, REPOSITORY, "feature/loop")[1] != with_other


def test_two_open_pull_requests_for_one_head_branch_are_ambiguous(fake, client):
    fake.add_open_pull(9, "feature/loop", sha_for("twin"))
    with pytest.raises(GitHubObservationError) as info:
        existing_pull_request(client, REPOSITORY, "feature/loop")
    assert info.value.code == "github-ambiguous-pull-request" and "2 open pull requests" in info.value.message


def test_fork_pull_request_is_not_same_repository(fake, client):
    fake.pull["head"]["repo"] = None  # a deleted fork

    document = observe(client)

    assert document["pull_request"]["same_repository"] is False
    assert document["head_tip_sha"] is None


def test_250_threads_arrive_over_three_graphql_pages(fake, client):
    fake.add_request(0, at(10))
    for index in range(250):
        root = CODEX if index % 2 == 0 else REVIEWER
        replies = (
            [
                (
                    OWNER_USER,
                    f"Fixed.\n<!-- github-codex-pr-loop-reply run={RUN_ID} round={index % 3} -->",
                    at(500 + index),
                )
            ]
            if index % 5 == 0
            else []
        )
        fake.add_thread(
            root,
            f"finding {index}",
            at(100 + index),
            thread_id=f"PRRT_{index:05d}",
            resolved=index % 7 == 0,
            line=index + 1,
            replies=replies,
        )

    document = observe(client)

    threads = document["threads"]
    assert len(threads) == 250
    assert [t["thread"]["id"] for t in threads] == sorted(f"PRRT_{index:05d}" for index in range(250))
    assert threads[10]["root_is_codex"] and not threads[11]["root_is_codex"]
    assert threads[10]["addressed_round"] == 1 and threads[11]["addressed_round"] is None
    assert threads[7]["is_resolved"] and not threads[8]["is_resolved"]
    assert client.stats["graphql_requests"] == 3 and client.stats["graphql_points"] == 3


def test_long_thread_comments_are_paged_and_only_our_reply_markers_count(fake, client):
    replies = [(REVIEWER, f"comment {index}", at(200 + index)) for index in range(149)]
    replies[20] = (OWNER_USER, f"<!-- github-codex-pr-loop-reply run={RUN_ID} round=1 -->", at(220))
    replies[130] = (OWNER_USER, f"<!-- github-codex-pr-loop-reply run={RUN_ID} round=2 -->", at(330))
    replies[140] = (STRANGER, f"<!-- github-codex-pr-loop-reply run={RUN_ID} round=9 -->", at(340))
    replies[141] = (OWNER_USER, f"<!-- github-codex-pr-loop-reply run={OTHER_RUN_ID} round=8 -->", at(341))
    fake.add_thread(CODEX, BODIES["finding_comment_p1"], at(100), replies=replies, last_edited_at=at(150))

    thread = observe(client)["threads"][0]

    assert thread["addressed_round"] == 2
    assert thread["thread"]["content_version_at"] == at(150)
    assert client.stats["graphql_requests"] == 2


def test_rest_lists_are_read_to_the_last_page(fake, client):
    first = fake.add_request(0, at(1))
    for index in range(240):
        fake.add_issue_comment(STRANGER, f"chatter {index}", at(2 + index))
    last = fake.add_request(1, at(300))

    document = observe(client)

    assert [r["comment_id"] for r in document["requests"]] == [first["id"], last["id"]]
    # Three pages, then the confirming second pass, answered by 304s (no points).
    assert [status for _, _, status in fake.requests_to(r"/issues/7/comments")] == [200, 200, 200, 304, 304, 304]


def test_a_comment_deleted_between_two_pages_hides_no_claim(fake, client):
    """Offset paging shifts the first item of page 2 onto page 1 when a page-1 comment is deleted mid-read."""
    head = fake.head_sha
    request = fake.add_request(0, at(1))
    chatter = [fake.add_issue_comment(STRANGER, f"chatter {index}", at(2 + index)) for index in range(99)]
    plan, key = "ab" * 32, f"{request['id']}:{head}"
    first = fake.add_issue_comment(OWNER_USER, claim_marker(RUN_ID, "remediation", plan, key, "1" * 32), at(200))
    second = fake.add_issue_comment(OWNER_USER, claim_marker(RUN_ID, "remediation", plan, key, "2" * 32), at(201))
    fake.after("GET", r"/issues/7/comments\?per_page=100$", lambda: fake.delete_issue_comment(chatter[0]["id"]))

    claims = observe(client)["claims"]

    assert [claim["comment_id"] for claim in claims] == [first["id"], second["id"]]
    pages = [target for _, target, _ in fake.requests_to(r"/issues/7/comments")]
    assert len(pages) > 2  # the first pass missed the earlier claim; a later pass found it


def test_a_list_that_never_holds_still_fails_closed(fake, client):
    comments(fake, 150)
    extra = [fake.add_issue_comment(STRANGER, f"doomed {index}", at(500 + index)) for index in range(10)]
    for doomed in extra:
        fake.after(
            "GET", r"/issues/7/comments\?per_page=100$", lambda doomed=doomed: fake.delete_issue_comment(doomed["id"])
        )

    with pytest.raises(GitHubObservationError) as info:
        observe(client)

    assert info.value.code == "github-incomplete-pagination"


def test_a_full_last_page_is_fetched_again_rather_than_revalidated(fake, client):
    fake.add_request(0, at(1))
    for index in range(99):
        fake.add_issue_comment(STRANGER, f"chatter {index}", at(2 + index))
    assert observe(client)["responses"] == []

    fake.add_issue_comment(
        CODEX, codex_body("clean_comment", fake.head_sha), at(500)
    )  # the 101st comment: page 1 is unchanged

    assert observe(client)["responses"][0]["zero_findings_signal"] is True


@pytest.mark.parametrize("count", [100, 200])
def test_full_pages_of_an_unchanged_pull_request_spend_no_rest_point(fake, make_client, count):
    fake.add_request(0, at(1))
    for index in range(count - 1):  # with the request: exactly `count` issue comments
        fake.add_issue_comment(STRANGER, f"chatter {index}", at(2 + index % 400))
    for index in range(count):
        fake.add_review_comment(STRANGER, f"note {index}", fake.head_sha, at(2 + index % 400))
    cold = observe(make_client())

    warm_client = make_client()  # the next wakeup: a new process, the same cache
    assert observe(warm_client) == cold
    assert warm_client.stats["rest_points"] == 0
    assert warm_client.stats["rest_not_modified"] == warm_client.stats["rest_requests"]

    # A new comment on a full last page is still seen, on the next wakeup.
    fake.add_issue_comment(CODEX, codex_body("clean_comment", fake.head_sha), at(500))
    assert observe(make_client())["responses"][0]["zero_findings_signal"] is True


def reviews_and_reactions(fake, count):
    """Exactly ``count`` reviews and ``count`` reactions on the pull request, none of them Codex's."""
    fake.add_request(0, at(1))
    for index in range(count):
        fake.add_review(REVIEWER, f"looked at it {index}", "COMMENTED", fake.head_sha, at(2 + index % 400))
        fake.add_reaction(STRANGER, "heart", at(2 + index % 400))


def statuses(fake, list_pattern):
    return [status for _, _, status in fake.requests_to(list_pattern)]


def count_answer(key, total):
    """A GraphQL answer edit: the pull request states ``total`` as its ``key`` count."""
    return lambda payload, _: payload["data"]["repository"]["pullRequest"][key].update(totalCount=total)


@pytest.mark.parametrize("count", [100, 200])
def test_full_pages_of_reviews_and_reactions_spend_no_rest_point(fake, make_client, count):
    reviews_and_reactions(fake, count)
    cold = observe(make_client())

    warm_client = make_client()  # the next wakeup: a new process, the same cache
    assert observe(warm_client) == cold
    assert warm_client.stats["rest_points"] == 0
    assert warm_client.stats["rest_not_modified"] == warm_client.stats["rest_requests"]

    # A review and a reaction added between wakeups raise the counts: the full
    # last pages are fetched again, and both are seen.
    log_before = len(fake.log)
    fake.add_review(CODEX, codex_body("findings_review", fake.head_sha), "COMMENTED", fake.head_sha, at(500))
    fake.add_reaction(REACTOR, "+1", at(501))
    changed_client = make_client()
    document = observe(changed_client)
    assert [response["source"] for response in document["responses"]] == ["review"]
    assert len(document["plus_one_reactions"]) == 1
    last_page = "" if count == 100 else "&page=2"
    fetched = [(target, status) for _, target, status in fake.log[log_before:] if status == 200]
    assert (f"/repos/{REPOSITORY}/pulls/7/reviews?per_page=100{last_page}", 200) in fetched
    assert (f"/repos/{REPOSITORY}/issues/7/reactions?per_page=100{last_page}", 200) in fetched


@pytest.mark.parametrize(("key", "path"), [("reviews", r"/pulls/7/reviews"), ("reactions", r"/issues/7/reactions")])
@pytest.mark.parametrize("stated", [99, 101, 0])
def test_a_count_that_disagrees_with_the_cached_pages_fetches_them_again(fake, make_client, key, path, stated):
    """A count the cached pages do not add up to, smaller or larger, proves nothing: no 304 is trusted."""
    reviews_and_reactions(fake, 100)
    cold = observe(make_client())
    fake.echo("POST", r"^/graphql$", count_answer(key, stated))

    warm_client = make_client()
    assert observe(warm_client) == cold  # the list as it is, read again in full
    assert statuses(fake, path) == [200, 200]
    assert warm_client.stats["rest_points"] == 1


def test_a_review_added_after_it_was_counted_is_seen_by_the_next_wakeup(fake, make_client):
    """Between the count and the list: the list as it was counted (a 304 leaves room for no other), then the new one."""
    reviews_and_reactions(fake, 100)
    cold = observe(make_client())
    fake.after(
        "POST",
        r"^/graphql$",
        lambda: fake.add_review(CODEX, codex_body("findings_review", fake.head_sha), "COMMENTED", fake.head_sha, at(9)),
    )

    assert observe(make_client()) == cold
    assert [response["source"] for response in observe(make_client())["responses"]] == ["review"]


@pytest.mark.parametrize("key", ["reviews", "reactions"])
def test_a_missing_list_count_is_a_shape_error(fake, make_client, key):
    fake.echo("POST", r"^/graphql$", lambda payload, _: payload["data"]["repository"]["pullRequest"].pop(key))

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client())

    assert info.value.code == "github-unexpected-shape"


# -- faults: each raises, never returns a document, never shows the token ----------


def comments(fake, count):
    fake.add_request(0, at(1))
    for index in range(count):
        fake.add_issue_comment(STRANGER, f"chatter {index}", at(2 + index))


FAULTS = {
    "http-500": (lambda fake: fake.fail("GET", r"/pulls/7$", 500, times=99), "github-server-error", [1.0, 2.0, 4.0]),
    # A server that repeats the credential is not retried: each retry would send it again.
    "http-500-echoing-the-token": (
        lambda fake: fake.fail("GET", r"/pulls/7$", 500, times=99, echo_authorization=True),
        "github-credential-echoed",
        [],
    ),
    "http-502": (
        lambda fake: fake.fail("GET", r"/issues/7/comments", 502, times=99),
        "github-server-error",
        [1.0, 2.0, 4.0],
    ),
    "read-timeout": (lambda fake: fake.stall("GET", r"^/user$", 1.0, times=99), "github-timeout", [1.0]),
    "primary-rate-limit": (
        lambda fake: fake.fail(
            "GET",
            r"/reviews",
            403,
            times=99,
            headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(fake.rate_reset)},
            body=b'{"message":"API rate limit exceeded for user ID 4242."}',
        ),
        "github-rate-limited",
        [],  # an hour away is beyond the wait cap: fail now, do not sleep
    ),
    "secondary-429": (
        lambda fake: fake.fail("GET", r"/reactions", 429, times=99, headers={"Retry-After": "7"}),
        "github-rate-limited",
        [7.0, 7.0, 7.0],
    ),
    "truncated-page": (
        lambda fake: (comments(fake, 150), fake.truncate("GET", r"/issues/7/comments\?.*page=2")),
        "github-malformed-json",
        [],
    ),
    "malformed-json": (
        lambda fake: fake.corrupt("GET", r"/pulls/7/reviews", b'[{"id": 1,, }]'),
        "github-malformed-json",
        [],
    ),
    "graphql-errors": (lambda fake: fake.graphql_errors(), "github-graphql-errors", []),
    "missing-page": (
        lambda fake: (comments(fake, 150), fake.fail("GET", r"/issues/7/comments\?.*page=2", 404)),
        "github-incomplete-pagination",
        [],
    ),
    "count-mismatch": (
        lambda fake: (fake.add_check_run("ci"), setattr(fake, "rollup_total_override", 2)),
        "github-incomplete-pagination",
        [],
    ),
    "graphql-cursor-missing": (
        lambda fake: (
            [fake.add_thread(CODEX, "x", at(i)) for i in range(101)],
            setattr(fake, "thread_page_drops_cursor", True),
        ),
        "github-incomplete-pagination",
        [],
    ),
    "next-link-to-another-host": (
        lambda fake: (comments(fake, 150), setattr(fake, "link_host", "http://127.0.0.2:9")),
        "github-incomplete-pagination",
        [],
    ),
    "bad-credentials": (lambda fake: setattr(fake, "token", "ghp_somebodyElse"), "github-unauthorized", []),
}


@pytest.mark.parametrize("name", list(FAULTS))
def test_faults_raise_and_never_return_a_document(fake, client, make_client, sleeps, name):
    inject, code, expected_sleeps = FAULTS[name]
    inject(fake)
    if name == "read-timeout":
        client = make_client(timeout=0.3, max_attempts=2)
    if name == "next-link-to-another-host":
        # From a cold cache: an earlier scenario's page 1 with the same body is
        # revalidated (304) and served with the same-host Link it was stored with.
        client = make_client()

    with pytest.raises(GitHubObservationError) as info:
        observe(client)

    assert info.value.code == code
    assert sleeps == expected_sleeps
    assert_token_absent(str(info.value), repr(info.value), info.value.message, client.stats)


def token_forms_absent(*texts):
    for text in texts:
        assert not contains_secret(text, [TOKEN]), text


ANOTHER_SECRET = "ghs_someOtherCredentialSeenByAProxy000000"


def _in_first(field_name):
    return lambda payload, value: payload[0].update({field_name: value})


# Where a hostile server or proxy can put what it was sent: (request pattern, edit, extra headers).
ECHO_SITES = {
    "head-sha": (r"/pulls/7$", lambda payload, value: payload["head"].update(sha=value), {}),
    "pr-state": (r"/pulls/7$", lambda payload, value: payload.update(state=value), {}),
    "base-repository": (r"/pulls/7$", lambda payload, value: payload["base"]["repo"].update(full_name=value), {}),
    "head-repository": (r"/pulls/7$", lambda payload, value: payload["head"]["repo"].update(full_name=value), {}),
    "ref": (r"/git/ref/heads/main$", lambda payload, value: payload.update(ref=value), {}),
    "timestamp": (r"/issues/7/comments", _in_first("created_at"), {}),
    "content-type": (r"^/user$", lambda payload, value: None, {"Content-Type": "text/plain; {authorization}"}),
}


def _echo(fake, site, value_of):
    pattern, edit, headers = ECHO_SITES[site]
    fake.add_request(0, at(10))
    fake.echo(
        "GET",
        pattern,
        lambda payload, authorization: edit(payload, value_of(authorization)),
        headers={name: text.replace("{authorization}", value_of("{authorization}")) for name, text in headers.items()},
    )


@pytest.mark.parametrize("site", list(ECHO_SITES))
def test_an_echoed_token_is_refused_and_never_repeated(fake, make_client, tmp_path, site):
    _echo(fake, site, lambda authorization: authorization)
    client = make_client()

    with pytest.raises(GitHubObservationError) as info:
        observe(client)

    assert info.value.code == "github-credential-echoed"
    token_forms_absent(str(info.value), repr(info.value))
    cached = b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file()).decode("latin-1")
    token_forms_absent(cached)


@pytest.mark.parametrize("site", list(ECHO_SITES))
def test_messages_describe_server_values_and_never_quote_them(fake, make_client, site):
    """A credential the client cannot recognise (not its own) must not be quoted either."""
    _echo(fake, site, lambda authorization: ANOTHER_SECRET)

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client())

    assert info.value.code in ("github-unexpected-shape", "github-malformed-json")
    assert "ghs_" not in str(info.value) and "someOther" not in str(info.value)


@pytest.mark.parametrize(
    "echo",
    [
        pytest.param(lambda token: "feature/" + token, id="raw-in-a-branch-name"),
        pytest.param(lambda token: quote(token, safe=""), id="url-encoded"),
        pytest.param(
            lambda token: base64.b64encode(f"x-access-token:{token}".encode()).decode(), id="basic-credential"
        ),
        pytest.param(lambda token: base64.b64encode(token.encode()).decode(), id="base64"),
    ],
)
def test_every_encoding_of_the_token_is_recognised(fake, make_client, echo):
    fake.add_request(0, at(10))
    fake.echo(
        "GET",
        r"/pulls/7$",
        lambda payload, authorization: payload["head"].update(ref=echo(authorization.removeprefix("token "))),
    )

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client())

    assert info.value.code == "github-credential-echoed"


def test_a_token_spelled_with_json_escapes_is_recognised(fake, make_client):
    escaped = "".join(f"\\u{ord(character):04x}" for character in TOKEN)
    fake.corrupt("GET", r"^/user$", ('{"id": 1, "login": "' + escaped + '"}').encode())

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client())

    assert info.value.code == "github-credential-echoed"


def test_a_token_echoed_in_an_etag_is_never_cached(fake, make_client, tmp_path):
    fake.add_request(0, at(10))
    fake.echo("GET", r"^/user$", headers={"ETag": 'W/"{authorization}"'})

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client())

    assert info.value.code == "github-credential-echoed"
    assert TOKEN.encode() not in b"".join(path.read_bytes() for path in tmp_path.rglob("*") if path.is_file())


def test_a_transient_502_is_retried(fake, client, sleeps):
    fake.add_request(0, at(1))
    fake.fail("GET", r"/pulls/7$", 502)

    assert observe(client)["requests"]
    assert sleeps == [1.0] and client.stats["retries"] == 1


def test_a_primary_limit_is_waited_out_until_the_reset(fake, make_client, sleeps):
    now = 1_900_000_000
    fake.fail(
        "GET",
        r"^/user$",
        403,
        headers={"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(now + 5)},
        body=b'{"message":"API rate limit exceeded"}',
    )

    observe(make_client(clock=lambda: now))

    assert sleeps == [5.0]


def test_a_stalled_answer_never_reaches_the_next_scenario(fake, make_client):
    fake.stall("GET", r"^/user$", 30.0)
    with pytest.raises(GitHubObservationError) as info:
        make_client(timeout=0.2, max_attempts=1).get("users.get_authenticated")
    assert info.value.code == "github-timeout"

    fake.reset()  # releases the handler still stalling for the previous scenario
    assert fake.wait_idle(10.0)

    assert fake.log == [] and fake.rate_used == 0


# -- deadline and size limits -------------------------------------------------------


def test_an_answer_dripping_a_byte_at_a_time_ends_at_the_deadline(fake, make_client):
    fake.drip("GET", r"^/user$", 0.05)  # every read succeeds; the whole answer would take over a minute

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client(timeout=30.0, deadline_seconds=1.0))

    assert info.value.code == "github-deadline-exceeded"


def test_headers_sent_a_byte_at_a_time_end_at_the_deadline(fake, make_client):
    answer = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + b"X-Slow: " + b"a" * 4000 + b"\r\n\r\n{}"
    front = DrippingServer(answer, 0.05).start()
    try:
        client = GitHubClient(
            REPOSITORY, host=front.url, token=TOKEN, use_cache=False, timeout=30.0, environ={}, deadline_seconds=1.0
        )
        with pytest.raises(GitHubObservationError) as info:
            client.get("users.get_authenticated")
        client.close()
    finally:
        front.stop()

    assert info.value.code == "github-deadline-exceeded"


class SteppedClock:
    """A monotonic clock that only the injected sleep moves: waits are counted, never slept."""

    def __init__(self):
        self.now, self.slept = 1000.0, []

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


def test_retries_and_waits_stop_at_the_deadline(fake, make_client):
    fake.fail("GET", r"^/user$", 429, times=99, headers={"Retry-After": "20"})
    clock = SteppedClock()

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client(max_attempts=10, sleep=clock.sleep, monotonic=clock))

    assert info.value.code == "github-deadline-exceeded" and "github-rate-limited" in info.value.message
    assert clock.slept == [20.0, 20.0]  # a third wait would end exactly at the 60 s deadline


def test_a_wait_longer_than_the_time_left_is_not_slept(fake, make_client, sleeps):
    fake.fail("GET", r"^/user$", 429, times=99, headers={"Retry-After": "60"})

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client())

    assert info.value.code == "github-deadline-exceeded"
    assert sleeps == []


def test_a_gzip_bomb_is_refused_at_the_size_cap(fake, make_client):
    fake.gzip_bomb("GET", r"^/user$", 2 * MAX_GITHUB_RESPONSE_BYTES)

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client())

    assert info.value.code == "github-response-too-large"


def test_a_corrupt_gzip_body_is_malformed_not_a_crash(fake, make_client):
    fake.world.add_fault("GET", r"^/user$", 1, "gzip-bomb", body=b"\x1f\x8b\x08\x00" + b"not deflate data" * 4)

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client())

    assert info.value.code == "github-malformed-json"


def test_an_encoding_we_did_not_offer_is_refused(fake, make_client):
    fake.add_request(0, at(10))
    fake.echo("GET", r"^/user$", headers={"Content-Encoding": "br"})

    with pytest.raises(GitHubObservationError) as info:
        observe(make_client())

    assert info.value.code == "github-malformed-json"


def test_every_error_code_is_kebab_case():
    assert all(code == code.lower() and " " not in code and code.startswith("github-") for code in GITHUB_CODES)
    with pytest.raises(ValueError):
        GitHubObservationError("not-a-code", "x")


# -- ETag cache -------------------------------------------------------------------


def test_an_unchanged_pull_request_is_answered_by_304s(fake, make_client, tmp_path):
    fake.add_request(0, at(10))
    fake.add_review(CODEX, codex_body("findings_review", fake.head_sha), "COMMENTED", fake.head_sha, at(100))
    fake.add_thread(CODEX, BODIES["finding_comment_p1"], at(100))
    fake.add_check_run("ci/test")
    fake.protection = fixture("rest/branch-protection.json")
    fake.rulesets = [
        {"type": "deletion", "ruleset_source_type": "Repository", "ruleset_source": REPOSITORY, "ruleset_id": 1}
    ]
    cold_client = make_client()
    cold = observe(cold_client)
    points_before = fake.rate_used

    warm_client = make_client()  # a later wakeup: a new process, the same cache directory
    warm = observe(warm_client)

    assert warm == cold
    stats = warm_client.stats
    assert (
        stats["rest_points"] == 0
        and stats["rest_not_modified"] == stats["rest_requests"] == cold_client.stats["rest_requests"]
    )
    assert stats["graphql_requests"] == 1
    assert fake.rate_used == points_before  # the server agrees: no primary points spent
    cache_bytes = b"".join(path.read_bytes() for path in (tmp_path / "cache").rglob("*") if path.is_file())
    assert cache_bytes and TOKEN.encode() not in cache_bytes


def test_cache_directories_are_private_whatever_the_umask(fake, make_client, tmp_path):
    fake.add_request(0, at(10))
    base = tmp_path / "xdg"
    previous = os.umask(0)
    try:
        observe(make_client(cache_dir=base / "app"))
    finally:
        os.umask(previous)

    directories = [base, *(path for path in base.rglob("*") if path.is_dir())]
    assert len(directories) > 3
    assert {stat.S_IMODE(path.stat().st_mode) for path in directories} == {0o700}
    assert all(stat.S_IMODE(path.stat().st_mode) & 0o077 == 0 for path in base.rglob("*") if path.is_file())


def test_a_cache_others_can_write_is_not_used(fake, make_client, tmp_path):
    fake.add_request(0, at(10))
    observe(make_client(cache_dir=tmp_path / "app"))
    (tmp_path / "app" / "etag").chmod(0o777)
    entries = sorted(tmp_path.rglob("*.json"))

    warm = make_client(cache_dir=tmp_path / "app")
    observe(warm)

    assert warm.stats["rest_not_modified"] == 0  # no body from a directory anyone could have swapped it in
    assert sorted(tmp_path.rglob("*.json")) == entries


def test_the_cache_is_keyed_by_token_identity(fake, make_client):
    fake.add_request(0, at(10))
    observe(make_client())

    fake.token = "ghp_aDifferentIdentity000000000000000000000"
    other = make_client(token=fake.token)
    observe(other)

    assert other.stats["rest_not_modified"] == 0


# -- token handling ---------------------------------------------------------------


def test_token_sources_in_order():
    environ = {"GH_TOKEN": "from-gh-token", "GITHUB_TOKEN": "from-github-token"}
    assert resolve_token("explicit", environ=environ) == "explicit"
    assert resolve_token(None, environ=environ) == "from-gh-token"
    assert resolve_token(None, environ={"GITHUB_TOKEN": "from-github-token"}) == "from-github-token"
    with pytest.raises(GitHubObservationError) as info:
        resolve_token("two words\n", environ={})
    assert info.value.code == "github-token-missing" and "two words" not in str(info.value)


def write_fake_gh(directory: Path, script: str) -> None:
    gh = directory / "gh"
    gh.write_text("#!/bin/sh\n" + script)
    gh.chmod(gh.stat().st_mode | stat.S_IXUSR)


def test_token_from_the_gh_cli(tmp_path, monkeypatch):
    named = tmp_path / "named"
    named.mkdir()
    write_fake_gh(named, 'test "$4" = "github.com" && echo gho_fromTheCli\n')
    on_path = tmp_path / "on-path"
    on_path.mkdir()
    write_fake_gh(on_path, f'touch "{tmp_path}/path-gh-ran"; echo gho_fromPath\n')
    monkeypatch.setenv("PATH", str(on_path))
    assert resolve_token(None, environ={}, gh_path=str(named / "gh")) == "gho_fromTheCli"

    # Only the named CLI runs: without a path no CLI is asked, and a relative one is refused.
    for gh_path in (None, "gh"):
        with pytest.raises(GitHubObservationError) as info:
            resolve_token(None, environ={}, gh_path=gh_path)
        assert info.value.code == "github-token-missing"
    assert not (tmp_path / "path-gh-ran").exists()

    write_fake_gh(named, "echo 'gho_leakedInStderr' >&2; exit 4\n")
    with pytest.raises(GitHubObservationError) as info:
        resolve_token(None, environ={}, gh_path=str(named / "gh"))
    assert info.value.code == "github-token-missing" and "gho_" not in str(info.value)

    with pytest.raises(GitHubObservationError) as info:
        resolve_token(None, environ={}, gh_path=str(tmp_path / "missing" / "gh"))
    assert info.value.code == "github-token-missing"


def test_ghapi_environment_variables_neither_replace_the_token_nor_print(fake, make_client, monkeypatch, capsys):
    fake.add_request(0, at(10))
    monkeypatch.setenv("GITHUB_JWT_TOKEN", "eyJhbGciOiJSUzI1NiJ9.jwtFromTheEnvironment.sig")
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_notTheResolvedToken")
    monkeypatch.setenv("GHAPI_DEBUG", "1")

    assert observe(make_client())["requests"]  # the fake answers 401 to any other Authorization

    assert capsys.readouterr().out == ""


def test_the_client_reads_the_environment_token_and_never_shows_it(fake, tmp_path):
    fake.add_request(0, at(10))
    client = GitHubClient(
        REPOSITORY, host=fake.url, cache_dir=tmp_path, environ={"GITHUB_TOKEN": TOKEN}, sleep=lambda _: None
    )
    try:
        document = observe(client)
        assert_token_absent(document, client.stats, repr(client))
        assert document["requests"]
    finally:
        client.close()
    assert os.environ.get("NO_PROXY")  # tests never leave loopback


# -- ghapi's operations -----------------------------------------------------------


def _route_pattern(path: str) -> re.Pattern[str]:
    """A route of ghapi's operation table as a pattern of request targets: ``{name}`` is one or more segments."""
    return re.compile("^" + re.sub(r"\\\{\w+\\\}", "[^?]+", re.escape(path)) + r"(\?.*)?$")


def test_every_rest_request_of_an_observation_is_a_get_operation_of_ghapis_table(fake, make_client):
    """The requests of a whole observation match the routes of the reader's ghapi operations, and only those.

    ``channel.sent`` is counted by ghapi's own request callback: a request
    sent past ghapi's transport would leave it behind ``stats["requests"]``.
    """
    from ghapi.core import pspec

    from observe.github.channel import operation_name
    from observe.github.client import READ_OPERATIONS

    comments(fake, 150)  # two pages: the second is GitHub's next link
    fake.add_thread(CODEX, BODIES["finding_comment_p1"], at(100))
    fake.protection = fixture("rest/branch-protection.json")
    client = make_client()

    observe(client)

    table = {operation_name(spec): spec for spec in pspec.ops}
    routes = [_route_pattern(table[name].path) for name in READ_OPERATIONS]
    assert all(table[name].verb == "GET" for name in READ_OPERATIONS)
    rest = [target for method, target, _ in fake.log if not target.startswith("/graphql")]
    assert rest and {method for method, target, _ in fake.log if not target.startswith("/graphql")} == {"GET"}
    assert [target for target in rest if not any(route.match(target) for route in routes)] == []
    assert client.channel.sent == client.stats["requests"] == len(fake.log)


def test_the_readers_operations_are_ghapis_own(fake):
    """Each operation the reader builds is the one a full GhApi(sync=True) has: route, verb and parameters."""
    from ghapi.core import GhApi

    from observe.github.client import READ_OPERATIONS

    owner, repo = REPOSITORY.split("/")
    full = GhApi(owner=owner, repo=repo, sync=True, authenticate=False, gh_host=fake.url)
    client = GitHubClient(REPOSITORY, host=fake.url, token=TOKEN, use_cache=False, environ={})
    try:
        assert isinstance(client.api, GhApi)
        for name in READ_OPERATIONS:
            group, operation = name.rsplit(".", 1)
            theirs, ours = getattr(getattr(full, group), operation), client.api.operation(name)
            assert (ours.verb, ours.path, ours.op_spec.params) == (theirs.verb, theirs.path, theirs.op_spec.params)
            assert ours.__signature__ == theirs.__signature__
        with pytest.raises(TypeError, match="unexpected keyword"):
            client.get("pulls.get", pull_numbr=PR_NUMBER)  # ghapi's signature, not a URL of ours, decides
        with pytest.raises(ValueError):
            client.get("issues.create_comment", issue_number=PR_NUMBER)  # the reader holds no write
        assert fake.log == []
    finally:
        client.close()
