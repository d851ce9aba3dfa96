"""The demo's scenarios end to end: each runs the loop's real commands against the simulator, as ``python -m demo``.

Each test asserts the exact sequence of actions the evaluator gave, and the
final GitHub, git and registry state: one comment per write (no duplicate),
nothing written after a stop, the automation deleted exactly when the
action table says. A checkout of the skill that lacks a command of the loop
must say which one and exit 1, never claim the loop reached its end.
"""

from __future__ import annotations

import io
import json
import re
import shutil
from pathlib import Path

import pytest

from demo import cli
from demo.scenarios import SCENARIOS
from demo.stack import HEAD_BRANCH, TOKEN, git

CLAIM = re.compile(r"github-codex-pr-loop-claim ")


def run(tmp_path, name, *, as_a_person=False):
    out = io.StringIO()
    stack_box = {}
    original = cli.start

    def keep(scratch, **options):
        stack_box["stack"] = original(scratch, **options)
        return stack_box["stack"]

    cli.start = keep
    try:
        result = cli.run_scenario(SCENARIOS[name], tmp_path / "run", out, as_a_person=as_a_person)
    finally:
        cli.start = original
    assert TOKEN not in out.getvalue()
    return result, stack_box["stack"], out.getvalue()


def actions(result):
    return [(step.name, step.action) for step in result.steps if step.name.startswith(("wakeup", "plan-", "claim"))]


def ran(result):
    """Every loop.py command of the run, in order, with its answer; a `next` stands for the commands it ran (`did`)."""
    commands = []
    for command, answer in result.agent.results:
        if command != "next":
            commands.append((command, answer))
            continue
        for done in answer.get("did", []):
            commands.append((done["command"].split()[1], done))
        if not answer.get("ok", True):
            commands.append((str(answer.get("refused_in", "loop.py next")).split()[1], answer))
    return commands


def owner_comments(stack, number):
    return [c["body"] for c in stack.comments(number) if c["user"]["login"] == "loop-owner"]


def test_help_names_every_scenario_and_the_exit_status(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["--help"])
    assert exited.value.code == 0
    text = capsys.readouterr().out
    assert all(name in text for name in SCENARIOS) and "exit status" in text


def test_a_usage_error_exits_2(capsys):
    with pytest.raises(SystemExit) as exited:
        cli.main(["--scenario", "nonsense"])
    assert exited.value.code == 2


def assert_every_command_ran(result):
    """Every command the demo runs exists: a missing one is a failure, never a pass."""
    assert not result.missing, f"the demo could not run {result.missing}"


@pytest.mark.slow
def test_the_happy_path_reaches_done(tmp_path):
    result, stack, _ = run(tmp_path, "happy")
    assert_every_command_ran(result)
    assert result.final == "done"
    assert actions(result) == [
        ("wakeup", "wait"),
        ("wakeup", "plan-remediation"),
        ("plan-remediation", "await-approval"),
        ("wakeup", "plan-remediation"),
        ("plan-remediation", "claim-plan"),
        ("claim", "written"),
        ("wakeup --continue", "execute-remediation"),
        ("wakeup", "wait"),
        ("wakeup", "plan-finalization"),
        ("plan-finalization", "await-approval"),
        ("wakeup", "plan-finalization"),
        ("plan-finalization", "claim-plan"),
        ("claim", "written"),
        ("wakeup --continue", "execute-finalization"),
        ("wakeup --continue", "plan-finalization"),
        ("plan-finalization", "await-approval"),
        ("wakeup", "plan-finalization"),
        ("plan-finalization", "claim-plan"),
        ("claim", "written"),
        ("wakeup --continue", "finish-finalization"),
    ]
    (pull,) = stack.pulls()
    assert pull["draft"] is False and pull["state"] == "open"
    bodies = owner_comments(stack, pull["number"])
    assert len(bodies) == len(set(bodies))  # no duplicate write
    assert sum(1 for body in bodies if CLAIM.search(body)) == 3  # one claim per executed plan
    assert stack.remote_tip(HEAD_BRANCH) == pull["head"]["sha"]
    assert stack.host.read(result.automation_id) is None  # deleted, by the last wakeup only
    names = [(s.name, s.action) for s in result.steps]
    deleted = names.index(("verify-automation", "deleted"))
    assert names[deleted - 2 :] == [
        ("execute", "delete-owned-automation"),
        ("automation-delete", "ok"),
        ("verify-automation", "deleted"),
        ("end-wakeup", "ok"),
    ]
    assert names.index(("wakeup --continue", "finish-finalization")) < deleted - 2


