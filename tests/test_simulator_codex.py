"""The scripted Codex reviewer: answers per round, on the requested head, after
a delay in simulated time, in the forms the observer recognises."""

from __future__ import annotations

from datetime import timedelta

import pytest

from evaluator.checks import run_state
from observe.collect import report_state
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
        ("usage_limit_reached", "usage-limit"),
        ("no_environment", "setup"),
        ("setup_environment", "setup"),
        ("setup_account", "setup"),
        ("workspace_deactivated", "setup"),
        ("error_went_wrong", "error"),
        ("error_not_completed", "error"),
    ],
)
def test_unavailable_replies(world, kind, expected):
    CodexReviewer(world, [kind])
    request(world, 0)
    world.clock.advance(timedelta(minutes=3))
    document = observe(world)
    assert [u["kind"] for u in document["unavailable_replies"]] == [expected]
    assert document["responses"] == [] and document["unrecognized_replies"] == []
    assert classification(world, document) == ["reviewer-unavailable", f"reviewer-unavailable-{expected}"]


def test_the_unavailable_replies_are_served_raw_with_links_and_typographic_quotes(world):
    CodexReviewer(world, ["setup_account", "error_went_wrong"], delay=60)
    request(world, 0)
    world.clock.advance(60)
    request(world, 1)
    world.clock.advance(60)
    bodies = [c["body"] for c in world.repository(OWNER, NAME).issue_comments[1] if c["user"]["id"] == CODEX_BOT["id"]]
    assert "[create a Codex account and connect to github](https://" in bodies[0]
    assert "\u201c@codex review\u201d" in bodies[1]


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


def classification(world: World, document: dict) -> list[str]:
    """What the loop makes of an observation: the report-only classification of the collected state."""
    state = report_state(document, run_id=RUN_ID, observed_at=world.clock.now)
    result = run_state(state, approved_hash=None, now=None)
    assert result["action"] == "report"
    return result["reasons"]


# -- answer variants: a bare +1, findings as a plain PR comment ------------------------------------


def test_a_clean_answer_can_be_a_bare_plus_one_with_no_comment(world):
    codex = CodexReviewer(world, ["clean_reaction"], delay=60)
    asked = request(world, 0)
    world.clock.advance(60)

    document = observe(world)
    assert document["responses"] == [] and document["summary_rows"] == []
    assert [r["id"] for r in document["plus_one_reactions"]] == [str(codex.requests[0].answer_ids[0])]
    assert document["plus_one_reactions"][0]["created_at"] > asked["created_at"]
    assert [c["user"]["login"] for c in world.repository(OWNER, NAME).issue_comments[1]] == ["loop-owner"]
    assert classification(world, document) == ["clean"]


def test_findings_can_arrive_as_a_plain_pr_comment(world):
    CodexReviewer(
        world,
        [{"kind": "findings_comment", "findings": [{"priority": "P2", "path": "src/app.py", "title": "Print once"}]}],
        delay=60,
    )
    asked = request(world, 0)
    world.clock.advance(60)

    document = observe(world)
    assert world.repository(OWNER, NAME).reviews[1] == [] and document["threads"] == []
    [answer] = document["responses"]
    assert (answer["source"], answer["zero_findings_signal"], answer["commit_sha"]) == (
        "issue-comment",
        False,
        head(world),
    )
    assert answer["trigger_request_comment_id"] == asked["id"]
    body = world.repository(OWNER, NAME).issue_comments[1][-1]["body"]
    assert "![P2 Badge]" in body and "Print once" in body and "`src/app.py`" in body
    assert classification(world, document) == ["findings"]  # decisive: it names the requested head


def test_a_findings_comment_that_names_no_commit_is_findings_for_the_requested_head(world):
    CodexReviewer(world, [{"kind": "findings_comment", "names_commit": False}], delay=60)
    request(world, 0)
    world.clock.advance(60)
    world.add_reaction(OWNER, NAME, 1, USERS["codex_as_reactor"], "+1")  # a +1 beside it is not clean

    document = observe(world)
    [answer] = document["responses"]
    assert (answer["zero_findings_signal"], answer["commit_sha"]) == (False, None)
    assert classification(world, document) == ["findings"]


