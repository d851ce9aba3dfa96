"""Benchmark of `evaluate_state.py --initial` (run: python bench/initial.py [--runs N]).

(i)  start-up: median wall time of the whole CLI on the maximal fixture,
     started as a person starts it (`python scripts/evaluate_state.py
     --initial FIXTURE`, so its re-execution as `python -I -B` is counted),
     versus the floor: `python -I -B bench/startup_floor.py`, which imports
     pydantic and validates one strict one-field model (target ratio <= 1.3).
     Also shown, measured in the same interleaved rounds against the same
     floor: the CLI started as `python -I -B` already (no re-execution), and
     --state and --prompt.
     Every command runs in two environments, interleaved in the same rounds:
       bytecode     this interpreter's environment, whose third-party packages
                    hold the `.pyc` files pip compiled at install;
       no bytecode  a throwaway environment holding the same distributions
                    (requirements-runtime.lock, pydantic among them)
                    copied without any bytecode, as `pip install
                    --no-compile` leaves them; every run compiles the
                    third-party sources, and writes no cache (checked).
     The standard library keeps its own `.pyc` in both; the skill's code is
     compiled from source in both (the scripts never read bytecode for it).
(ii) core: parse_document + run_initial on a 10,000-path document versus
     json.loads + canonical bytes + sha256 of the same bytes.

With --layers it also times cumulative import layers (in the bytecode
environment, skill code loaded from source as the scripts load it), to show
where start-up time goes. Prints a table and exits 0; the figures are for
people (see bench/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = (
    True  # the skill's code directories hold no bytecode cache (references/automation-registry.md)
)
sys.path.insert(0, str(ROOT))

FIXTURE = ROOT / "fixtures" / "initial" / "valid" / "new-pr-branch-validate-commit-push.json"
SCRIPT = str(ROOT / "scripts" / "evaluate_state.py")
STATE = ROOT / "fixtures" / "state" / "scenarios" / "claim-plan--finalization.json"
PROMPT = ROOT / "fixtures" / "prompt" / "valid" / "new-pr.json"
FLOOR = str(ROOT / "bench" / "startup_floor.py")
TARGET = 1.3
RUNTIME_LOCK = ROOT / "requirements-runtime.lock"
FULL_LOCK = ROOT / "requirements.lock"
# What the floor imports (all in the runtime lock too; read from the full lock, which holds the same lines).
FLOOR_DISTRIBUTIONS = ("pydantic", "pydantic_core", "annotated-types", "typing-inspection", "typing_extensions")
# The skill's code directories: the scripts compile these from source whatever they hold.
CODE_DIRECTORIES = ("evaluator", "observe", "act", "scripts")
# No child may write bytecode: a first run would otherwise turn "no bytecode" into "bytecode".
CHILD_ENVIRONMENT = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}


def startup_commands(python: str, earlier: Path | None) -> dict[str, list[str]]:
    """Every start-up command, for one interpreter; timed in the same interleaved rounds."""
    commands = {
        "cli": [python, SCRIPT, "--initial", str(FIXTURE)],
        "floor": [python, "-I", "-B", FLOOR],
        "cli-isolated": [python, "-I", "-B", SCRIPT, "--initial", str(FIXTURE)],
        "state": [python, SCRIPT, "--state", str(STATE)],
        "prompt": [python, SCRIPT, "--prompt", str(PROMPT)],
    }
    if earlier is not None:  # the same CLI commands, run from another checkout's scripts
        other = str(earlier / "scripts" / "evaluate_state.py")
        for name in ("cli", "cli-isolated", "state", "prompt"):
            commands[f"earlier {name}"] = [other if arg == SCRIPT else arg for arg in commands[name]]
    return commands


def wall_time(argv: list[str]) -> float:
    return timed_run(argv)[0]


def timed_run(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one child; the CPU time (user + system) covers its re-executed self."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, cwd=ROOT, env=CHILD_ENVIRONMENT)
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"{argv} failed")
    return elapsed, usage.ru_utime + usage.ru_stime


Medians = dict[str, dict[str, tuple[float, float]]]  # environment -> command -> (wall, CPU) seconds


def startup_medians(environments: dict[str, str], earlier: Path | None, runs: int) -> Medians:
    """Median wall and CPU time of every command in every environment."""
    commands = {
        (env, name): argv
        for env, python in environments.items()
        for name, argv in startup_commands(python, earlier).items()
    }
    for argv in commands.values():  # warm the page cache
        timed_run(argv)
    times: dict[tuple[str, str], list[tuple[float, float]]] = {key: [] for key in commands}
    for _ in range(runs):  # interleaved, so a noisy neighbour hits every command alike
        for key, argv in commands.items():
            times[key].append(timed_run(argv))
    medians: Medians = {env: {} for env in environments}
    for (env, name), values in times.items():
        medians[env][name] = (statistics.median(v[0] for v in values), statistics.median(v[1] for v in values))
    return medians


def bytecode_files(directory: Path) -> int:
    return sum(1 for _ in directory.rglob("*.pyc"))


def pinned_distributions() -> list[tuple[str, str]]:
    """(name, version) of the runtime lock's distributions and of the floor's (pydantic and what it needs)."""
    pins = {}
    floor = {name.lower().replace("_", "-") for name in FLOOR_DISTRIBUTIONS}
    for lock in (RUNTIME_LOCK, FULL_LOCK):
        for line in lock.read_text(encoding="utf-8").splitlines():
            # A requirement line starts with name==version; its --hash lines follow, indented.
            name, _, version = (line.split() or [""])[0].partition("==")
            in_floor = name.lower().replace("_", "-") in floor
            if version and not line.startswith("#") and (lock is RUNTIME_LOCK or in_floor):
                pins[name] = version
    return sorted(pins.items())


@contextmanager
def environment_without_bytecode() -> Iterator[str]:
    """A throwaway venv holding the pinned distributions without bytecode; yields its python."""
    with tempfile.TemporaryDirectory(prefix="bench-no-bytecode-") as directory:
        target = Path(directory)
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(target)], check=True)
        [site_packages] = (target / "lib").glob("python3*/site-packages")
        for name, version in pinned_distributions():
            distribution = metadata.distribution(name)
            if distribution.version != version:
                raise SystemExit(f"{name} {distribution.version} is installed, the lock pins {version}")
            for file in distribution.files or ():
                if file.suffix in (".pyc", ".pyo") or "__pycache__" in file.parts or ".." in file.parts:
                    continue
                source = Path(str(distribution.locate_file(file)))
                if source.is_file():
                    (site_packages / file).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(source, site_packages / file)
        python = str(target / "bin" / "python")
        yield python
        if bytecode_files(target):  # a cache written by a run would have measured the other case
            raise SystemExit(f"a run wrote bytecode into {target}: the no-bytecode figures are wrong")


# Each layer runs everything the one before it ran, plus one step; the last
# row is a reference: the floor's own work. Skill code is found by the
# scripts' own finder, so it is compiled from source as in a real run,
# whatever bytecode the checkout holds.
FINDER = (
    "import sys\n"
    f"_loader = {str(ROOT / 'scripts' / 'isolation.py')!r}\n"
    "_isolation = {'__name__': 'isolation', '__file__': _loader}\n"
    "exec(compile(open(_loader, 'rb').read(), _loader, 'exec'), _isolation)\n"
    f"sys.meta_path.insert(0, _isolation['SkillFinder']({str(ROOT)!r}))\n"
)
LAYERS = {
    "python -I -B -c pass": "pass",
    "+ the scripts' finder (scripts/isolation.py)": FINDER,
    "+ evaluator.models.common (pydantic, the base model)": FINDER + "import evaluator.models.common",
    "+ evaluator.models.initial (7 models, none built yet)": FINDER + "import evaluator.models.initial",
    "+ rules, checks, cli": FINDER
    + "import evaluator.models.initial, evaluator.rules.initial, evaluator.rules.risk, evaluator.checks, evaluator.cli",
    "+ run --initial on the fixture": FINDER + f"from evaluator.cli import main\nmain(['--initial', {str(FIXTURE)!r}])",
    "reference: the floor (bench/startup_floor.py)": f"exec(open({FLOOR!r}).read())",
}


def layer_minimums(runs: int) -> dict[str, float]:
    """Best of `runs` per layer: differences of minimums are steadier than of medians on a busy machine."""
    times: dict[str, list[float]] = {name: [] for name in LAYERS}
    for _ in range(runs):
        for name, code in LAYERS.items():
            times[name].append(wall_time([sys.executable, "-I", "-B", "-c", code]))
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

    evaluator()  # warm-up, so neither side pays a first-call cost
    baseline()
    return median_seconds(evaluator, repeats), median_seconds(baseline, repeats)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="CLI start-ups per command (default 15)")
    parser.add_argument("--paths", type=int, default=10_000, help="paths in the large document (default 10000)")
    parser.add_argument("--repeats", type=int, default=7, help="in-process repeats for the core (default 7)")
    parser.add_argument("--layers", action="store_true", help="also time cumulative start-up layers")
    parser.add_argument(
        "--against",
        type=Path,
        metavar="CHECKOUT",
        help="also time the CLI of another checkout (e.g. a worktree of an earlier commit) in the same rounds",
    )
    args = parser.parse_args()

    pydantic_files = metadata.distribution("pydantic").locate_file("pydantic")
    with environment_without_bytecode() as bare_python:
        startup = startup_medians({"bytecode": sys.executable, "no bytecode": bare_python}, args.against, args.runs)
    raw = large_document(args.paths)
    core, json_baseline = core_medians(raw, args.repeats)

    def row(label: str, seconds: float, ratio: float, cpu: tuple[float, float] | None = None) -> None:
        cpu_columns = f" {cpu[0] * 1000:>8.1f}ms {cpu[1]:>7.2f}" if cpu else ""
        print(f"{label:<58} {seconds * 1000:>8.1f}ms {ratio:>7.2f}{cpu_columns}")

    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cores")
    load = os.getloadavg() if hasattr(os, "getloadavg") else ()
    print("load average (1, 5, 15 min): " + ", ".join(f"{value:.2f}" for value in load))
    print(f"bytecode environment: {bytecode_files(Path(str(pydantic_files)))} .pyc files in {pydantic_files}")
    caches = sum(1 for name in CODE_DIRECTORIES for _ in (ROOT / name).rglob("__pycache__"))
    print(f"bytecode caches in the checkout's code directories: {caches} (the scripts never read them)")
    verdicts = []
    for env, medians in startup.items():
        print(f"\n{'start-up, ' + env:<58} {'median':>10} {'ratio':>7} {'CPU':>10} {'ratio':>7}")
        rows = [
            ("cli", "(i)  --initial CLI, maximal fixture (re-executes itself)"),
            ("floor", "     floor: python -I -B bench/startup_floor.py"),
            ("cli-isolated", "     python -I -B scripts/evaluate_state.py --initial"),
            ("state", "     --state CLI, claim-plan--finalization"),
            ("prompt", "     --prompt CLI, new-pr"),
        ]
        floor, floor_cpu = medians["floor"]
        for name, label in rows:
            for prefix, shown in (("", label), ("earlier ", "       the same, --against checkout")):
                if prefix + name in medians:
                    wall, cpu = medians[prefix + name]
                    row(shown, wall, wall / floor, (cpu, cpu / floor_cpu))
        ratio = medians["cli"][0] / floor
        verdicts.append(f"{env}: {ratio:.2f}, {'met' if ratio <= TARGET else 'NOT met'}")
    print(f"\n{'core':<58} {'median':>10} {'ratio':>7}")
    row(f"(ii) parse + run_initial, {args.paths} paths, {len(raw) / 1e6:.1f} MB", core, core / json_baseline)
    row("     json.loads + canonical bytes + sha256", json_baseline, 1.0)
    if args.layers:
        print(f"\n{'start-up layer (cumulative, bytecode environment)':<58} {'best':>10} {'step':>8}")
        previous = 0.0
        for name, seconds in layer_minimums(args.runs).items():
            step = "" if name.startswith("reference") else f"{(seconds - previous) * 1000:>+7.1f}"
            print(f"{name:<58} {seconds * 1000:>8.1f}ms {step:>8}")
            previous = seconds
    print(f"start-up target (--initial ratio <= {TARGET}): {'; '.join(verdicts)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
