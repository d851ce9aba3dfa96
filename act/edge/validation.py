"""``run-validation``: each planned argv, exactly, in the checkout, with nothing inherited (references/executor.md).

The isolation a plan records as ``no-network-minimal-env-checkout-only`` is
enforced where the operating system allows it, and refused where it does not:

- network: the command runs in a new, empty network namespace
  (``unshare --net``, with ``--map-root-user`` when not root, so no privilege
  is needed where user namespaces are allowed). Inside, not even loopback is
  up. A machine where that namespace cannot be made is refused with
  ``isolation-unavailable``, unless the plan's boundary is
  ``explicit-risk-acceptance`` (the person accepted running without it);
- environment: built from nothing: a fixed ``PATH``, ``LC_ALL=C``, and an
  empty private ``HOME`` and ``TMPDIR``; nothing of the caller's (no token)
  reaches the command;
- working directory: the checkout; a time limit ends the whole process group.

Not enforced (no sandbox here): the filesystem scopes. A command can still
read or write outside the checkout; the scope digests name the intent only
(references/git-execution-boundary.md).

Each command's exit status, standard output and standard error are kept in
the state directory; a failing command stops the plan (``validation-failed``).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import NamedTuple

from act.core.errors import ActError
from act.core.jsonedge import Document
from act.core.state_models import ValidationRun
from act.edge import progress
from evaluator import policy

TIMEOUT_SECONDS = 900
FIXED_PATH = "/usr/bin:/bin"
UNSHARE = "/usr/bin/unshare"


def namespace_prefix() -> list[str]:
    prefix = [UNSHARE, "--net"]
    if os.geteuid() != 0:
        prefix.append("--map-root-user")
    return [*prefix, "--"]


def network_isolation_available() -> bool:
    """Whether this machine can start a command in a new network namespace (tried, not assumed)."""
    if not os.path.isfile(UNSHARE):
        return False
    try:
        completed = subprocess.run(
            [*namespace_prefix(), "/bin/true"], capture_output=True, timeout=30, env={"PATH": FIXED_PATH}, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return completed.returncode == 0


class Ran(NamedTuple):
    """One command's end: its exit status (-9 when the time limit ended it) and both streams."""

    exit_status: int
    stdout: bytes
    stderr: bytes
    timed_out: bool


def run_commands(
    commands: Sequence[Document],
    checkout: str,
    isolation: str,
    output_dir: Path,
    *,
    timeout: float = TIMEOUT_SECONDS,
) -> list[ValidationRun]:
    """Run every command in order (the plan's ``commands``); each result is kept; the first failure stops with
    ``validation-failed``."""
    isolated = isolation == policy.ISOLATED
    if isolated and not network_isolation_available():
        from act.edge.sandbox import isolation_advice

        raise ActError(
            "isolation-unavailable",
            "the plan requires no-network isolation and this machine cannot start a command in a new network namespace "
            "(unshare --net); nothing is run. Run the loop on a machine where user namespaces are allowed, "
            "or plan again without validation commands (no --command), so the plan has no run-validation."
            + isolation_advice(),
            path="/execution_boundary/isolation",
        )
    output_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    results: list[ValidationRun] = []
    for index, command in enumerate(commands):
        argv: list[str] = list(command["argv"])
        progress.say(f"run-validation: command {index + 1} of {len(commands)} ({os.path.basename(argv[0])})")
        ran = _run_one(argv, checkout, isolated, timeout)
        for stream, data in (("stdout", ran.stdout), ("stderr", ran.stderr)):
            path = output_dir / f"{index}.{stream}"
            path.write_bytes(data)
            path.chmod(0o600)
        result = ValidationRun(
            exit_status=ran.exit_status,
            timed_out=ran.timed_out,
            index=index,
            argv=argv,
            network_namespace=isolated,
        )
        results.append(result)
        if result.exit_status != 0:
            raise ActError(
                "validation-failed",
                f"validation command {index} ({argv[0]}) ended with {result.exit_status}; "
                f"its output is in {output_dir}; nothing more is done",
                path=f"/commands/{index}",
                details={"validation": [run.as_dict() for run in results]},
            )
    return results


def _run_one(argv: list[str], checkout: str, isolated: bool, timeout: float) -> Ran:
    scratch = tempfile.mkdtemp(prefix="loop-validation-")
    home, tmp = os.path.join(scratch, "home"), os.path.join(scratch, "tmp")
    os.mkdir(home, 0o700)
    os.mkdir(tmp, 0o700)
    environment = {"PATH": FIXED_PATH, "LC_ALL": "C", "HOME": home, "TMPDIR": tmp}
    full = [*namespace_prefix(), *argv] if isolated else argv
    try:
        process = subprocess.Popen(
            full,
            cwd=checkout,
            env=environment,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
    except OSError as error:
        shutil.rmtree(scratch, ignore_errors=True)
        return Ran(127, b"", f"cannot start: {error.strerror}\n".encode(), False)
    try:
        stdout, stderr = process.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        stdout, stderr = process.communicate()
        timed_out = True
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return Ran(-9 if timed_out else process.returncode, stdout, stderr, timed_out)