def test_findings_as_plain_comments_link_their_line_at_the_requested_head(world):
    findings = [{"priority": "P2", "path": "src/app.py", "line": 1}, {"priority": "P1", "path": "README.md"}]
    CodexReviewer(world, [{"kind": "findings_plain", "findings": findings}], delay=60)
    request(world, 0)
    world.clock.advance(60)

    document = observe(world)
    assert world.repository(OWNER, NAME).reviews[1] == [] and document["threads"] == []
    assert [(r["source"], r["commit_sha"], r["zero_findings_signal"]) for r in document["responses"]] == [
        ("issue-comment", head(world), False)
    ] * 2
    body = world.repository(OWNER, NAME).issue_comments[1][-2]["body"]
    assert f"/blob/{head(world)}/src/app.py#L1" in body and "**Reviewed commit:**" not in body
    assert classification(world, document) == ["findings"]


@pytest.mark.parametrize("closer", ["Swish!", "Keep it up!", "Breezy!"])
def test_the_one_line_clean_names_no_commit_and_is_clean_while_the_head_stands(world, closer):
    CodexReviewer(world, [{"kind": "clean_one_line", "closer": closer}], delay=60)
    request(world, 0)
    world.clock.advance(60)

    document = observe(world)
    [answer] = document["responses"]
    assert (answer["zero_findings_signal"], answer["commit_sha"]) == (True, None)
    assert document["plus_one_reactions"] == []
    assert classification(world, document) == ["clean"]


def test_a_reply_in_words_never_seen_is_unrecognised_and_never_clean(world):
    CodexReviewer(world, [{"kind": "says", "body": "Codex Review: all good here, I think."}], delay=60)
    request(world, 0)
    world.clock.advance(60)
    world.add_reaction(OWNER, NAME, 1, USERS["codex_as_reactor"], "+1")

    document = observe(world)
    [reply] = document["unrecognized_replies"]
    assert reply["excerpt"] == "Codex Review: all good here, I think."
    assert classification(world, document) == ["reviewer-reply-unrecognized"]


def test_a_completed_row_shown_before_its_review_never_finalizes_within_a_heartbeat(world):
    # GitHub's race: the row turns Completed, the review with the finding is served 90 s later.
    codex = CodexReviewer(world, [{"kind": "findings", "completed_first": 90}], delay=60, summary=True)
    request(world, 0)
    world.clock.advance(60)

    document = observe(world)  # the row says Completed; the review does not exist yet
    assert [row["status"] for row in document["summary_rows"]] == ["completed"]
    assert document["responses"] == [] and world.repository(OWNER, NAME).reviews[1] == []
    assert classification(world, document) == ["review-settling"]
    world.clock.advance(60)
    assert classification(world, observe(world)) == ["review-settling"]  # a minute later: still no review

    world.clock.advance(30)  # the review is served from its own time on
    document = observe(world)
    [review] = [r for r in document["responses"] if r["source"] == "review"]
    assert review["created_at"] == world.clock.iso() and review["id"] == str(codex.requests[0].answer_ids[0])
    assert classification(world, document) == ["findings"]


def test_a_completed_row_with_no_review_counts_once_it_has_stood_a_heartbeat(world):
    CodexReviewer(world, ["clean_one_line"], delay=60, summary=True)
    request(world, 0)
    world.clock.advance(60)
    document = observe(world)
    world.repository(OWNER, NAME).issue_comments[1][:] = [  # leave only the request and the summary
        c for c in world.repository(OWNER, NAME).issue_comments[1] if "Didn" not in c["body"]
    ]
    assert classification(world, observe(world)) == ["review-settling"]
    world.clock.advance(120)
    assert classification(world, observe(world)) == ["clean"]
    assert document["summary_rows"][0]["status"] == "completed"


# -- auto-review when a draft is marked ready for review --------------------------------------------


@pytest.fixture
def draft(tmp_path):
    created = make_world(tmp_path)
    created.commit(OWNER, NAME, "feature/x", {"src/app.py": "print('hello')\n"}, "Fix")
    created.open_pull_request(OWNER, NAME, head="feature/x", title="Fix", draft=True)
    yield created
    created.close()


