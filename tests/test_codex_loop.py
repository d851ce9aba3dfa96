"""A whole approval-gated loop through the real Codex CLI (demo/codex_loop.py): ``codex exec``, then
``codex exec resume`` for the person's approvals and every heartbeat, the model scripted on 127.0.0.1,
the simulator as GitHub, Codex review and the automation host.

The slow test runs the loop once (two to four minutes) and checks it four ways; bench/codex_loop.py
reports the same run's counts. A short test first shows those checks read Codex's real framing.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from demo.codex_loop import LoopRun, run_loop
from demo.stack import HEAD_BRANCH
from simulator.model_provider import (
    ENV_KEY,
    TRUNCATION_MARKS,
    ResponsesProvider,
    assistant_message,
    config_toml,
    function_call,
    parse_tool_output,
)
from tests.codex_cli import codex_binary

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


def test_the_checks_above_see_codexs_truncation_mark_and_a_polled_commands_chunks(tmp_path: Path) -> None:
    """The truncation and poll checks read Codex's real framing: a long output comes back marked, a slow
    command comes back running and its poll brings the rest (the same provider, one short `codex exec`)."""
    codex = codex_binary()
    script = [
        function_call("exec_command", {"cmd": "seq 1 3000"}),  # 13,893 bytes: over Codex's budget for this model
        function_call("exec_command", {"cmd": "echo first; sleep 3; echo second", "yield_time_ms": 500}),
    ]

    def respond(request: dict[str, Any]) -> list[dict[str, Any]]:
        last = request["input"][-1]
        if last.get("type") == "function_call_output":
            running = parse_tool_output(last["output"]).session_id
            if running is not None:
                return [function_call("write_stdin", {"session_id": running, "chars": ""})]
        return [script.pop(0)] if script else [assistant_message("done")]

    provider = ResponsesProvider(respond).start()
    try:
        home = tmp_path / "codex-home"
        home.mkdir()
        (home / "config.toml").write_text(config_toml(provider.base_url), encoding="utf-8")
        environment = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path), "CODEX_HOME": str(home)}
        completed = subprocess.run(
            [codex, "exec", "--json", "--strict-config", "--skip-git-repo-check", "go"],
            cwd=tmp_path,
            env={**environment, ENV_KEY: "dummy-not-a-credential"},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        provider.stop()
    assert completed.returncode == 0, completed.stderr[-800:]
    assert provider.failures == []
    last = provider.requests[-1]["input"]
    outputs = [parse_tool_output(item["output"]) for item in last if item["type"] == "function_call_output"]
    long, started, *polls = outputs
    assert long.truncated and long.exit_code == 0 and long.original_tokens > 0
    assert started.session_id is not None and polls and polls[-1].exit_code == 0
    assert all(poll.session_id == started.session_id for poll in polls[:-1])
    assert started.output + "".join(poll.output for poll in polls) == "first\nsecond\n"
    assert not any(output.truncated for output in (started, *polls))
