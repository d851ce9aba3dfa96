"""How long a waiting wakeup's ``loop.py next`` takes, against Codex's 10-second shell yield.

Codex's shell tool returns after ``yield_time_ms`` (10,000 ms by default) and
a command still running comes back unfinished, to be polled by the model: a
wakeup's ``next`` that answers within the yield costs one model request,
one that does not costs at least two. This runs the demo's happy scenario
(the simulator as GitHub, Codex and the automation host; every command a real
``scripts/loop`` subprocess, as the agent runs it) and times every ``next``
by what it answered: the waiting wakeups (the evaluator said ``wait``: Codex
has not answered yet), and the others (plans executed, pushes, the
bootstrap), which are long by nature and print progress on standard error.

Beside each wall time, the CPU time it took (the command's processes and the
simulator's share): on a shared machine the wall time holds the queue for
the two cores, and the CPU time is what an idle machine would need.

Run by hand: ``python bench/wakeup_next.py [--runs N]``. Prints a
table; asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import os
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from demo import agent as demo_agent  # noqa: E402
from demo import cli  # noqa: E402
from demo.scenarios import SCENARIOS  # noqa: E402

YIELD_SECONDS = 10.0
_timed: list[tuple[str, str, float, float]] = []  # (command, what it answered, wall s, CPU s of its processes)
_original_loop = demo_agent.Agent.loop


def _timed_loop(self: demo_agent.Agent, command: str, *args: str, expect_ok: bool = True) -> dict[str, Any]:
    began, used = time.monotonic(), _children_cpu()
    result = _original_loop(self, command, *args, expect_ok=expect_ok)
    answered = str(result.get("action") or (result.get("you_do") or "")[:40] or result.get("ok"))
    _timed.append((command, answered, time.monotonic() - began, _children_cpu() - used))
    return result


def _children_cpu() -> float:
    """CPU seconds (user + system) of every finished child (the command, its re-execution, git, the evaluator)
    and of this process, where the simulator answers GitHub's requests: on an idle machine the wall time of a
    command that waits for nothing but these is about this figure."""
    children, own = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    return children.ru_utime + children.ru_stime + own.ru_utime + own.ru_stime


def one_run() -> list[tuple[str, str, float, float]]:
    _timed.clear()
    demo_agent.Agent.loop = _timed_loop  # type: ignore[method-assign]
    try:
        with tempfile.TemporaryDirectory(prefix="wakeup-next-") as scratch:
            cli.run_scenario(SCENARIOS["happy"], Path(scratch) / "run", io.StringIO())
    finally:
        demo_agent.Agent.loop = _original_loop  # type: ignore[method-assign]
    return list(_timed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2)
    arguments = parser.parse_args()
    waiting: list[tuple[float, float]] = []
    others: list[tuple[float, float]] = []
    loads = []
    for index in range(arguments.runs):
        timed = one_run()
        loads.append(os.getloadavg()[0])
        for command, answered, wall, cpu in timed:
            if command == "next":
                (waiting if answered == "wait" else others).append((wall, cpu))
        nexts = sum(1 for row in timed if row[0] == "next")
        print(f"run {index + 1}: {len(timed)} commands, {nexts} of them next; load average {loads[-1]:.1f}")
    print(f"\n{os.cpu_count()} cores; load average (1 min) after each run: {', '.join(f'{x:.1f}' for x in loads)}\n")
    print("| next that answered | count | wall median s | wall max s | CPU median s | CPU max s | wall within 10 s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, rows in (("wait (a waiting wakeup)", waiting), ("anything else", others)):
        if rows:
            walls, cpus = [wall for wall, _ in rows], [cpu for _, cpu in rows]
            within = sum(1 for wall in walls if wall <= YIELD_SECONDS)
            print(
                f"| {name} | {len(rows)} | {statistics.median(walls):.2f} | {max(walls):.2f} | "
                f"{statistics.median(cpus):.2f} | {max(cpus):.2f} | {within}/{len(rows)} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
