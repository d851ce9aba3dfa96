"""Every known form of a Codex reply, as GitHub serves it, through one whole wakeup.

One live loop is bootstrapped per module (a real checkout, the simulated
GitHub on 127.0.0.1, a registry folder): the round-0 request is posted at
60 s. Each case then puts one trusted Codex reply on the pull request at
300 s, runs the collector's ``state`` exactly as a wakeup does at 360 s and
the evaluator's ``--state`` on what it printed, and removes the reply again.
The forms and what each must do are fixtures/github/codex/replies.json.
"""

from __future__ import annotations

import contextlib
import io
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from act.build import recurring
from evaluator import codex_text, markers, policy, render
from evaluator.canonical import text_digest
from evaluator.checks import run_prompt, run_state
from evaluator.models.recurring import RecurringState
from observe import cli
from simulator.fakegithub import OWNER, PR_NUMBER, REPO, RUN_ID, TOKEN, USERS, FakeGitHub, at, fixture
from tests import checkout_world
from tests.checkout_world import REPOSITORY, git
from tools import samples

REPLIES = fixture("codex/replies.json")["replies"]
AUTOMATION_ID = "loop-widgets-7"
WAKEUP = "cd" * 16
REPLY_AT, WAKEUP_AT = 300, 360


def body_for(reply: dict[str, Any], head: str) -> str:
    return reply["body"].replace("{sha7}", head[:7]).replace("{sha10}", head[:10]).replace("{sha40}", head)


@dataclass
class Live:
    fake: FakeGitHub
    world: dict[str, Any]
    checkpoint: str
    head: str

    def collect(self, *args: str) -> dict[str, Any]:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = cli.main(["--api-url", self.fake.url, "--gh", str(self.world["gh"]), *args])
        assert status == 0, err.getvalue()
        assert TOKEN not in out.getvalue() + err.getvalue()
        return json.loads(out.getvalue())

    def wakeup(self, observed_at: str = at(WAKEUP_AT)) -> tuple[dict[str, Any], dict[str, Any]]:
        """The collector's state of one wakeup, and the evaluator's verdict on it."""
        state = self.collect(
            "--observed-at",
            observed_at,
            "state",
            "--checkpoint",
            self.checkpoint,
            "--checkout",
            str(self.world["repo"]),
            "--wakeup-id",
            WAKEUP,
            "--registry",
            str(self.world["registry"]),
        )
        return state, run_state(state, approved_hash=None, now=None)

    @contextlib.contextmanager
    def reply(self, source: str, body: str, created_at: str = at(REPLY_AT), user: str = "codex_bot") -> Iterator[str]:
        """One reply on the pull request for the length of the block; its id."""
        if source == "review":
            item = self.fake.add_review(USERS[user], body, "COMMENTED", self.head, created_at)
            items = self.fake.reviews
        else:
            item = self.fake.add_issue_comment(USERS[user], body, created_at)
            items = self.fake.issue_comments
        try:
            yield str(item["id"])
        finally:
            items.remove(item)


def write_automation(world: dict[str, Any], status: str, prompt: str) -> None:
    folder = world["registry"] / AUTOMATION_ID
    folder.mkdir(exist_ok=True)
    key = markers.automation_key(policy.HOST, REPOSITORY, PR_NUMBER, RUN_ID)
    (folder / "automation.toml").write_text(
        f'version = 1\nid = "{AUTOMATION_ID}"\nname = "{key}"\nprompt = {json.dumps(prompt)}\n'
        f'status = "{status}"\nrrule = "RRULE:{policy.HEARTBEAT_RRULE}"\n'
    )


