"""What one whole loop costs, counted: the demo's happy and busy scenarios, here and in another checkout.

For each scenario and checkout, one demo run under ``strace -f -e
trace=execve`` (the run is the demo's own process, its commands and
everything they start), and from the trace:

- **commands**: the commands the agent ran (``loop.py`` and the automation
  tool, as the demo's transcript lists them), and of those the ``loop.py``
  commands;
- **python starts**: successful ``execve`` of a Python interpreter (the
  demo's ``loop.py`` commands, their re-executions, the evaluator's
  judgements, the collector if started);
- **judgements**: those whose argv names ``evaluate_state.py``;
- **git processes**: successful ``execve`` of git (its helpers, such as
  ``git-remote-https``, counted apart);
- **token lookups**: ``gh auth token`` runs, one per GitHub session: the
  number of GitHub clients a command builds is at most the number of its
  lookups (observe/github/connect.py);
- **wall**: the demo's wall time for that run (under strace: compare the
  two columns, not against runs without it).

The other checkout (``--against DIR``, e.g. a worktree of the previous main)
runs the same scenarios in the same invocation, interleaved, and the table
prints each count in both and their ratio, and whether judgements, git
processes, Python starts and token lookups are each at most the baseline's. Run by hand:
``python bench/loop_counts.py --against ../previous-main [--runs N] [--scenario happy]``;
needs ``strace``. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
# The counts a change may not raise: each at most the baseline's (marked in the table).
_AT_MOST = ("judgements", "git processes", "python starts", "token lookups")
SCENARIOS = ("happy", "busy")
_EXECVE = re.compile(r'^\d+\s+execve\("([^"]+)", \[(.*?)\](?:, 0x[0-9a-f]+ /\* \d+ vars \*/)?\) = 0', re.M)
# Run inside the checkout measured: its own demo, its own code.
_RUN = """
import io, json, sys, time
from pathlib import Path
from demo import cli
from demo.scenarios import SCENARIOS
began = time.monotonic()
run = cli.run_scenario(SCENARIOS[sys.argv[1]], Path(sys.argv[2]), io.StringIO())
tools = sum(1 for line in run.agent.transcript if line.startswith("automation_update"))
print(json.dumps({"final": run.final, "commands": len(run.agent.transcript), "tool calls": tools,
                  "wall": time.monotonic() - began}))
"""


def measure(checkout: Path, scenario: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="loop-counts-") as scratch:
        trace = Path(scratch) / "trace"
        completed = subprocess.run(
            ["strace", "-f", "-qq", "-s", "256", "-e", "trace=execve", "-o", str(trace)]
            + [sys.executable, "-c", _RUN, scenario, str(Path(scratch) / "run")],
            cwd=checkout,
            env={**os.environ, "PYTHONPATH": str(checkout)},
            capture_output=True,
            text=True,
            check=False,
        )
        if completed.returncode != 0:
            raise SystemExit(f"{checkout}: the demo failed: {completed.stderr.strip()[-800:]}")
        told = json.loads(completed.stdout.strip().splitlines()[-1])
        calls = _EXECVE.findall(trace.read_text(errors="replace"))
    programs = [(os.path.basename(path), argv) for path, argv in calls]
    return {
        "final is expected": float(told["final"] == "done"),
        "commands": told["commands"],
        "loop.py commands": told["commands"] - told["tool calls"],
        "python starts": sum(1 for name, _ in programs if name.startswith("python")) - 1,  # not the run itself
        "judgements": sum(1 for name, argv in programs if name.startswith("python") and "evaluate_state" in argv),
        "git processes": sum(1 for name, _ in programs if name == "git"),
        "git helpers": sum(1 for name, _ in programs if name.startswith("git-")),
        "token lookups": sum(1 for name, argv in programs if name == "gh" and '"auth", "token"' in argv),
        "wall (s, traced)": told["wall"],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, required=True, help="another checkout (the baseline)")
    parser.add_argument("--runs", type=int, default=1, help="runs per scenario and checkout (medians)")
    parser.add_argument(
        "--scenario", choices=SCENARIOS, action="append", help="only this scenario (repeatable; default: all)"
    )
    arguments = parser.parse_args()
    if shutil.which("strace") is None:
        print("bench/loop_counts.py needs strace", file=sys.stderr)
        return 2
    checkouts = {"this": HERE, "baseline": arguments.against.resolve()}
    for scenario in arguments.scenario or SCENARIOS:
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
        for _ in range(arguments.runs):  # interleaved: both checkouts see the same machine
            for name, checkout in checkouts.items():
                rounds[name].append(measure(checkout, scenario))
        print(f"\n{scenario} (median of {arguments.runs})")
        print(f"  {'':<20} {'this':>10} {'baseline':>10} {'ratio':>7}  at most the baseline's")
        for key in rounds["this"][0]:
            this = statistics.median(r[key] for r in rounds["this"])
            base = statistics.median(r[key] for r in rounds["baseline"])
            ratio = f"{this / base:7.2f}" if base else "      -"
            verdict = ("yes" if this <= base else "NO") if key in _AT_MOST else ""
            print(f"  {key:<20} {this:>10.1f} {base:>10.1f} {ratio}  {verdict}".rstrip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