@pytest.mark.slow
def test_codex_reviewing_after_ready_for_review_is_reported_by_status_after_done(tmp_path):
    """Marking the draft ready starts Codex's auto-review; its findings land after the loop finished.

    The loop still reaches done (the automation is gone, nothing wakes and
    nothing is written after it), and `loop.py status` reports the review on
    the head the loop finished on, with a new loop as the way to act on it.
    """
    result, stack, _ = run(tmp_path, "late-review")
    assert_every_command_ran(result)
    assert result.final == "done"
    assert actions(result)[-1] == ("wakeup --continue", "finish-finalization")
    assert [(s.name, s.action) for s in result.steps][-3:] == [
        ("verify-automation", "deleted"),
        ("end-wakeup", "ok"),
        ("status (after done)", "codex-said-findings"),
    ]
    assert stack.host.read(result.automation_id) is None

    (pull,) = stack.pulls()
    (review,) = stack.world.repository(*stack.repository.split("/")).reviews[pull["number"]]
    owner_writes = [c["created_at"] for c in stack.comments(pull["number"]) if c["user"]["login"] == "loop-owner"]
    assert review["commit_id"] == pull["head"]["sha"] and max(owner_writes) < review["submitted_at"]

    late = result.after_finalization
    assert late["observed"] is True and late["late_codex_says"] == "findings"
    assert late["finished_head_sha"] == pull["head"]["sha"] and late["open_codex_threads"] == 1
    assert {(a["source"], a["says"]) for a in late["late_codex_answers"]} == {
        ("review", "findings"),
        ("review-comment", "findings"),
    }
    assert f"--reuse-pr {pull['number']}" in late["next"]


@pytest.mark.slow
def test_a_busy_pull_request_pages_every_list_through_https_links_and_reaches_done(tmp_path):
    result, stack, _ = run(tmp_path, "busy")
    assert_every_command_ran(result)
    assert result.final == "done"
    (pull,) = stack.pulls()
    number = pull["number"]
    lists = [
        f"/issues/{number}/comments",
        f"/issues/{number}/reactions",
        f"/pulls/{number}/reviews",
        f"/pulls/{number}/comments",
    ]
    for path in lists:  # each list was read past its first page of 100, by following the https Link
        second_pages = [
            entry
            for entry in stack.world.log
            if entry[0] == "GET"
            and entry[1].startswith(f"/repos/{stack.repository}{path}?")
            and "page=2" in entry[1].split("?", 1)[1].split("&")
            and entry[2] == 200
        ]
        assert second_pages, path
    bodies = owner_comments(stack, number)
    assert len(bodies) == len(set(bodies)) and sum(1 for body in bodies if CLAIM.search(body)) == 3
    assert pull["draft"] is False and stack.host.read(result.automation_id) is None


@pytest.mark.slow
@pytest.mark.parametrize("name", ["timeout", "usage-limit", "usage-limit-today", "pr-closed", "force-push"])
def test_a_stop_writes_nothing_after_it(tmp_path, name):
    result, stack, _ = run(tmp_path, name)
    assert_every_command_ran(result)
    assert result.final == SCENARIOS[name].expect
    commands = ran(result)
    stop_index = next(i for i, (command, answer) in enumerate(commands) if answer.get("action") == result.final)
    assert commands[stop_index][0] == "wakeup"
    after = [command for command, _ in commands[stop_index + 1 :]]
    # A cleanup stop deletes the automation and nothing else; an inconsistency is reported, nothing more is run.
    cleanup = [] if result.final == "state-inconsistency" else ["automation-delete", "verify-automation", "end-wakeup"]
    assert after == cleanup
    pulls = stack.pulls()
    assert len(pulls) == 1
    bodies = owner_comments(stack, pulls[0]["number"])
    assert len(bodies) == len(set(bodies)) and not any(CLAIM.search(body) for body in bodies)