@pytest.fixture(scope="module")
def live(server, tmp_path_factory) -> Iterator[Live]:
    """A reuse-PR loop past bootstrap: the round-0 request at 60 s, the automation ACTIVE."""
    server.reset()
    with pytest.MonkeyPatch.context() as monkeypatch:
        world = checkout_world.build(tmp_path_factory.mktemp("replies"), server, monkeypatch)
        boot = Live(server, world, "", "")
        snapshot = boot.collect("initial", *checkout_world.change_args(world))
        manifest = samples.initial_manifest(snapshot)
        manifest.update(run_id=RUN_ID, review_request_body_template=markers.default_review_template(RUN_ID, 0))
        manifest["review_request_body_template_sha256"] = text_digest(manifest["review_request_body_template"])
        initial = samples.seal_initial(snapshot, manifest)
        repo = world["repo"]
        git(repo, "commit", "-q", "-am", "fix greeting")
        head = git(repo, "rev-parse", "HEAD")
        git(repo, "update-ref", "refs/remotes/origin/feature/loop", head)
        server.force_push(head)
        server.add_request(0, at(60), sha=head)
        write_automation(world, "PAUSED", "inert")
        initial_path = Path(world["tmp"]) / "initial.json"
        initial_path.write_text(json.dumps(initial))
        prompt = boot.collect(
            "--observed-at",
            at(90),
            "prompt",
            "--initial",
            str(initial_path),
            "--pr",
            str(PR_NUMBER),
            "--automation-id",
            AUTOMATION_ID,
            "--checkout",
            str(repo),
            "--registry",
            str(world["registry"]),
        )
        ready = run_prompt(prompt)
        assert ready["ok"] is True, ready
        write_automation(world, "ACTIVE", ready["rendered_prompt"])
        checkpoint = Path(world["tmp"]) / "prompt.json"
        checkpoint.write_text(json.dumps(prompt))
        yield Live(server, world, str(checkpoint), head)


def test_with_no_reply_the_loop_waits(live):
    _, result = live.wakeup()
    assert (result["action"], result["reasons"]) == ("wait", ["awaiting-codex-response"])


@pytest.mark.parametrize("reply", REPLIES, ids=[reply["name"] for reply in REPLIES])
def test_each_reply_form_is_read_and_decided_in_one_wakeup(live, reply):
    body = body_for(reply, live.head)
    with live.reply(reply["source"], body) as reply_id:
        state, result = live.wakeup()
    assert result["ok"] is True, result
    assert (result["action"], result["reasons"]) == (reply["wakeup"]["action"], reply["wakeup"]["reasons"]), result
    # The form the fixture names is the one the state carries.
    if reply["form"] == "unavailable":
        assert state["unavailable_replies"] == [{"created_at": at(REPLY_AT), "id": reply_id, "kind": reply["kind"]}]
    else:
        assert state["unavailable_replies"] == []
        assert [r["id"] for r in state["responses"] if r["source"] == reply["source"]] == [reply_id]
    unrecognised = [r["id"] for r in state["unrecognized_replies"]]
    assert unrecognised == ([reply_id] if result["reasons"] == ["reviewer-reply-unrecognized"] else [])


def test_the_unrecognised_stop_names_the_reply_and_a_short_redacted_excerpt(live):
    token_like = "sk-" + "Q" * 40
    body = f"Codex says: see https://example.invalid/x?token={token_like} and {token_like} " + "word " * 40
    with live.reply("issue-comment", body) as reply_id:
        state, result = live.wakeup()
    assert result["action"] == "stop-reviewer-unavailable"
    [shown] = result["unrecognized_replies"]
    assert (shown["id"], shown["source"]) == (reply_id, "issue-comment")
    assert shown["excerpt"] == codex_text.excerpt(body) == state["unrecognized_replies"][0]["excerpt"]
    assert shown["excerpt"].startswith("Codex says: see <link> and [REDACTED] word")
    assert token_like not in json.dumps(result) and len(shown["excerpt"]) == policy.CODEX_EXCERPT_MAX_CHARS
    assert result["delete_automation_id"] == AUTOMATION_ID and result["unavailable_replies"] == []


