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
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
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
        made = run(environment, *loop, "init", *flags, "--checkout", str(scratch / "checkout"), "--repository",
                   "octo-org/gadgets", "--base", "main", "--head", "fix/greeting", "--path", "src/app.py",
                   "--create-branch", "--commit", "--push", "--mode", "autonomous", "--title", "Fix the greeting",
                   "--body", "The greeting said helo.")
        assert made["ok"], made
        where = ["--state-dir", made["state_dir"]]
        executed = run(environment, *loop, "execute", *flags, *where)
        assert executed["ok"] and executed["facts"]["pr_number"] == 1, executed
        created = run(environment, *loop, "automation-create", *flags, *where, "--pr", "1")
        answer = run(environment, "-m", "demo.serve", "tool", str(scratch), json.dumps(created["payload"]))
        assert answer["ok"], answer
        verified = run(environment, *loop, "verify-automation", *flags, *where, "--id",
                       answer["result"]["automationId"])
        assert verified["outcome"] in ("stub-paused", "created-active"), verified  # the host may save it ACTIVE
        assert run(environment, *loop, "list")["loops"][0]["run_id"] == made["run_id"]
    finally:
        served.terminate()
        served.wait(timeout=30)
    assert served.returncode in (0, -15)
