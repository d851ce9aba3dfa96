"""Benchmark of `evaluate_state.py --initial` (run: python bench/initial.py [--runs N]).

(i)  start-up: median wall time of the whole CLI on the maximal fixture versus
     `python -c "from pydantic import BaseModel"` (target ratio <= 1.5). The
     script re-executes itself as `python -I -B`, which starts a second
     interpreter; that start is counted. Also shown, measured in the same
     interleaved rounds: the re-executed process alone (`python -I -B
     scripts/evaluate_state.py`) against its own fair floor (`python -I -B -c
     "from pydantic import BaseModel"`), and --state and --prompt;
(ii) core: parse_document + run_initial on a 10,000-path document versus
     json.loads + canonical bytes + sha256 of the same bytes.

With --layers it also times cumulative import layers, to show where start-up
time goes. Prints a table and exits 0; the figures are for people (see
bench/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = (
    True  # the skill's code directories hold no bytecode cache (references/automation-registry.md)
)
sys.path.insert(0, str(ROOT))

FIXTURE = ROOT / "fixtures" / "initial" / "valid" / "new-pr-branch-validate-commit-push.json"
SCRIPT = str(ROOT / "scripts" / "evaluate_state.py")
CLI = [sys.executable, SCRIPT, "--initial", str(FIXTURE)]
PYDANTIC = [sys.executable, "-c", "from pydantic import BaseModel"]
STATE = ROOT / "fixtures" / "state" / "scenarios" / "claim-plan--finalization.json"
PROMPT = ROOT / "fixtures" / "prompt" / "valid" / "new-pr.json"
# Every start-up command, timed in the same interleaved rounds.
STARTUPS = {
    "cli": CLI,
    "floor": PYDANTIC,
    "cli-isolated": [sys.executable, "-I", "-B", SCRIPT, "--initial", str(FIXTURE)],
    "floor-isolated": [sys.executable, "-I", "-B", "-c", "from pydantic import BaseModel"],
    "state": [sys.executable, SCRIPT, "--state", str(STATE)],
    "prompt": [sys.executable, SCRIPT, "--prompt", str(PROMPT)],
}


def wall_time(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    return time.perf_counter() - started


def startup_medians(runs: int) -> dict[str, float]:
    for argv in STARTUPS.values():  # warm the page cache
        wall_time(argv)
    times: dict[str, list[float]] = {name: [] for name in STARTUPS}
    for _ in range(runs):  # interleaved, so a noisy neighbour hits every command alike
        for name, argv in STARTUPS.items():
            times[name].append(wall_time(argv))
    return {name: statistics.median(values) for name, values in times.items()}


# Each layer runs everything the one before it ran, plus one step; the last
# row is a reference: what building any first pydantic model costs.
LAYERS = {
    "python -c pass": "pass",
    "+ from pydantic import BaseModel": "from pydantic import BaseModel",
    "+ evaluator.models.common (Strict: the first model)": "import evaluator.models.common",
    "+ evaluator.models.initial (7 more models)": "import evaluator.models.initial",
    "+ rules, checks, cli (2 more models)": (
        "import evaluator.models.initial, evaluator.rules.initial, evaluator.rules.risk,"
        " evaluator.checks, evaluator.cli"
    ),
    "+ run --initial on the fixture": f"from evaluator.cli import main\nmain(['--initial', {str(FIXTURE)!r}])",
    "reference: pydantic + one trivial model": "from pydantic import BaseModel\nclass M(BaseModel):\n    x: int",
}


def layer_minimums(runs: int) -> dict[str, float]:
    """Best of `runs` per layer: differences of minimums are steadier than of medians on a busy machine."""
    times: dict[str, list[float]] = {name: [] for name in LAYERS}
    for _ in range(runs):
        for name, code in LAYERS.items():
            times[name].append(wall_time([sys.executable, "-c", code]))
    return {name: min(values) for name, values in times.items()}


def large_document(path_count: int) -> bytes:
    from tools import samples

    paths = sorted(f"src/pkg{index // 100:03d}/module_{index:05d}.py" for index in range(path_count))
    snapshot = samples.initial_snapshot(paths=paths)
    document = samples.seal_initial(snapshot, samples.initial_manifest(snapshot))
    return json.dumps(document, indent=2, ensure_ascii=False).encode("utf-8")


def median_seconds(action: Callable[[], object], repeats: int) -> float:
    durations = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()
        durations.append(time.perf_counter() - started)
    return statistics.median(durations)


def core_medians(raw: bytes, repeats: int) -> tuple[float, float]:
    from evaluator.canonical import canonical_bytes, parse_document
    from evaluator.checks import run_initial

    def evaluator() -> None:
        result = run_initial(parse_document(raw), approved_hash=None, risk_record=None)
        assert result["ok"], result

    def baseline() -> None:
        hashlib.sha256(canonical_bytes(json.loads(raw))).hexdigest()

    evaluator(), baseline()  # warm-up, so neither side pays a first-call cost
    return median_seconds(evaluator, repeats), median_seconds(baseline, repeats)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="CLI start-ups per command (default 15)")
    parser.add_argument("--paths", type=int, default=10_000, help="paths in the large document (default 10000)")
    parser.add_argument("--repeats", type=int, default=7, help="in-process repeats for the core (default 7)")
    parser.add_argument("--layers", action="store_true", help="also time cumulative start-up layers")
    args = parser.parse_args()

    startup = startup_medians(args.runs)
    cli, pydantic_import = startup["cli"], startup["floor"]
    raw = large_document(args.paths)
    core, json_baseline = core_medians(raw, args.repeats)

    def row(label: str, seconds: float, ratio: float) -> None:
        print(f"{label:<58} {seconds * 1000:>8.1f}ms {ratio:>7.2f}")

    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    print(f"{'measurement':<58} {'median':>10} {'ratio':>7}")
    row("(i)  --initial CLI, maximal fixture", cli, cli / pydantic_import)
    row('     python -c "from pydantic import BaseModel"', pydantic_import, 1.0)
    row("     --state CLI, claim-plan--finalization", startup["state"], startup["state"] / pydantic_import)
    row("     --prompt CLI, new-pr", startup["prompt"], startup["prompt"] / pydantic_import)
    isolated_floor = startup["floor-isolated"]
    row(
        "     python -I -B scripts/evaluate_state.py --initial",
        startup["cli-isolated"],
        startup["cli-isolated"] / isolated_floor,
    )
    row('     python -I -B -c "from pydantic import BaseModel"', isolated_floor, 1.0)
    row(f"(ii) parse + run_initial, {args.paths} paths, {len(raw) / 1e6:.1f} MB", core, core / json_baseline)
    row("     json.loads + canonical bytes + sha256", json_baseline, 1.0)
    if args.layers:
        print(f"\n{'start-up layer (cumulative)':<58} {'best':>10} {'step':>8}")
        previous = 0.0
        for name, seconds in layer_minimums(args.runs).items():
            step = "" if name.startswith("reference") else f"{(seconds - previous) * 1000:>+7.1f}"
            print(f"{name:<58} {seconds * 1000:>8.1f}ms {step:>8}")
            previous = seconds
    target = "met" if cli / pydantic_import <= 1.5 else "NOT met"
    print(f"start-up target (ratio <= 1.5): {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