def test_the_usage_limit_stop_names_the_reply_and_its_kind(live):
    body = body_for(REPLIES[1], live.head)
    with live.reply("issue-comment", body) as reply_id:
        _, result = live.wakeup()
    assert result["unavailable_replies"] == [{"id": reply_id, "kind": "usage-limit"}]
    assert result["unrecognized_replies"] == []


@pytest.mark.parametrize("name", ["usage-limit-limits-have-been-reached-credits", "unrecognised-comment"])
def test_a_look_alike_account_is_no_reply_at_all(live, name):
    reply = next(r for r in REPLIES if r["name"] == name)
    with live.reply("issue-comment", body_for(reply, live.head), user="lookalike_bot"):
        state, result = live.wakeup()
    assert (result["action"], result["reasons"]) == ("wait", ["awaiting-codex-response"])
    assert state["responses"] == state["unavailable_replies"] == state["unrecognized_replies"] == []


@pytest.mark.parametrize("name", ["usage-limit-limits-have-been-reached-credits", "unrecognised-comment"])
def test_a_reply_from_before_the_request_does_not_stop_it(live, name):
    reply = next(r for r in REPLIES if r["name"] == name)
    with live.reply("issue-comment", body_for(reply, live.head), created_at=at(30)):
        _, result = live.wakeup()
    assert (result["action"], result["reasons"]) == ("wait", ["awaiting-codex-response"])


def test_the_one_line_clean_does_not_count_while_a_review_of_the_head_is_running(live):
    summary = fixture("codex/bodies.json")["summary_running"].replace("{sha7}", live.head[:7])
    with live.reply("issue-comment", summary, created_at=at(200)):
        with live.reply("issue-comment", "Codex Review: Didn\u2019t find any major issues. Swish!"):
            _, result = live.wakeup()
    assert (result["action"], result["reasons"]) == ("wait", ["codex-review-running"])


def test_a_completed_row_counts_only_once_it_has_stood_a_heartbeat(live):
    summary = fixture("codex/bodies.json")["summary_completed"].replace("{sha7}", live.head[:7])
    with live.reply("issue-comment", summary):
        _, young = live.wakeup()
        _, settled = live.wakeup(at(REPLY_AT + int(policy.SUMMARY_COMPLETED_SETTLE.total_seconds())))
    assert (young["action"], young["reasons"]) == ("wait", ["codex-review-settling"])
    assert (settled["action"], settled["reasons"]) == ("plan-finalization", ["codex-clean"])


def test_a_finding_beside_the_clean_text_is_findings(live):
    finding = next(r for r in REPLIES if r["name"] == "findings-comment-without-link")
    body = "Codex Review: Didn't find any major issues.\n\n" + finding["body"]
    with live.reply("issue-comment", body):
        _, result = live.wakeup()
    assert (result["action"], result["reasons"]) == ("plan-remediation", ["codex-findings"])


@pytest.mark.parametrize("name", ["findings-comment-with-permalink", "findings-comment-without-link"])
def test_the_next_request_says_which_findings_comments_the_round_addressed(live, name):
    reply = next(r for r in REPLIES if r["name"] == name)
    with live.reply("issue-comment", body_for(reply, live.head)) as reply_id:
        state, result = live.wakeup()
    template = result["review_request_body_template"]
    # The hands build the plan with the same words.
    assert template == recurring.review_template(RecurringState.model_validate(state))
    assert template.splitlines() == [
        "@codex review",
        f"This round addresses the findings Codex posted as PR comments {reply_id}.",
        markers.request_marker(RUN_ID, 1),
    ]
    assert render.review_template_violations(template, RUN_ID, 1, "/review_request_body_template") == []
    assert result["actionable_thread_ids"] == []  # no thread to reply to or resolve


def test_a_review_with_findings_adds_nothing_to_the_next_request(live):
    reply = next(r for r in REPLIES if r["name"] == "findings-review")
    with live.reply("review", body_for(reply, live.head)):
        _, result = live.wakeup()
    assert result["review_request_body_template"] == markers.default_review_template(RUN_ID, 1)


