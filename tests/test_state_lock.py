"""One command at a time per state directory: a second copy waits a bounded time, then answers loop-busy.

The holder here is a real second process taking the lock through the same
code every ``loop.py`` command uses (``act.core.statelock``); the waiting copy is
``loop.py`` itself. A holder killed by SIGKILL leaves the lock to the kernel,
which releases it: the next command takes it.
"""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from act import cli
from act.core import statelock
from simulator.fakegithub import PR_NUMBER, TOKEN
from tests import checkout_world

ROOT = Path(__file__).resolve().parent.parent
HOLDER = """
import sys, time
from pathlib import Path
from act.core import statelock
with statelock.command("execute"):
    statelock.hold(Path(sys.argv[1]))
    print("held", flush=True)
    time.sleep(120)
"""


@pytest.fixture
def made(tmp_path, fake, monkeypatch, capsys):
    world = checkout_world.build(tmp_path, fake, monkeypatch)
    args = ["init", *checkout_world.change_args(world), checkout_world.OFFLINE, "--mode", "autonomous"]
    result = run(capsys, world, *args, "--reuse-pr", str(PR_NUMBER))
    return world, Path(result["state_dir"])


def run(capsys, world, *args: str, status: int = 0) -> dict:
    route = ["--api-url", world["fake"].url, "--gh", str(world["gh"]), "--registry", str(world["registry"])]
    code = cli.main([*args, *route])
    out = capsys.readouterr().out
    assert TOKEN not in out
    result = json.loads(out)
    assert code == status, result
    return result


def start_holder(state_dir: Path) -> subprocess.Popen[str]:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(state_dir)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    assert holder.stdout is not None and holder.stdout.readline() == "held\n"
    return holder


def files(state_dir: Path) -> dict[str, bytes]:
    return {str(p): p.read_bytes() for p in sorted(state_dir.rglob("*")) if p.is_file() and p.name != "lock"}


def test_a_second_copy_waits_a_bounded_time_then_names_the_holder_and_writes_nothing(made, capsys):
    world, state_dir = made
    # init let go of the lock when it returned: another process takes it at once.
    holder = start_holder(state_dir)
    try:
        before = files(state_dir)
        began = time.monotonic()
        refused = run(capsys, world, "execute", "--state-dir", str(state_dir), status=1)
        waited = time.monotonic() - began
    finally:
        holder.kill()
        holder.wait()
    (error,) = refused["errors"]
    assert (error["code"], error["path"]) == ("loop-busy", "/state_dir")
    assert refused["holder"]["pid"] == holder.pid and refused["holder"]["command"] == "execute"
    assert f"pid {holder.pid}" in error["message"] and "`loop.py execute`" in error["message"]
    assert statelock.WAIT_SECONDS <= waited < statelock.WAIT_SECONDS + 5  # bounded: inside a 10 s tool call
    assert files(state_dir) == before  # nothing written, not even the ledger
    assert not (state_dir / "execution.json").exists()


def test_a_holder_killed_by_sigkill_leaves_the_lock_to_the_next_command(made, capsys):
    world, state_dir = made
    holder = start_holder(state_dir)
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    began = time.monotonic()
    status = run(capsys, world, "status", "--state-dir", str(state_dir))
    assert time.monotonic() - began < statelock.WAIT_SECONDS  # taken over at once, not after the wait
    assert status["pending_plan"] is not None
    successor = start_holder(state_dir)  # a writer, too, takes it at once (start_holder waits for "held")
    try:
        lock = state_dir / "lock"
        assert stat.S_IMODE(lock.lstat().st_mode) == 0o600 and stat.S_ISREG(lock.lstat().st_mode)
        named = json.loads(lock.read_text())  # the holder names itself, and nothing else
        assert set(named) == {"pid", "command", "since"} and named["pid"] == successor.pid
    finally:
        successor.kill()
        successor.wait()


def test_status_shares_the_lock_it_waits_for_a_writer_and_writes_nothing(made, capsys):
    world, state_dir = made
    holder = start_holder(state_dir)
    try:
        before = (state_dir / "lock").read_bytes()
        refused = run(capsys, world, "status", "--state-dir", str(state_dir), status=1)
    finally:
        holder.kill()
        holder.wait()
    assert refused["errors"][0]["code"] == "loop-busy" and refused["holder"]["pid"] == holder.pid
    assert (state_dir / "lock").read_bytes() == before  # a reader never names itself in the file


def test_list_takes_no_lock(made, capsys):
    world, state_dir = made
    holder = start_holder(state_dir)
    try:
        began = time.monotonic()
        (listed,) = run(capsys, world, "list")["loops"]
        assert time.monotonic() - began < statelock.WAIT_SECONDS and listed["state_dir"] == str(state_dir)
    finally:
        holder.kill()
        holder.wait()


def test_a_lock_file_that_is_a_symlink_is_refused(made, capsys, tmp_path):
    world, state_dir = made
    elsewhere = tmp_path / "elsewhere"
    elsewhere.write_text("")
    os.chmod(elsewhere, 0o600)
    (state_dir / "lock").unlink()
    (state_dir / "lock").symlink_to(elsewhere)
    refused = run(capsys, world, "status", "--state-dir", str(state_dir), status=1)
    assert refused["errors"][0]["code"] == "state-file-unsafe"
    assert elsewhere.read_text() == ""
