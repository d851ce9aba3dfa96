"""What one whole loop costs inside the real Codex CLI: model requests, polls, and the bytes each heartbeat injects.

One happy approval-gated loop (a finding, its fix, a clean review,
finalization) driven through ``codex exec`` and ``codex exec resume``, the
model played by demo/codex_loop.py's script on 127.0.0.1, the simulator as
GitHub, Codex review and the automation host (the same run as
tests/test_codex_loop.py). The skill is installed with each checkout's own
``python install.py`` into a fresh temporary HOME; the simulator and the
script are this checkout's. From the requests Codex sent:

- **model requests**: every POST to the provider (one model round trip each),
  in all and per heartbeat;
- **polls**: ``write_stdin`` calls, each for a command still running when
  Codex's shell yielded (about 10 s; machine speed moves this count);
- **commands**: ``exec_command`` calls (the ``loop`` commands and the edit);
- **largest output**: the largest command answer the model received, in
  bytes and in Codex's own token count; **truncated outputs**: answers Codex
  shortened (must be 0);
- **injected per heartbeat**: the text a heartbeat's first request adds to
  the thread, split into the automation prompt, the skill (Codex injects the
  whole SKILL.md because the prompt names ``$github-codex-pr-loop``) and the
  rest; beside it the size of SKILL.md itself;
- **request bytes**: all request bodies together (each resends the thread).

Run by hand from this checkout with the interpreter that has
requirements.lock installed (install.py copies its packages, offline):
``python bench/codex_loop.py [--against DIR] [--runs N] [--codex PATH]``.
``--against`` is another checkout (e.g. ``git worktree add ../main-before
COMMIT``), run in the same invocation, interleaved. About 3 minutes per loop.
Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE))

from demo.codex_loop import LoopRun, run_loop  # noqa: E402 (after the path above)


def figures(run: LoopRun, wall: float) -> dict[str, float]:
    heartbeats = [turn for turn in run.turns if turn.kind == "heartbeat"]
    injected = [run.injected(turn) for turn in heartbeats]
    outputs = [output for _, output in run.tool_outputs()]

    def median(values: list[int]) -> float:
        return float(statistics.median(values)) if values else 0.0

    return {
        "reached done": float(run.final == "done"),
        "turns": len(run.turns),
        "heartbeats": len(heartbeats),
        "person's replies": sum(1 for turn in run.turns if turn.kind == "reply"),
        "model requests": len(run.requests),
        "requests per heartbeat (median)": median([len(turn.requests) for turn in heartbeats]),
        "polls (write_stdin)": len(run.function_calls("write_stdin")),
        "commands (exec_command)": len(run.function_calls("exec_command")),
        "largest output (bytes)": max((len(o.output.encode()) for o in outputs), default=0),
        "largest output (Codex tokens)": max((o.original_tokens for o in outputs), default=0),
        "truncated outputs": sum(1 for o in outputs if o.truncated),
        "SKILL.md (bytes)": run.skill_md_bytes,
        "automation prompt (bytes)": len((run.automation_prompt or "").encode()),
        "injected/heartbeat: prompt": median([i["prompt"] for i in injected]),
        "injected/heartbeat: skill": median([i["skill"] for i in injected]),
        "injected/heartbeat: other": median([i["other"] for i in injected]),
        "injected/heartbeat: total": median([sum(i.values()) for i in injected]),
        "request bytes (all)": sum(run.request_sizes),
        "wall (s)": round(wall, 1),
    }


def _shown(value: float) -> str:
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.1f}"


def _cell(median: float, runs: list[float]) -> str:
    spread = min(runs) != max(runs)
    return _shown(median) + (f" ({_shown(min(runs))}-{_shown(max(runs))})" if spread else "")


def measure(checkout: Path, codex: str) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="codex-loop-bench-") as scratch:
        began = time.monotonic()
        run = run_loop(Path(scratch) / "run", checkout, codex)
        result = figures(run, time.monotonic() - began)
    if run.final != "done" or run.failures:
        print(f"{checkout}: the loop ended {run.final} {run.failures}", file=sys.stderr)
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", type=Path, help="another checkout (the baseline), measured in the same run")
    parser.add_argument("--runs", type=int, default=1, help="loops per checkout (medians)")
    parser.add_argument("--codex", default=shutil.which("codex"), help="the Codex CLI (default: codex on PATH)")
    arguments = parser.parse_args()
    if not arguments.codex:
        print("bench/codex_loop.py needs the Codex CLI: npm install -g @openai/codex@0.169.0", file=sys.stderr)
        return 2
    checkouts = {"this": HERE}
    if arguments.against is not None:
        checkouts["baseline"] = arguments.against.resolve()
    rounds: dict[str, list[dict[str, float]]] = {name: [] for name in checkouts}
    for _ in range(arguments.runs):  # interleaved: both checkouts see the same machine
        for name, checkout in checkouts.items():
            rounds[name].append(measure(checkout, arguments.codex))
    names = list(checkouts)
    print(f"one approval-gated loop through Codex: median of {arguments.runs} (min-max)")
    print(f"  {'':<34}" + "".join(f"{name:>26}" for name in names) + ("   ratio" if len(names) == 2 else ""))
    for key in rounds["this"][0]:
        values = [[r[key] for r in rounds[name]] for name in names]
        medians = [statistics.median(runs) for runs in values]
        ratio = f"{medians[0] / medians[1]:8.2f}" if len(medians) == 2 and medians[1] else ""
        cells = [_cell(median, runs) for median, runs in zip(medians, values, strict=True)]
        print(f"  {key:<34}" + "".join(f"{cell:>26}" for cell in cells) + ratio)
    return 0


if __name__ == "__main__":
    sys.exit(main())