def test_the_clean_verdict_posted_as_a_review_counts_as_a_completed_review_of_its_commit(live):
    body = fixture("codex/bodies.json")["clean_review"].replace("{sha10}", live.head[:10])
    with live.reply("review", body) as reply_id:
        young_state, young = live.wakeup()
        _, settled = live.wakeup(at(REPLY_AT + int(policy.SUMMARY_COMPLETED_SETTLE.total_seconds())))
    assert young_state["summary_rows"] == [
        {"comment_id": reply_id, "content_version_at": at(REPLY_AT), "head_sha": live.head, "status": "completed"}
    ]
    assert young_state["responses"] == young_state["unrecognized_replies"] == []
    assert (young["action"], young["reasons"]) == ("wait", ["codex-review-settling"])
    assert (settled["action"], settled["reasons"]) == ("plan-finalization", ["codex-clean"])


def test_a_clean_review_of_another_commit_is_no_clean_answer(live):
    body = fixture("codex/bodies.json")["clean_review"].replace("{sha10}", "0badc0ffee")
    with live.reply("review", body) as reply_id:
        state, result = live.wakeup(at(REPLY_AT + 600))
    # The Reviewed commit line contradicts the review's own commit: no safe reading.
    assert [r["id"] for r in state["unrecognized_replies"]] == [reply_id]
    assert (result["action"], result["reasons"]) == ("stop-reviewer-unavailable", ["reviewer-reply-unrecognized"])


def test_the_summary_with_security_metadata_keeps_only_its_code_review_row(live):
    summary = fixture("codex/bodies.json")["summary_with_security_metadata"]
    body = summary.replace("{sha7}", live.head[:7]).replace("{sha40}", live.head)
    assert "<!-- codex-security-review:v1 " in body and "**Security Review**" in body
    with live.reply("issue-comment", body) as reply_id:
        state, _ = live.wakeup()
        _, settled = live.wakeup(at(REPLY_AT + int(policy.SUMMARY_COMPLETED_SETTLE.total_seconds())))
    assert state["summary_rows"] == [
        {"comment_id": reply_id, "content_version_at": at(REPLY_AT), "head_sha": live.head, "status": "completed"}
    ]
    assert state["responses"] == state["unrecognized_replies"] == []
    assert (settled["action"], settled["reasons"]) == ("plan-finalization", ["codex-clean"])


def test_a_clean_reply_about_a_commit_someone_else_asked_about_is_left_unbound(live):
    older = git(live.world["repo"], "rev-parse", "HEAD~1")
    clean = next(r for r in REPLIES if r["name"] == "clean-reviewed-commit")
    with live.reply("issue-comment", "@codex review", created_at=at(120), user="human_reviewer"):
        with live.reply("issue-comment", clean["body"].replace("{sha10}", older[:10])):
            state, result = live.wakeup()
    assert state["responses"] == state["unrecognized_replies"] == []
    assert (result["action"], result["reasons"]) == ("wait", ["awaiting-codex-response"])


def test_without_someone_elses_request_a_clean_reply_about_an_unrequested_commit_still_stops(live):
    older = git(live.world["repo"], "rev-parse", "HEAD~1")
    clean = next(r for r in REPLIES if r["name"] == "clean-reviewed-commit")
    # A request posted after the reply cannot be the one it answers.
    with live.reply("issue-comment", "@codex review", created_at=at(330), user="human_reviewer"):
        with live.reply("issue-comment", clean["body"].replace("{sha10}", older[:10])) as reply_id:
            state, result = live.wakeup()
    assert [r["id"] for r in state["unrecognized_replies"]] == [reply_id]
    assert (result["action"], result["reasons"]) == ("stop-reviewer-unavailable", ["reviewer-reply-unrecognized"])