@pytest.mark.parametrize(
    "entry, expected",
    [("findings", "review"), ("findings_comment", "issue-comment"), ("clean", "issue-comment")],
)
def test_marking_a_draft_ready_starts_an_auto_review_of_its_head(draft, entry, expected):
    codex = CodexReviewer(draft, ["clean"], on_ready=[entry], delay=120)
    reviewed = head(draft)
    draft.mark_ready_for_review(OWNER, NAME, 1)
    assert [r["content"] for r in draft.repository(OWNER, NAME).issue_reactions[1]] == ["eyes"]
    draft.clock.advance(119)
    assert observe(draft)["responses"] == []
    draft.clock.advance(1)

    document = observe(draft)
    assert [r["source"] for r in document["responses"]][:1] == [expected]
    # A review names its commit; an issue comment's short SHA expands only to a head the loop requested.
    assert {r["commit_sha"] for r in document["responses"]} == {reviewed if expected == "review" else None}
    assert all(r["trigger_request_comment_id"] is None for r in document["responses"])  # nobody asked
    assert all(f"`{reviewed[:10]}`" in c["body"] for c in draft.repository(OWNER, NAME).issue_comments[1])
    assert codex.requests == [] and [(a.trigger, a.kind, a.head_sha) for a in codex.auto_reviews] == [
        ("ready_for_review", entry, reviewed)
    ]


def test_no_auto_review_without_a_draft_or_past_the_script(draft):
    codex = CodexReviewer(draft, [], on_ready=["findings"], delay=60)
    draft.mark_ready_for_review(OWNER, NAME, 1)
    draft.mark_ready_for_review(OWNER, NAME, 1)  # no longer a draft: GitHub sends no event
    draft.clock.advance(600)
    assert len(codex.auto_reviews) == 1 and len(draft.repository(OWNER, NAME).reviews[1]) == 1


def test_without_an_auto_review_script_marking_ready_gets_no_answer(draft):
    codex = CodexReviewer(draft, ["clean"])
    draft.mark_ready_for_review(OWNER, NAME, 1)
    draft.clock.advance(600)
    assert codex.auto_reviews == [] and observe(draft)["responses"] == []


def test_an_auto_review_after_the_loops_request_reads_as_an_answer_to_it(draft):
    """Why a wakeup that still runs counts an auto-review: nothing in it tells it from the requested answer.

    The loop asked and Codex answered clean; then the draft is marked ready and
    the auto-review finds something on the same head. It names the same commit
    and, as the latest request before it, the loop's request: the collected
    state has a finding (references/actions.md, "After the loop finished").
    """
    CodexReviewer(draft, ["clean"], on_ready=["findings"], delay=60)
    asked = request(draft, 0)
    draft.clock.advance(60)
    assert classification(draft, observe(draft)) == ["clean"]

    draft.mark_ready_for_review(OWNER, NAME, 1)
    draft.clock.advance(60)
    document = observe(draft)
    review = next(r for r in document["responses"] if r["source"] == "review")
    assert (review["commit_sha"], review["trigger_request_comment_id"]) == (head(draft), asked["id"])
    assert classification(draft, document) == ["findings"]


def observe_at(world: World, observed_at) -> dict:
    """The observation a wakeup makes at ``observed_at`` (it then also asks whether Codex picked the request up)."""
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
            return observe_pull_request(client, f"{OWNER}/{NAME}", 1, RUN_ID, observed_at)
        finally:
            client.close()
    finally:
        server.stop()


@pytest.mark.parametrize("script, acknowledged", [(["silence"], False), (["stall"], True), (["clean"], True)])
def test_codex_eyes_the_request_it_picks_up_and_a_dropped_request_carries_none(world, script, acknowledged):
    codex = CodexReviewer(world, script, delay=timedelta(minutes=20))  # no answer before the observation
    posted = request(world, 0)
    world.clock.advance(timedelta(minutes=11))
    eyes = [r for r in world.repository(OWNER, NAME).comment_reactions.get(posted["id"], []) if r["content"] == "eyes"]
    assert [r["user"]["id"] for r in eyes] == ([CODEX_BOT["id"]] if acknowledged else [])
    assert codex.requests[0].answered_at is None
    observation = observe_at(world, world.clock.now)
    entries = [reply for reply in observation["unavailable_replies"] if reply["kind"] == "unacknowledged"]
    assert entries == (
        []
        if acknowledged
        else [{"id": str(posted["id"]), "created_at": entries[0]["created_at"], "kind": "unacknowledged"}]
    )
