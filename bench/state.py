"""Benchmark of the recurring evaluator core (run: python bench/state.py [--runs N]).

(i)  a state carrying a remediation plan with 10,000 paths, 2,000 actionable
     threads and 500 responses: parse_document + run_state, versus json.loads +
     canonical bytes + sha256 of the same bytes (target ratio <= 10);
(ii) growth: the same core at 1x (1,000 paths, 200 threads, 50 responses) and
     10x input (target ratio <= 12, i.e. close to linear).

Both sides are measured in this run, on this machine. Prints a table, exits 0.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = (
    True  # the skill's code directories hold no bytecode cache (references/automation-registry.md)
)
sys.path.insert(0, str(ROOT))

from evaluator.canonical import canonical_bytes, parse_document  # noqa: E402
from evaluator.checks import run_state  # noqa: E402
from tools import samples, state_scenarios  # noqa: E402


def planned_state(paths: int, threads: int, responses: int) -> bytes:
    state = state_scenarios.findings_state()
    state["actionable_codex_threads"] = sorted(
        (samples.thread(f"t{n:06d}") for n in range(threads)), key=lambda t: t["id"]
    )
    state["responses"] = [
        samples.response(
            "review-comment",
            2100000000 + n,
            clean=False,
            commit=state["request_head_sha"],
            created_at="2026-11-29T10:05:00Z",
        )
        for n in range(responses)
    ]
    manifest = samples.remediation_manifest(state)
    names = sorted(f"src/module_{n:05d}.py" for n in range(paths))
    manifest["paths"], manifest["path_records"] = names, [samples.path_record(name) for name in names]
    state = samples.with_plan(state, manifest)
    return json.dumps(state).encode("utf-8")


def core(raw: bytes) -> None:
    result = run_state(parse_document(raw), approved_hash=None, now=None)
    assert result["ok"] and result["action"] == "claim-plan", result.get("errors", result.get("action"))


def baseline(raw: bytes) -> None:
    hashlib.sha256(canonical_bytes(json.loads(raw))).hexdigest()


def median_seconds(work: Callable[[bytes], None], raw: bytes, runs: int) -> float:
    work(raw)  # warm-up: first use builds pydantic validators
    samples_taken = []
    for _ in range(runs):
        started = time.perf_counter()
        work(raw)
        samples_taken.append(time.perf_counter() - started)
    return statistics.median(samples_taken)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    runs = parser.parse_args().runs
    large = planned_state(10_000, 2_000, 500)
    small = planned_state(1_000, 200, 50)
    core_large, base_large = median_seconds(core, large, runs), median_seconds(baseline, large, runs)
    core_small = median_seconds(core, small, runs)
    print(f"{'measure':<58} {'seconds':>9} {'ratio':>7} {'target':>7}")
    label = "core, 10,000 paths / 2,000 threads / 500 responses"
    print(f"{label:<58} {core_large:9.3f} {core_large / base_large:7.2f} {'<= 10':>7}")
    print(f"{'  baseline: json.loads + canonical dump + sha256':<58} {base_large:9.3f}")
    print(f"{'core at 1x (1,000 / 200 / 50)':<58} {core_small:9.3f}")
    print(f"{'growth 1x -> 10x':<58} {'':9} {core_large / core_small:7.2f} {'<= 12':>7}")
    print(f"document size: {len(large):,} bytes")


if __name__ == "__main__":
    main()