def test_a_short_finding_without_badge_or_commit_wins_over_a_plus_one(live):
    finding = next(r for r in REPLIES if r["name"] == "finding-short-without-badge-or-commit")
    reaction = live.fake.add_reaction(USERS["codex_as_reactor"], "+1", at(310))
    try:
        with live.reply("issue-comment", finding["body"]) as reply_id:
            state, result = live.wakeup()
    finally:
        live.fake.reactions.remove(reaction)
    assert [r["id"] for r in state["plus_one_reactions"]] == [str(reaction["id"])]
    [response] = state["responses"]
    assert (response["id"], response["commit_sha"], response["zero_findings_signal"]) == (reply_id, None, False)
    assert (result["action"], result["reasons"]) == ("plan-remediation", ["codex-findings"])


# -- the acknowledgement: Codex's 👀 on the loop's request ---------------------------------

ACK_DUE = 60 + int(policy.REQUEST_ACKNOWLEDGEMENT_TIMEOUT.total_seconds())  # the request was posted at 60 s


def request_comment_id(live: Live) -> int:
    [request] = [c for c in live.fake.issue_comments if "github-codex-pr-loop-request" in (c["body"] or "")]
    return request["id"]


@contextlib.contextmanager
def eyes_on_the_request(live: Live, user: str = "codex_as_reactor") -> Iterator[None]:
    comment_id = request_comment_id(live)
    live.fake.world.add_reaction(OWNER, REPO, PR_NUMBER, USERS[user], "eyes", created_at=at(70), comment_id=comment_id)
    try:
        yield
    finally:
        live.fake.repository.comment_reactions.pop(comment_id, None)


def test_a_request_codex_never_picked_up_stops_the_loop_once_the_acknowledgement_is_overdue(live):
    _, before = live.wakeup(at(ACK_DUE - 1))
    state, result = live.wakeup(at(ACK_DUE))
    assert (before["action"], before["reasons"]) == ("wait", ["awaiting-codex-response"])
    unacknowledged = {"created_at": at(ACK_DUE), "id": str(request_comment_id(live)), "kind": "unacknowledged"}
    assert state["unavailable_replies"] == [unacknowledged]
    assert (result["action"], result["reasons"]) == ("stop-reviewer-unavailable", ["reviewer-not-responding"])
    assert result["unavailable_replies"] == [{"id": unacknowledged["id"], "kind": "unacknowledged"}]
    assert result["delete_automation_id"] == AUTOMATION_ID  # the cleanup stop; nothing is requested again


def test_codex_eyes_on_the_request_keeps_the_loop_waiting_for_its_answer(live):
    with eyes_on_the_request(live):
        state, result = live.wakeup(at(ACK_DUE + 600))
    assert state["unavailable_replies"] == []
    assert (result["action"], result["reasons"]) == ("wait", ["awaiting-codex-response"])


def test_eyes_from_anyone_else_are_no_acknowledgement(live):
    with eyes_on_the_request(live, user="lookalike_bot"):
        _, result = live.wakeup(at(ACK_DUE))
    assert (result["action"], result["reasons"]) == ("stop-reviewer-unavailable", ["reviewer-not-responding"])


def test_an_answer_without_eyes_is_an_answer_not_silence(live):
    summary = fixture("codex/bodies.json")["summary_running"].replace("{sha7}", live.head[:7])
    with live.reply("issue-comment", summary, created_at=at(200)):
        state, result = live.wakeup(at(ACK_DUE + 60))
    assert state["unavailable_replies"] == []
    assert (result["action"], result["reasons"]) == ("wait", ["codex-review-running"])


def test_past_the_deadline_a_silent_request_still_times_out(live):
    state, result = live.wakeup(at(60 + int(policy.REQUEST_TIMEOUT.total_seconds()) + 60))
    assert state["unavailable_replies"] == []
    assert (result["action"], result["reasons"]) == ("request-timeout", ["request-deadline-passed"])
