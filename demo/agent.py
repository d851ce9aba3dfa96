"""The agent's side: every step is one real command, run as a subprocess exactly as an agent would run it.

Each command gets ``--observed-at`` with the simulated time (the heartbeat
clock is compressed, so the evaluator must judge at the World's instant, not
the machine's), and the simulated clock moves one second between commands.
The transcript keeps each command as typed, with the scratch directory
shortened to ``$DEMO`` for reading.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO

from demo.stack import Stack
from simulator.gh import gh_calls

ROOT = Path(__file__).resolve().parent.parent
LOOP = ROOT / "scripts" / "loop"  # the launcher SKILL.md gives: one isolated interpreter per command


class Missing(Exception):
    """A command the loop needs is not available in this checkout of the skill."""


@dataclass
class Agent:
    stack: Stack
    state_dir: str | None = None
    out: TextIO | None = None  # each command is printed as it starts, its wall time when it ends
    transcript: list[str] = field(default_factory=list)
    results: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    token_lookups: list[int] = field(default_factory=list)  # per loop.py command: how often it asked gh for a token

    def shorten(self, text: str) -> str:
        if self.state_dir:
            text = text.replace(self.state_dir, "$STATE")
        return text.replace(str(self.stack.scratch), "$DEMO").replace(str(ROOT), "$SKILL")

    def loop(self, command: str, *args: str, expect_ok: bool = True) -> dict[str, Any]:
        """Run ``loop.py COMMAND ARGS``; its one JSON line is the answer."""
        if not LOOP.is_file():
            raise Missing("scripts/loop")
        self.stack.world.clock.advance(timedelta(seconds=1))  # time passes between two commands
        where = ["--state-dir", self.state_dir] if self.state_dir and command != "init" else []
        argv = [str(LOOP), command, *where, *args, "--observed-at", self.stack.world.clock.iso()]
        shown = self.shorten(shlex.join(["scripts/loop", command, *where, *args]))
        # The route flags: init records them in the state directory, so no later command repeats them.
        self.transcript.append(shown.replace(" init ", " init $F ", 1) if command == "init" else shown)
        if self.out is not None:
            print(f"{'':>11}  $ {self.transcript[-1]}", end="", file=self.out, flush=True)
        began, asked = time.monotonic(), gh_calls(self.stack.gh).count("auth token")
        environment = self.stack.environment()
        # The skill here has no private environment: the launcher runs the first python3 on PATH, this one.
        environment["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), environment["PATH"]])
        completed = subprocess.run(
            [*argv, *self.stack.network_flags()],
            env=environment,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=ROOT,
        )
        self.token_lookups.append(gh_calls(self.stack.gh).count("auth token") - asked)
        if self.out is not None:
            print(f"  ({time.monotonic() - began:.1f} s)", file=self.out, flush=True)
        lines = completed.stdout.splitlines()
        if completed.returncode == 2 and "invalid choice" in completed.stderr:
            raise Missing(f"loop.py {command}")
        if len(lines) != 1:
            raise RuntimeError(
                f"loop.py {command} printed {len(lines)} lines (exit {completed.returncode}): "
                f"{self.shorten(completed.stderr.strip()[-400:])}"
            )
        result: dict[str, Any] = json.loads(lines[0])
        messages = " ".join(str(error.get("message", "")) for error in result.get("errors", []))
        if completed.returncode == 2 and f"invalid choice: '{command}'" in messages:
            raise Missing(f"loop.py {command}")
        if completed.returncode == 2 and "unrecognized arguments: --https-proxy" in messages:
            raise Missing(f"loop.py {command} --https-proxy/--ca-file (the route to the simulated github.com)")
        self.results.append((command, result))
        if expect_ok and not result.get("ok"):
            raise Refused(command, result)
        return result

    def tool(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Codex's automation_update tool, called with the payload exactly as the hands printed it."""
        self.transcript.append("automation_update " + json.dumps(payload, separators=(",", ":")))
        return self.stack.host.automation_update(payload)


class Refused(Exception):
    def __init__(self, command: str, result: dict[str, Any]):
        self.command, self.result = command, result
        codes = ", ".join(error.get("code", "?") for error in result.get("errors", []))
        super().__init__(f"loop.py {command} refused: {codes}")
