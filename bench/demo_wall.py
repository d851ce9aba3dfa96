"""Wall time of the demo's happy path, against a baseline measured in the same run.

The baseline is the cost the demo cannot avoid: starting the interpreter once
per command the demo runs (``python -c pass``, as many times as the demo ran
commands). The ratio says how much of the demo's time is the loop itself.
Run by hand: ``python bench/demo_wall.py [--runs N]``. Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import io
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from demo import cli  # noqa: E402
from demo.scenarios import SCENARIOS  # noqa: E402


def demo_once() -> tuple[float, int, str]:
    with tempfile.TemporaryDirectory(prefix="demo-bench-") as scratch:
        began = time.monotonic()
        run = cli.run_scenario(SCENARIOS["happy"], Path(scratch) / "run", io.StringIO())
        return time.monotonic() - began, len(run.agent.transcript), str(run.final)


def baseline(commands: int) -> float:
    began = time.monotonic()
    for _ in range(commands):
        subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.monotonic() - began


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    arguments = parser.parse_args()
    walls, bases = [], []
    for _ in range(arguments.runs):
        wall, commands, final = demo_once()
        walls.append(wall)
        bases.append(baseline(commands))
        print(f"demo happy path: {wall:6.1f} s, {commands} commands, ended in {final}; baseline {bases[-1]:5.1f} s")
    wall, base = statistics.median(walls), statistics.median(bases)
    print(f"\nmedian of {arguments.runs}: demo {wall:.1f} s, baseline {base:.1f} s, ratio {wall / base:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
