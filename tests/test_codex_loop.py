"""A whole approval-gated loop through the real Codex CLI (tests/codex_loop.py): ``codex exec``, then
``codex exec resume`` for the person's approvals and every heartbeat, the model scripted on 127.0.0.1,
the simulator as GitHub, Codex review and the automation host.

One test runs the loop once (about three minutes) and checks it four ways; bench/codex_loop.py
reports the same run's counts.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from demo.stack import HEAD_BRANCH
from tests.codex_cli import codex_binary
from tests.codex_loop import LoopRun, run_loop
from tests.codex_provider import TRUNCATION_MARKS

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_a_whole_approval_gated_loop_through_codex_exec_and_resumed_turns(tmp_path: Path) -> None:
    run = run_loop(tmp_path, ROOT, codex_binary())
    assert run.failures == [], run.failures
    assert run.final == "done", counts(run)
    print(counts(run))
    reached_done_in_one_thread(run)
    no_output_reached_the_model_truncated(run)
    a_command_still_running_is_polled_never_started_again(run)
    every_heartbeat_carries_the_prompt_and_the_whole_skill_md(run)


def counts(run: LoopRun) -> str:
    kinds = [turn.kind for turn in run.turns]
    return (
        f"{len(run.requests)} model requests, {len(run.function_calls('write_stdin'))} polls, "
        f"{len(run.function_calls('exec_command'))} commands; turns {kinds}; final {run.final}"
    )


def reached_done_in_one_thread(run: LoopRun) -> None:
    # One thread: the first turn is `codex exec`, every later one `codex exec resume` of that thread.
    threads = {e["thread_id"] for turn in run.turns for e in turn.events if e.get("type") == "thread.started"}
    assert len(threads) == 1
    kinds = [turn.kind for turn in run.turns]
    assert kinds[0] == "start" and kinds.count("start") == 1
    assert kinds.count("heartbeat") >= 3 and kinds.count("reply") >= 3, kinds  # initial, fix and final plans
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


def no_output_reached_the_model_truncated(run: LoopRun) -> None:
    seen = run.commands_seen()
    assert len(seen) == len(run.function_calls("exec_command")) >= 15
    for cmd, received, full in seen:
        # The model's chunks, joined, are the command's whole output as Codex recorded it: line for line
        # (stdout and stderr may interleave differently in the chunks), and the JSON line intact.
        assert sorted(received.splitlines()) == sorted(full.splitlines()), cmd
        assert not any(mark in received for mark in TRUNCATION_MARKS), cmd
        if "scripts/loop" in cmd:  # the hands: one JSON line, last
            last = [line for line in received.splitlines() if line.startswith("{")][-1]
            assert json.loads(last) == json.loads([line for line in full.splitlines() if line.startswith("{")][-1])
    for call, output in run.tool_outputs():
        assert not output.truncated, (call, output.output[:300])


def a_command_still_running_is_polled_never_started_again(run: LoopRun) -> None:
    """Codex yields a command still running after its yield time; each such answer is followed by one poll of it."""
    outputs = run.tool_outputs()
    running = [output.session_id for _, output in outputs if output.session_id is not None]
    polls = [json.loads(call["arguments"]) for call in run.function_calls("write_stdin")]
    assert [poll["session_id"] for poll in polls] == running, counts(run)
    assert all(poll.get("chars", "") == "" for poll in polls)
    for (call, answer), (following, _) in zip(outputs, outputs[1:], strict=False):
        if answer.session_id is not None:  # the very next call is its poll, not a second start
            assert following["name"] == "write_stdin", (call, following)
    # Every request is one model round trip: the calls made plus each turn's closing message.
    calls = len(run.function_calls("exec_command")) + len(polls)
    assert len(run.requests) == calls + len(run.turns), counts(run)


def every_heartbeat_carries_the_prompt_and_the_whole_skill_md(run: LoopRun) -> None:
    """What bench/codex_loop.py measures, read off the requests: a prompt naming the skill brings its SKILL.md."""
    assert run.automation_prompt is not None and "$github-codex-pr-loop" in run.automation_prompt
    for turn in run.turns:
        injected = run.injected(turn)
        if turn.kind == "heartbeat":
            assert injected["prompt"] == len(turn.prompt.encode())
            assert injected["skill"] >= run.skill_md_bytes
        elif turn.kind == "reply":  # the person's reply names no skill: nothing is injected
            assert injected["skill"] == 0 and injected["prompt"] == len(turn.prompt.encode())
