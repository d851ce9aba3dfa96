"""Wall and CPU time of the README's test command, against another checkout's in the same rounds.

Runs ``python -m pytest`` (the README's command: pyproject.toml's options,
the fast hypothesis profile) in this checkout and in ``--against``, in turn
(A B, B A, A B ...), so both see the same machine. CPU time is user plus system of
everything the run waited for: pytest, its workers and every process a test
started. Prints each round, then the medians and the median of the per-round
ratios (this checkout / the other). Asserts nothing.

Run by hand: ``python bench/test_suite.py --against ../older-checkout [--runs N]``
(make the other checkout with ``git worktree add ../older-checkout <commit>``).
Each round takes about two minutes on two cores.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed_run(checkout: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the run and all it waited for) of the README's test command in ``checkout``."""
    environment = {key: value for key, value in os.environ.items() if key != "HYPOTHESIS_PROFILE"}
    began = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "pytest"],
        cwd=checkout,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.monotonic() - began
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(
            f"the tests failed in {checkout} (exit {process.returncode}), so the times would not compare;"
            " run `python -m pytest` there to see why"
        )
    return wall, usage.ru_utime + usage.ru_stime


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout (the baseline)")
    parser.add_argument("--runs", type=int, default=3, help="rounds, each one run in both checkouts (default 3)")
    arguments = parser.parse_args()
    if arguments.runs < 1:
        parser.error("--runs must be at least 1")
    baseline = arguments.against.resolve()
    if not (baseline / "pyproject.toml").is_file():
        parser.error(f"{baseline} is not a checkout of this project")
    rows = []
    for round_number in range(1, arguments.runs + 1):
        if round_number % 2:  # alternate which goes first, so neither always runs on a warmer machine
            ours, theirs = timed_run(ROOT), timed_run(baseline)
        else:
            theirs, ours = timed_run(baseline), timed_run(ROOT)
        rows.append((ours, theirs))
        print(
            f"round {round_number}: this checkout {ours[0]:5.1f} s wall {ours[1]:6.1f} s CPU;"
            f" baseline {theirs[0]:5.1f} s wall {theirs[1]:6.1f} s CPU",
            flush=True,
        )
    median = statistics.median
    print(f"\nmedians of {arguments.runs} rounds ({ROOT} against {baseline}):")
    print(f"  this checkout  wall {median(r[0][0] for r in rows):5.1f} s  CPU {median(r[0][1] for r in rows):6.1f} s")
    print(f"  baseline       wall {median(r[1][0] for r in rows):5.1f} s  CPU {median(r[1][1] for r in rows):6.1f} s")
    print(
        f"  ratio (per round, then the median)  wall {median(r[0][0] / r[1][0] for r in rows):.2f}"
        f"  CPU {median(r[0][1] / r[1][1] for r in rows):.2f}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
