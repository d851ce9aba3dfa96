"""A trial by hand: ``python -m demo.serve`` keeps the simulated world running for loop.py commands typed in a shell.

The test is the person: it starts ``serve``, reads the environment and the
flags it printed (``serve.json``), and runs the skill's own commands with
them, the automation tool through ``demo.serve tool``, with no
``--observed-at``: the world's clock follows the machine's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def run(environment: dict[str, str], *argv: str) -> dict:
    completed = subprocess.run(
        [sys.executable, *argv], env=environment, capture_output=True, text=True, timeout=300, cwd=ROOT
    )
    (line,) = completed.stdout.splitlines()
    return json.loads(line)


@pytest.mark.slow
def test_a_trial_by_hand_against_the_standalone_simulator(tmp_path):
    scratch = tmp_path / "trial"
    served = subprocess.Popen(
        [sys.executable, "-m", "demo.serve", "serve", str(scratch), "--codex-delay", "2"],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        for _ in range(600):
            if (scratch / "serve.json").exists():
                break
            assert served.poll() is None, served.stdout.read() if served.stdout else ""
            time.sleep(0.1)
        told = json.loads((scratch / "serve.json").read_text("utf-8"))
        environment = {**told["environment"], "PATH": os.environ["PATH"]}
        flags, loop = told["flags"], ["scripts/loop.py"]
        made = run(
            environment,
            *loop,
            "init",
            *flags,
            "--checkout",
            str(scratch / "checkout"),
            "--repository",
            "octo-org/gadgets",
            "--base",
            "main",
            "--head",
            "fix/greeting",
            "--path",
            "src/app.py",
            "--create-branch",
            "--commit",
            "--push",
            "--mode",
            "autonomous",
            "--title",
            "Fix the greeting",
            "--body",
            "The greeting said helo.",
        )
        assert made["ok"], made
        where = ["--state-dir", made["state_dir"]]
        told = run(environment, *loop, "next", *flags, *where)  # execute, then the first automation payload
        for _ in range(6):  # SKILL.md's way: pass each payload to the tool, then `next` again
            if "payload" not in told:
                break
            answer = run(environment, "-m", "demo.serve", "tool", str(scratch), json.dumps(told["payload"]))
            assert answer["ok"], answer
            again = ["--id", answer["result"]["automationId"]] if "--id ID" in told["then"] else []
            told = run(environment, *loop, "next", *flags, *where, *again)
        assert told["ok"] and "the loop is live" in told["you_do"], told
        assert told["then"].startswith("at every heartbeat")
        assert run(environment, *loop, "list")["loops"][0]["run_id"] == made["run_id"]
    finally:
        served.terminate()
        served.wait(timeout=30)
    assert served.returncode in (0, -15)
