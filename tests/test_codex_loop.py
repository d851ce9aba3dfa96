"""A whole approval-gated loop through the real Codex CLI (tests/codex_loop.py): ``codex exec``, then
``codex exec resume`` for the person's approvals and every heartbeat, the model scripted on 127.0.0.1,
the simulator as GitHub, Codex review and the automation host."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from demo.stack import HEAD_BRANCH
from tests.codex_cli import codex_binary
from tests.codex_loop import LoopRun, run_loop
from tests.codex_provider import TRUNCATION_MARKS

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def loop_run(tmp_path_factory: pytest.TempPathFactory) -> LoopRun:
    codex = codex_binary()
    return run_loop(tmp_path_factory.mktemp("codex-loop"), ROOT, codex)


def counts(run: LoopRun) -> str:
    kinds = [turn.kind for turn in run.turns]
    return (
        f"{len(run.requests)} model requests, {len(run.function_calls('write_stdin'))} polls, "
        f"{len(run.function_calls('exec_command'))} commands; turns {kinds}; final {run.final}"
    )


@pytest.mark.slow
def test_the_loop_reaches_done_through_codex_exec_and_resumed_turns(loop_run: LoopRun) -> None:
    run = loop_run
    assert run.failures == [], run.failures
    assert run.final == "done", counts(run)
    print(counts(run))
    # One thread: the first turn is `codex exec`, every later one `codex exec resume` of that thread.
    threads = {e["thread_id"] for turn in run.turns for e in turn.events if e.get("type") == "thread.started"}
    assert len(threads) == 1
    kinds = [turn.kind for turn in run.turns]
    assert kinds[0] == "start" and kinds.count("start") == 1
    assert kinds.count("heartbeat") >= 3 and kinds.count("reply") >= 3  # the initial, fix and finalization plans
    # GitHub's side of done: the pull request is ready, its head is the pushed fix, the automation is gone.
    (pull,) = run.stack.pulls()
    assert pull["state"] == "open" and pull["draft"] is False
    assert run.stack.remote_tip(HEAD_BRANCH) == pull["head"]["sha"]
    assert list(run.stack.host.root.glob("*/automation.toml")) == []
    # The automation tool: the model called the host as the desktop app's tool would, create first, delete last.
    modes = [call["payload"]["mode"] for call in run.agent.tool_calls]
    assert modes[0] == "create" and modes[-1] == "delete"
    # Every command's answer was its one JSON line, and every one said ok.
    assert run.agent.answers and all(answer["ok"] for answer in run.agent.answers)


@pytest.mark.slow
def test_no_command_output_reached_the_model_truncated(loop_run: LoopRun) -> None:
    run = loop_run
    seen = run.commands_seen()
    assert len(seen) == len(run.function_calls("exec_command")) >= 15
    for cmd, received, full in seen:
        # The model's chunks, joined, are the command's whole output: line for line (stdout and stderr
        # may interleave differently between the chunks and Codex's record), and the JSON line intact.
        assert sorted(received.splitlines()) == sorted(full.splitlines()), cmd
        assert not any(mark in received for mark in TRUNCATION_MARKS), cmd
        if "scripts/loop" in cmd:  # the hands: one JSON line, last
            last = [line for line in received.splitlines() if line.startswith("{")][-1]
            assert json.loads(last) == json.loads([line for line in full.splitlines() if line.startswith("{")][-1])
    for call, output in run.tool_outputs():
        assert not output.truncated, (call, output.output[:300])


@pytest.mark.slow
def test_a_command_still_running_is_polled_never_started_again(loop_run: LoopRun) -> None:
    """Codex yields a command still running after its yield time; each such answer is followed by one poll of it."""
    run = loop_run
    outputs = run.tool_outputs()
    running = [output.session_id for _, output in outputs if output.session_id is not None]
    polls = [json.loads(call["arguments"]) for call in run.function_calls("write_stdin")]
    assert [poll["session_id"] for poll in polls] == running, counts(run)
    assert all(poll.get("chars", "") == "" for poll in polls)
    for (call, answer), (following, _) in zip(outputs, outputs[1:], strict=False):
        if answer.session_id is not None:  # the very next call is its poll, not a second start
            assert following["name"] == "write_stdin", (call, following)
    # Every request is one model round trip: the requests are the calls made plus each turn's closing message.
    calls = len(run.function_calls("exec_command")) + len(polls)
    assert len(run.requests) == calls + len(run.turns), counts(run)


@pytest.mark.slow
def test_every_heartbeat_carries_the_automation_prompt_and_the_whole_skill_md(loop_run: LoopRun) -> None:
    """What bench/codex_loop.py measures, read off the requests: a prompt naming the skill brings its SKILL.md."""
    run = loop_run
    heartbeats = [turn for turn in run.turns if turn.kind == "heartbeat"]
    assert run.automation_prompt is not None and "$github-codex-pr-loop" in run.automation_prompt
    for turn in heartbeats:
        injected = run.injected(turn)
        assert injected["prompt"] == len(turn.prompt.encode())
        assert injected["skill"] >= run.skill_md_bytes
    for turn in run.turns:
        if turn.kind == "reply":  # the person's reply names no skill: nothing injected
            assert run.injected(turn)["skill"] == 0
