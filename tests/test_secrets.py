"""No token in any output or file: a whole loop with ``GH_TOKEN`` set to a sentinel, then every reading command.

The simulator's only token is the sentinel (its git server, its API and the
``gh`` stand-in's stored login), and each command gets it in ``GH_TOKEN`` as
a person's shell may have it. The loop runs to ``done`` with ``loop.py next``
(demo/driver.py: every step a real ``scripts/loop`` subprocess), then
``status``, ``list``, ``report`` and an ``init`` that GitHub's answer refuses.
The sentinel must appear in no command's standard output or error, and in no
file the commands wrote: the state root, the cache and the automation
registry. Slow (a whole loop): .ci/run runs it (-m slow).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from demo import agent as demo_agent
from demo import stack as demo_stack
from demo.driver import Run
from demo.scenarios import SCENARIOS
from simulator.codex import CodexReviewer

SENTINEL = "ghp_SENTINEL0123456789abcdefABCDEF012345"
LOOP = demo_agent.LOOP
DELAY_SECONDS = 180  # as demo/cli.py

pytestmark = pytest.mark.slow


def files_holding(root: Path, text: str) -> tuple[list[str], list[str]]:
    """Every regular file under ``root`` (relative paths), and those whose bytes hold ``text``."""
    every = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and not p.is_symlink())
    holding = [name for name in every if text.encode() in (root / name).read_bytes()]
    return every, holding


def test_no_command_prints_or_writes_the_token_from_gh_token(tmp_path, monkeypatch):
    monkeypatch.setattr(demo_stack, "TOKEN", SENTINEL)  # the simulated GitHub's one token
    stack = demo_stack.start(tmp_path / "run")
    outputs: list[tuple[list[str], str, str]] = []
    real_run = subprocess.run

    def recorded(argv: Any, *args: Any, **kwargs: Any) -> Any:
        """subprocess.run as it is, keeping what each loop command printed (the driver parses stdout only)."""
        completed = real_run(argv, *args, **kwargs)
        if isinstance(argv, list) and argv and str(argv[0]) == str(LOOP):
            outputs.append(([str(a) for a in argv], completed.stdout, completed.stderr))
        return completed

    try:
        environment = stack.environment
        with_token = lambda: {**environment(), "GH_TOKEN": SENTINEL}  # noqa: E731
        monkeypatch.setattr(stack, "environment", with_token)
        monkeypatch.setattr(demo_agent.subprocess, "run", recorded)
        scenario = SCENARIOS["happy"]
        CodexReviewer(stack.world, list(scenario.codex), delay=DELAY_SECONDS, on_ready=list(scenario.codex_on_ready))
        run = Run(stack, io.StringIO())
        assert run.run() == "done", (run.missing, run.refusals)
        assert run.pr_number is not None

        def loop(*args: str) -> subprocess.CompletedProcess[str]:
            environment = {**with_token(), "PATH": os.pathsep.join([str(Path(sys.executable).parent), "/usr/bin:/bin"])}
            argv = [str(LOOP), *args, "--observed-at", stack.world.clock.iso()]
            completed = real_run(argv, env=environment, capture_output=True, text=True, timeout=300, check=False)
            outputs.append((argv, completed.stdout, completed.stderr))
            return completed

        route = ["--https-proxy", stack.front.proxy_url, "--ca-file", str(stack.front.ca_file)]
        where = ["--state-dir", str(run.agent.state_dir)]
        assert loop("status", *where).returncode == 0
        assert loop("list").returncode == 0
        reported = loop(
            "report", "--repository", stack.repository, "--pr", str(run.pr_number), *route, "--gh", str(stack.gh)
        )
        assert reported.returncode == 0, reported.stdout + reported.stderr
        refused = loop(
            "init", "--checkout", str(stack.checkout), "--repository", stack.repository, "--base", "main",
            "--head", "fix/other", "--path", demo_stack.CHANGED_FILE, "--commit", "--push", "--mode",
            "approval-gated", "--reuse-pr", "999", *route, "--gh", str(stack.gh), "--registry", str(stack.registry),
        )  # fmt: skip
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert json.loads(refused.stdout)["errors"][0]["code"] == "intent-pr-mismatch"  # GitHub's answer, read with it
    finally:
        stack.stop()

    commands = {argv[1] for argv, _, _ in outputs}
    assert {"init", "next", "status", "list", "report"} <= commands, commands
    printed = [argv[1] for argv, out, err in outputs if SENTINEL in out + err]
    assert printed == []
    written = {root: files_holding(root, SENTINEL) for root in (stack.scratch / "state", stack.scratch / "cache")}
    written[stack.registry] = files_holding(stack.registry, SENTINEL)  # empty once the loop deleted its automation
    assert {root: holding for root, (_, holding) in written.items() if holding} == {}
    assert len(written[stack.scratch / "state"][0]) > 10  # the loop's whole state directory was read
    # The check can fail: the sentinel is what the simulator's gh stand-in keeps as its stored login.
    assert files_holding(stack.gh.parent, SENTINEL)[1] == ["gh-token"]
