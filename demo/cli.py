"""``python -m demo [--scenario NAME] [--keep DIR]``: a whole approval-gated loop against the simulator.

Exit status: 0 when the scenario reached its expected end (``done`` for the
happy path, the documented stop for the others), 1 otherwise (including a
command of the loop that is missing from this checkout), 2 for a usage error.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TextIO

from demo.driver import Run
from demo.scenarios import SCENARIOS, Scenario
from demo.stack import start
from simulator.codex import CodexReviewer

DELAY_SECONDS = 180  # Codex answers three simulated minutes after a request


def parser() -> argparse.ArgumentParser:
    lines = "\n".join(f"  {s.name:<12} {s.summary} (expects {s.expect})" for s in SCENARIOS.values())
    made = argparse.ArgumentParser(
        prog="python -m demo",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Run a whole approval-gated github-codex-pr-loop locally against the simulated GitHub, Codex and "
        "automation host. Needs no network, no token and no Codex install.",
        epilog=f"scenarios:\n{lines}\n\nexit status: 0 when the scenario reached its expected end (done, or the "
        "documented stop with no write after it), 1 otherwise, 2 for a usage error.",
    )
    made.add_argument("--scenario", choices=sorted(SCENARIOS), default="happy", help="which run (default: happy)")
    made.add_argument("--keep", metavar="DIR", help="run in DIR and keep it (default: a temporary directory, removed)")
    made.add_argument("--quiet", action="store_true", help="print only the summary")
    made.add_argument(
        "--as-a-person",
        action="store_true",
        help="a person's machine: the real gh (on PATH, at a Homebrew-like path, logged in through hosts.yml, "
        "no token variable) and the commit identity only in ~/.gitconfig",
    )
    return made


def run_scenario(scenario: Scenario, scratch: Path, out: TextIO, *, as_a_person: bool = False) -> Run:
    stack = start(scratch, as_a_person=as_a_person)
    try:
        CodexReviewer(stack.world, list(scenario.codex), delay=DELAY_SECONDS, on_ready=list(scenario.codex_on_ready))
        run = Run(stack, out, hooks=dict(scenario.hooks))
        run.run()
        return run
    finally:
        stack.stop()


def main(argv: list[str] | None = None) -> int:
    arguments = parser().parse_args(argv)
    scenario = SCENARIOS[arguments.scenario]
    scratch = Path(arguments.keep) if arguments.keep else Path(tempfile.mkdtemp(prefix="codex-pr-loop-demo-"))
    out = open("/dev/null", "w") if arguments.quiet else sys.stdout  # noqa: SIM115
    began = time.monotonic()
    try:
        print(f"scenario {scenario.name}: {scenario.summary}", file=out)
        run = run_scenario(scenario, scratch / "run", out, as_a_person=arguments.as_a_person)
    finally:
        if not arguments.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    print("\ncommands, as an agent runs them ($F: the route flags, as `python -m demo.serve` prints them):", file=out)
    for line in run.agent.transcript:
        print(f"  {line}", file=out)
    reached = run.final == scenario.expect and not run.missing
    print(
        f"\nsummary: scenario {scenario.name} ended in {run.final} (expected {scenario.expect}); "
        f"{len(run.steps)} steps, {len(run.agent.transcript)} commands, {run.elapsed()} simulated, "
        f"{time.monotonic() - began:.1f} s wall"
    )
    if run.after_finalization:
        late = run.after_finalization
        print(f"after done: Codex said {late.get('late_codex_says')}: {late.get('next')}")
    if run.cleanup_outcome:
        print(f"cleanup after the stop: {run.cleanup_outcome}")
    for missing in run.missing:
        print(f"missing: {missing} is not available in this checkout; the loop could not go on", file=sys.stdout)
    return 0 if reached else 1