@pytest.mark.slow
def test_todays_usage_limit_wording_stops_the_first_wakeup_after_it_with_its_kind(tmp_path):
    result, stack, _ = run(tmp_path, "usage-limit-today")
    assert result.final == "stop-reviewer-unavailable"
    wakeups = [step for step in result.steps if step.name == "wakeup"]
    # Codex answers 3 minutes after the request; wakeups come every 2: the one before waits, the next stops.
    assert [step.action for step in wakeups] == ["wait", "stop-reviewer-unavailable"], wakeups
    assert wakeups[0].reasons == ["awaiting-codex-response"]
    assert wakeups[1].reasons == ["codex-unavailable", "codex-unavailable-usage-limit"]


@pytest.mark.slow
def test_a_request_codex_never_picks_up_stops_ten_minutes_after_it_and_is_never_posted_again(tmp_path):
    result, stack, _ = run(tmp_path, "not-picked-up")
    assert result.final == "stop-reviewer-unavailable"
    wakeups = [step for step in result.steps if step.name == "wakeup"]
    # The request is posted at bootstrap; wakeups come every 2 minutes: four wait, the fifth (10 minutes) stops.
    assert [step.action for step in wakeups] == ["wait"] * 4 + ["stop-reviewer-unavailable"], wakeups
    assert wakeups[-1].reasons == ["reviewer-not-responding"]
    (pull,) = stack.pulls()
    requests = [body for body in owner_comments(stack, pull["number"]) if "github-codex-pr-loop-request " in body]
    assert len(requests) == 1 and stack.host.read(result.automation_id) is None


@pytest.mark.slow
def test_the_symlink_swap_stops_before_staging(tmp_path):
    result, stack, _ = run(tmp_path, "symlink")
    assert_every_command_ran(result)
    assert result.final == "refused-execute"
    assert [error["code"] for error in result.refusals[-1]["errors"]] == ["path-records-changed"]
    assert result.refusals[-1]["refused_in"] == "loop.py execute"  # resumed by `next`, refused before staging
    assert stack.remote_tip(HEAD_BRANCH) is None and stack.pulls() == []  # nothing pushed, no pull request
    assert result.automation_id is None


@pytest.mark.slow
def test_an_overlapping_wakeup_is_refused_and_the_left_claim_is_never_executed(tmp_path):
    result, stack, _ = run(tmp_path, "overlap")
    assert_every_command_ran(result)
    assert result.final == "state-inconsistency"
    second = next(step for step in result.steps if step.name == "wakeup (second)")
    assert (second.action, second.reasons) == ("refused", ["wakeup-claim-open"])
    commands = ran(result)
    claimed = [command for command, _ in commands].index("claim")
    after_claim = {operation for _, answer in commands[claimed:] for operation in answer.get("performed", [])}
    assert after_claim <= {"edit-files"}  # the claimed remediation was never carried out: no commit, no push
    bare = stack.world.bare_repository(*stack.repository.split("/"))
    assert git(bare, "rev-list", "--count", f"main..{HEAD_BRANCH}") == "1"  # the initial commit only: no fix pushed
    (pull,) = stack.pulls()
    claims = [body for body in owner_comments(stack, pull["number"]) if CLAIM.search(body)]
    assert len(claims) == 1
    assert stack.host.read(result.automation_id) is not None  # an inconsistency is reported, not cleaned up


ROOT = Path(__file__).resolve().parent.parent
SKILL = (ROOT / "SKILL.md").read_text(encoding="utf-8")
HANDS = (ROOT / "references" / "hands.md").read_text(encoding="utf-8")
TYPED = re.compile(r"`(loop\.py\s[^`]+)`")


def test_the_single_commands_table_is_the_steps_table():
    """references/hands.md's table of the single commands and every command's `next` come from one table."""
    from act.core import steps

    assert steps.commands_table() in HANDS
    assert steps.outside_table() in HANDS  # the initial plan, the bootstrap, a rejected bootstrap


def assert_next_is_skill_md(result, stack):
    """Every `next` a command printed names only commands SKILL.md gives, exactly as written there."""
    from demo.stack import CHANGED_FILE

    written = {" ".join(typed.split()) for typed in TYPED.findall(SKILL + HANDS)}
    state_dir = result.agent.state_dir
    for command, answer in result.agent.results:
        told = " ".join(str(answer.get(key) or "") for key in ("next", "you_do", "then"))
        for typed in TYPED.findall(told):
            general = " ".join(typed.split()).replace(state_dir, "DIR").replace(str(result.automation_key), "KEY")
            general = re.sub(r"\b[0-9a-f]{64}\b", "H", general).replace(f"--path {CHANGED_FILE}", "--path P...")
            general = re.sub(r"--pr [0-9]+", "--pr N", general)
            assert general in written, f"{command}'s next names `{general}`, which SKILL.md does not give"


