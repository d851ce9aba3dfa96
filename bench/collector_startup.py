"""Benchmark of the collector's start-up (run: python bench/collector_startup.py [--runs N]).

Times, interleaved in the same rounds, a fresh ``python -I -B`` that imports
the collector (``observe.collect``, which imports the GitHub client) and
builds one ``GitHubClient``, against one that only runs ``import ghapi.all``
(the baseline), and reports the median wall time and the peak resident memory
of each. No request is sent: this is what every wakeup pays before its first
request. Prints a table and exits 0; the figures are for people (see
bench/README.md).
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

COLLECTOR = (
    "import sys\n"
    f"sys.path.insert(0, {str(ROOT)!r})\n"
    "import observe.collect\n"
    "from observe.github.client import GitHubClient\n"
    "GitHubClient('octo-org/hello-world', host='https://api.github.com', token='ghp_' + 'x' * 36,"
    " use_cache=False, environ={}).close()\n"
    "assert 'pydantic' not in sys.modules, 'the collector imported pydantic'\n"
)
COMMANDS = {
    "collector: import observe.collect + one GitHubClient": [sys.executable, "-I", "-B", "-c", COLLECTOR],
    "baseline: import ghapi.all": [sys.executable, "-I", "-B", "-c", "import ghapi.all"],
}


def run(argv: list[str]) -> tuple[float, int]:
    """(wall seconds, peak resident KiB) of one child."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode != 0:
        raise SystemExit(f"{argv[-1][:40]!r} failed with {child.returncode}")
    return elapsed, usage.ru_maxrss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="start-ups per command (default 15)")
    args = parser.parse_args()
    for argv in COMMANDS.values():  # warm the page cache
        run(argv)
    times: dict[str, list[float]] = {name: [] for name in COMMANDS}
    memory: dict[str, list[int]] = {name: [] for name in COMMANDS}
    for _ in range(args.runs):  # interleaved, so a noisy neighbour hits both alike
        for name, argv in COMMANDS.items():
            seconds, kib = run(argv)
            times[name].append(seconds)
            memory[name].append(kib)
    baseline = statistics.median(times["baseline: import ghapi.all"])
    print(f"{'measurement':<56} {'median':>10} {'ratio':>7} {'peak RSS':>10}")
    for name in COMMANDS:
        median = statistics.median(times[name])
        print(f"{name:<56} {median * 1000:>8.1f}ms {median / baseline:>7.2f} {max(memory[name]) / 1024:>8.1f}MB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
