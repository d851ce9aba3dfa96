"""The scripted Codex reviewer: answers per round, on the requested head, after
a delay in simulated time, in the forms the observer recognises."""

from __future__ import annotations

from datetime import timedelta

import pytest

from observe.github.client import GitHubClient
from observe.github.pull_request import observe_pull_request
from simulator.app import Server
from simulator.codex import CODEX_BOT, CodexReviewer
from simulator.world import USERS, World
from tests.simulation import NAME, OWNER, TOKEN, make_world

RUN_ID = "0123456789abcdef0123456789abcdef"


def request_body(round_number: int, sha: str) -> str:
    return f"@codex review\n<!-- github-codex-pr-loop-request run={RUN_ID} round={round_number} sha={sha} -->"


@pytest.fixture
def world(tmp_path):
    created = make_world(tmp_path)
    created.commit(OWNER, NAME, "feature/x", {"src/app.py": "print('hello')\n"}, "Fix")
    created.open_pull_request(OWNER, NAME, head="feature/x", title="Fix")
    yield created
    created.close()


def head(world: World) -> str:
    return world.pull_request(OWNER, NAME, 1)["head"]["sha"]


def request(world: World, round_number: int) -> dict:
    return world.add_issue_comment(OWNER, NAME, 1, "loop-owner", request_body(round_number, head(world)))


def observe(world: World) -> dict:
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
        try:
            return observe_pull_request(client, f"{OWNER}/{NAME}", 1, RUN_ID)
        finally:
            client.close()
    finally:
        server.stop()


def test_findings_then_clean_across_two_rounds(world):
    codex = CodexReviewer(
        world,
        [
            {
                "kind": "findings",
                "findings": [
                    {"priority": "P1", "path": "src/app.py", "line": 1},
                    {"priority": "P2", "title": "Name the file"},
                ],
            },
            "clean",
        ],
        delay=timedelta(minutes=4),
    )
    first = request(world, 0)
    reviewed = head(world)
    assert [r["content"] for r in world.repository(OWNER, NAME).comment_reactions[first["id"]]] == ["eyes"]
    world.clock.advance(timedelta(minutes=3, seconds=59))
    assert world.repository(OWNER, NAME).reviews[1] == []  # not before the delay

    world.clock.advance(1)
    review = world.repository(OWNER, NAME).reviews[1][0]
    assert (review["user"]["id"], review["user"]["type"], review["state"], review["commit_id"]) == (
        199175422,
        "Bot",
        "COMMENTED",
        reviewed,
    )
    assert f"**Reviewed commit:** `{reviewed[:10]}`" in review["body"] and review["submitted_at"] == world.clock.iso()
    document = observe(world)
    threads = document["threads"]
    assert len(threads) == 2 and all(t["root_is_codex"] and not t["is_resolved"] for t in threads)
    assert [r["source"] for r in document["responses"]] == ["review", "review-comment", "review-comment"]
    assert {r["trigger_request_comment_id"] for r in document["responses"]} == {first["id"]}
    bodies = [c["body"] for c in world.repository(OWNER, NAME).review_comments[1]]
    assert (
        "![P1 Badge](https://img.shields.io/badge/P1-orange?style=flat)" in bodies[0] and "Name the file" in bodies[1]
    )

    world.commit(OWNER, NAME, "feature/x", {"src/app.py": "print('hello, world')\n"}, "Address the findings")
    second = request(world, 1)
    fixed = head(world)
    assert fixed != reviewed
    world.clock.advance(timedelta(minutes=4))
    document = observe(world)
    clean = [r for r in document["responses"] if r["zero_findings_signal"]]
    assert (
        len(clean) == 1 and clean[0]["commit_sha"] == fixed and clean[0]["trigger_request_comment_id"] == second["id"]
    )
    assert [r["id"] for r in document["plus_one_reactions"]] == [str(codex.requests[1].answer_ids[0])]
    assert [q.kind for q in codex.requests] == ["findings", "clean"]


def test_the_answer_names_the_requested_head_even_after_a_push(world):
    CodexReviewer(world, ["clean"], delay=60)
    request(world, 0)
    requested = head(world)
    world.commit(OWNER, NAME, "feature/x", {"late.txt": "pushed while Codex ran\n"}, "Late push")

    world.clock.advance(60)

    clean = world.repository(OWNER, NAME).issue_comments[1][-1]
    assert (
        clean["user"]["id"] == CODEX_BOT["id"] and f"`{requested[:10]}`" in clean["body"] and head(world) != requested
    )


def test_a_push_after_a_clean_review_removes_the_plus_one(world):
    CodexReviewer(world, ["clean"], delay=60)
    request(world, 0)
    world.clock.advance(60)
    assert [r["content"] for r in world.repository(OWNER, NAME).issue_reactions[1]] == ["+1"]

    world.commit(OWNER, NAME, "feature/x", {"more.txt": "x\n"}, "More")
    world.notice_push(OWNER, NAME)

    assert world.repository(OWNER, NAME).issue_reactions[1] == []


@pytest.mark.parametrize(
    "kind, expected",
    [
        ("unavailable", "usage-limit"),
        ("no_environment", "no-environment"),
        ("workspace_deactivated", "workspace-deactivated"),
    ],
)
def test_unavailable_replies(world, kind, expected):
    CodexReviewer(world, [kind])
    request(world, 0)
    world.clock.advance(timedelta(minutes=3))
    document = observe(world)
    assert [u["kind"] for u in document["unavailable_replies"]] == [expected]
    assert document["responses"] == []


def test_silence_and_an_exhausted_script_answer_nothing(world):
    codex = CodexReviewer(world, ["silence"])
    request(world, 0)
    request(world, 1)  # past the end of the script
    world.clock.advance(timedelta(hours=2))
    comments = world.repository(OWNER, NAME).issue_comments[1]
    assert [c["user"]["login"] for c in comments] == ["loop-owner", "loop-owner"]
    assert world.repository(OWNER, NAME).reviews[1] == [] and world.repository(OWNER, NAME).comment_reactions == {}
    assert [r.kind for r in codex.requests] == ["silence", "silence"] and all(
        r.answered_at is None for r in codex.requests
    )


def test_only_a_review_trigger_is_a_request_and_codex_ignores_itself(world):
    codex = CodexReviewer(world, ["clean", "clean"])
    world.add_issue_comment(OWNER, NAME, 1, "loop-owner", "@codex please fix everything")
    world.add_issue_comment(OWNER, NAME, 1, "loop-owner", "see the @codex review docs")
    world.add_issue_comment(OWNER, NAME, 1, CODEX_BOT, "@codex review")
    assert codex.requests == []
    world.add_issue_comment(OWNER, NAME, 1, USERS["other_human"], "@codex review")  # anyone may ask
    assert len(codex.requests) == 1


def test_the_summary_comment_runs_then_completes_in_place(world):
    CodexReviewer(world, ["clean"], delay=120, summary=True)
    request(world, 0)
    document = observe(world)
    assert [row["status"] for row in document["summary_rows"]] == ["running"]

    world.clock.advance(120)
    document = observe(world)
    assert [(row["status"], row["head_sha"], row["content_version_at"]) for row in document["summary_rows"]] == [
        ("completed", head(world), world.clock.iso())
    ]


def test_an_unknown_script_entry_is_refused(world):
    with pytest.raises(ValueError):
        CodexReviewer(world, ["clean", "lgtm"])