@pytest.mark.slow
@pytest.mark.parametrize("name", ["happy", "pr-closed"])
def test_every_next_text_is_a_command_skill_md_gives(tmp_path, name):
    result, stack, _ = run(tmp_path, name)
    assert result.final == SCENARIOS[name].expect
    assert_next_is_skill_md(result, stack)


def nexts(result):
    return [answer for command, answer in result.agent.results if command == "next"]


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_every_scenario_reaches_its_end_through_next(tmp_path, name):
    """SKILL.md's way: `next`, and only the acts it hands back; every scenario ends as its table row says."""
    result, stack, out = run(tmp_path, name)
    assert_every_command_ran(result)
    assert result.final == SCENARIOS[name].expect
    assert_next_is_skill_md(result, stack)
    commands = {command for command, _ in result.agent.results}
    interleaved = {"overlap": {"wakeup", "end-wakeup"}, "symlink": {"execute"}}  # their hooks: a second heartbeat,
    own = {"init", "approve", "next", "plan-remediation", "status"}  # or validation before someone swaps a file
    assert commands <= own | interleaved.get(name, set())
    for answer in nexts(result):
        if answer.get("action") == "wait":  # a waiting wakeup is one command
            assert [done["command"].split()[1] for done in answer["did"]] == ["wakeup"]
            assert answer["then"].startswith("at the next heartbeat")
    for pull in stack.pulls():
        bodies = owner_comments(stack, pull["number"])
        assert len(bodies) == len(set(bodies))  # no duplicate write
    if SCENARIOS[name].expect == "done":
        (pull,) = stack.pulls()
        assert pull["draft"] is False and stack.host.read(result.automation_id) is None
        fix_rounds = sum(1 for reply in SCENARIOS[name].codex if reply != "clean")  # one plan per finding round
        claims = sum(1 for body in owner_comments(stack, pull["number"]) if CLAIM.search(body))
        assert claims == 2 + fix_rounds  # the initial plan, each remediation, the finalization


@pytest.mark.slow
def test_the_happy_loop_is_at_most_twenty_commands(tmp_path):
    result, _, _ = run(tmp_path, "happy")
    assert result.final == "done"
    again = [answer for answer in nexts(result) if answer.get("again")]  # only at a fixed --observed-at
    assert len(again) <= 1
    assert len(result.agent.results) - len(again) <= 20


@pytest.mark.slow
def test_each_command_looks_up_the_token_once_and_shares_one_client(tmp_path):
    """One GitHub session per command: however many reads and writes, gh is asked for the token at most once."""
    result, _, _ = run(tmp_path, "busy")
    assert result.final == "done"
    lookups = result.agent.token_lookups
    assert len(lookups) == len(result.agent.results) and max(lookups) == 1, lookups
    assert lookups.count(1) >= 5  # every wakeup reads GitHub (the busy one many pages, and writes besides)


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("gh") is None, reason="needs the real gh (.ci/run installs Debian's)")
def test_a_whole_loop_on_a_persons_machine_reaches_done(tmp_path):
    """The real gh found on PATH at a Homebrew-like path, logged in through hosts.yml, no token variable; the
    identity only in ~/.gitconfig. Every wakeup takes that route from the state directory."""
    result, stack, _ = run(tmp_path, "happy", as_a_person=True)
    assert result.final == "done"
    assert stack.person_bin is not None  # so no command named --gh (network_flags): gh was found on PATH
    setup = json.loads((Path(result.agent.state_dir) / "setup.json").read_text(encoding="utf-8"))
    assert Path(setup["gh"]).resolve() == Path(shutil.which("gh")).resolve()
    assert setup["gh_config_dir"] == str(stack.scratch / "home" / ".config" / "gh")
    (pull,) = stack.pulls()
    remote = stack.world.git_repository_path(*stack.repository.split("/"))
    authors = git(remote, "log", "--format=%an <%ae>|%cn <%ce>", f"{pull['base']['sha']}..{pull['head']['sha']}")
    assert set(authors.splitlines()) == {
        "Loop Owner <loop-owner@example.invalid>|Loop Owner <loop-owner@example.invalid>"
    }
    assert "user." not in git(stack.checkout, "config", "--local", "--list")  # no identity of the checkout's own
