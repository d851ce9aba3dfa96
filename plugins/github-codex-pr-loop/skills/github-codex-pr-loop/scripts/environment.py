#!/usr/bin/env python3
"""Build the skill's private environment: the packages of requirements-runtime.lock, nothing else.

    python3 scripts/environment.py [--rebuild] [--force] [--wheelhouse DIR]

The environment lives outside the skill's files, at
``$XDG_DATA_HOME/github-codex-pr-loop/env/<SHA-256 of requirements-runtime.lock>``
(``~/.local/share`` by default), so every copy of the skill with the same
lock (a Codex plugin install, a plain copy, ``install.py``'s install, a
clone) finds and shares it, and a copy that lost its symlinks still runs.
pip installs exactly the lock, every file checked against the lock's hashes
(``--require-hashes``), from PyPI, ignoring the person's pip configuration
(no extra index, no constraints); pip itself is removed afterwards. An
environment that exists is kept as it is: an identical reinstall changes
nothing the evaluator pin covers. Building a new one (or ``--rebuild``)
while a loop is live is refused, naming the loops, unless ``--force``: the
loop's next wakeup would stop on the changed pin
(references/automation-registry.md#the-private-environment).

One JSON line on standard output: ``{"ok": true, "environment": DIR,
"built": BOOL}``, or ``{"ok": false, "errors": [...]}`` with exit 1
(``loops-live``, ``environment-build-failed``); progress on standard error.
Standard library only (it runs before the environment exists).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The loader's own rules (where the environment is, how a lock reads), compiled from its source as the scripts do.
_LOADER = ROOT / "scripts" / "isolation.py"
_ISOLATION: dict = {"__name__": "isolation"}
exec(compile(_LOADER.read_bytes(), str(_LOADER), "exec"), _ISOLATION)
APP: str = _ISOLATION["APP"]
RUNTIME_LOCK: str = _ISOLATION["RUNTIME_LOCK"]
# Automation stages after which a loop can no longer wake (act/loops.py's GONE): such a loop is not live.
GONE = ("deleted", "prompt-rejected")
_RUN_ID = re.compile(r"[0-9a-f]{32}")


class BuildError(Exception):
    """A refusal or a failed step: one structured error, exit 1."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code = code
        self.message = message


def progress(step: str) -> None:
    print(f"environment.py: {step} ...", file=sys.stderr, flush=True)


def private_environment(root: Path = ROOT) -> Path:
    found = _ISOLATION["private_environment"](str(root))
    if found is None:
        raise BuildError("environment-build-failed", f"{root / RUNTIME_LOCK} cannot be read")
    return Path(found)


def lock_requirements(root: Path = ROOT) -> list[str]:
    """``name==version`` of every requirement of the runtime lock, after checking each carries its hashes."""
    text = (root / RUNTIME_LOCK).read_text(encoding="utf-8")
    requirements = []
    for line in text.replace("\\\n", " ").splitlines():
        words = line.split()
        if not words or words[0].startswith("#"):
            continue
        if "==" not in words[0] or not any(word.startswith("--hash=sha256:") for word in words[1:]):
            raise BuildError("environment-build-failed", f"{RUNTIME_LOCK}: {words[0]} is not name==version with hashes")
        requirements.append(words[0])
    if not requirements:
        raise BuildError("environment-build-failed", f"{RUNTIME_LOCK} names no requirement")
    return requirements


def live_loops(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The loops whose automation can still wake (``loop.py list``: ``can_forget`` false), described one each.

    Read with the standard library, as act/loops.py reads them: the state
    directories under ``$XDG_STATE_HOME/github-codex-pr-loop`` whose
    ``automation.json`` exists at a stage other than deleted or
    prompt-rejected. An ``automation.json`` that cannot be read counts as live.
    """
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    root = Path(base) / APP
    found = []
    for directory in sorted(root.iterdir()) if root.is_dir() else []:
        automation_file = directory / "automation.json"
        if not _RUN_ID.fullmatch(directory.name) or not automation_file.exists():
            continue
        stage = _read_object(automation_file).get("stage", "unreadable")
        if stage in GONE:
            continue
        intent = _read_object(directory / "intent.json")
        what = f"{intent.get('repository', '?')} {intent.get('head_branch', '?')}, automation {stage}"
        found.append(f"{directory.name} ({what}; --state-dir {directory})")
    return found


def _read_object(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


def refuse_if_loops_live(action: str, environ: Mapping[str, str] = os.environ) -> None:
    loops = live_loops(environ)
    if loops:
        raise BuildError(
            "loops-live",
            f"{action} would change what the evaluator pin covers, and the next wakeup of each live loop would stop "
            f"(evaluator-digest-changed): {'; '.join(loops)}. Let each loop finish, or stop it (the person deletes "
            "its automation), then run this again; --force goes on anyway",
        )


def ensure(
    root: Path = ROOT,
    *,
    rebuild: bool = False,
    force: bool = False,
    packages_from: str = "download",
    wheelhouse: Path | None = None,
) -> bool:
    """Make sure the private environment for ``root``'s lock exists; True when this call built it."""
    target = private_environment(root)
    requirements = lock_requirements(root)
    if (target / "bin" / "python").exists() and not rebuild:
        return False
    if not force:
        refuse_if_loops_live("building a new private environment")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.build-", dir=target.parent))
    except OSError as error:  # a sandbox that keeps the data directory read-only, a full disk
        raise BuildError(
            "environment-build-failed",
            f"cannot write in {target.parent} ({error.strerror}): run this command where that directory is "
            "writable (outside a sandbox that makes it read-only), or set XDG_DATA_HOME to a writable directory "
            "for every command of the skill",
        ) from None
    try:
        _build(root, staging, target, requirements, packages_from, wheelhouse)
        _place(staging, target)
    except OSError as error:
        raise BuildError("environment-build-failed", f"cannot build in {target.parent}: {error}") from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    _run([str(target / "bin" / "python"), "-I", "-B", str(root / "scripts" / "evaluate_state.py"), "--help"],
         "checking the environment runs the evaluator")  # fmt: skip
    return True


def _build(
    root: Path, staging: Path, target: Path, requirements: list[str], packages_from: str, wheelhouse: Path | None
) -> None:
    if packages_from == "current":
        _run([sys.executable, "-m", "venv", "--without-pip", str(staging)], "creating the private environment")
        _copy_current_distributions(requirements, _site_packages(staging))
    else:
        _run([sys.executable, "-m", "venv", str(staging)], "creating the private environment")
        pip = [str(staging / "bin" / "python"), "-I", "-m", "pip", "--isolated", "--disable-pip-version-check"]
        install = [*pip, "install", "--no-input", "--require-hashes", "--no-deps", "--only-binary", ":all:"]
        if wheelhouse is not None:  # the same files, fetched earlier: every one still checked against the lock
            install += ["--no-index", "--find-links", str(wheelhouse)]
        _run([*install, "--no-compile", "-r", str(root / RUNTIME_LOCK)], "pip install (hashes required)")
        _run([*pip, "check"], "pip check")
        # pip (and the setuptools venv adds before Python 3.12) was only the tool: it is not locked.
        _run([*pip, "uninstall", "--yes", "pip", "setuptools"], "removing pip from the private environment")
    # Bytecode compiled once, as if compiled where the environment will live: the same sources give the same
    # bytecode in every rebuild (references/automation-registry.md#bytecode-in-the-private-environment).
    site = _site_packages(staging)
    final_site = target / site.relative_to(staging)
    compiler = [str(staging / "bin" / "python"), "-I", "-m", "compileall", "-q", "-d", str(final_site), str(site)]
    _run(compiler, "compiling bytecode")


def _place(staging: Path, target: Path) -> None:
    """Move the built environment into place; one that appeared meanwhile (a concurrent build) is kept."""
    if target.exists():
        old = target.with_name(f".{target.name}.old-{os.getpid()}")
        os.rename(target, old)
        os.rename(staging, target)
        shutil.rmtree(old, ignore_errors=True)
        return
    try:
        os.rename(staging, target)
    except OSError:
        if not (target / "bin" / "python").exists():
            raise


def _copy_current_distributions(requirements: list[str], site_packages: Path) -> None:
    """Copy each locked distribution's source files (not its bytecode) from this interpreter (tests, offline).

    Its files are RECORD's, from the distribution this interpreter holds, after
    checking the pinned version; the evaluator pin later checks each against
    RECORD's hash. Files outside the site directory (console scripts) are left out.
    """
    from importlib.metadata import PackageNotFoundError, distribution

    for requirement in requirements:
        name, _, pinned = requirement.partition("==")
        try:
            found = distribution(name)
        except PackageNotFoundError:
            raise BuildError("environment-build-failed", f"this interpreter lacks {requirement}") from None
        if found.version != pinned:
            raise BuildError("environment-build-failed", f"this interpreter holds {name} {found.version}, not {pinned}")
        for listed in found.files or []:
            relative = str(listed)
            if relative.startswith("../") or relative.endswith(".pyc"):
                continue
            destination = site_packages / relative
            destination.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(Path(str(found.locate_file(listed))), destination)


def _site_packages(directory: Path) -> Path:
    found = list((directory / "lib").glob("python3*/site-packages"))
    if len(found) != 1:
        raise BuildError("environment-build-failed", f"cannot find the site-packages of {directory}")
    return found[0]


def pip_environment(environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """The environment pip runs in: none of the person's pip settings, no configuration file at all."""
    clean = {key: value for key, value in environ.items() if not key.upper().startswith("PIP_")}
    clean["PIP_CONFIG_FILE"] = os.devnull  # pip then reads no global, user or site configuration file
    return clean


def _run(argv: list[str], what: str) -> None:
    progress(what)
    result = subprocess.run(
        argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, env=pip_environment(), check=False
    )
    if result.returncode != 0:
        output = (result.stderr or result.stdout).strip()[-2000:]
        raise BuildError("environment-build-failed", f"{what} failed (exit {result.returncode}): {output}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="environment.py", description=__doc__.split("\n\n")[0])
    parser.add_argument("--rebuild", action="store_true", help="build it again even if it exists, then swap it in")
    parser.add_argument("--force", action="store_true", help="build even while a loop is live (it will stop)")
    parser.add_argument(
        "--packages-from",
        choices=["download", "current"],
        default="download",
        help="pip from PyPI (default), or copy the pinned packages of this interpreter (tests, offline)",
    )
    parser.add_argument(
        "--wheelhouse",
        type=Path,
        metavar="DIR",
        help="take the locked files from DIR instead of PyPI (pip download -r requirements-runtime.lock -d DIR); "
        "their hashes are checked all the same",
    )
    args = parser.parse_args(argv)
    if sys.version_info < (3, 11):  # noqa: UP036  (the interpreter a person happens to run)
        print("environment.py needs Python 3.11 or later", file=sys.stderr)
        return 2
    try:
        built = ensure(
            rebuild=args.rebuild, force=args.force, packages_from=args.packages_from, wheelhouse=args.wheelhouse
        )
        line = {"ok": True, "environment": str(private_environment()), "built": built}
    except BuildError as error:
        print(json.dumps({"ok": False, "errors": [{"code": error.code, "path": "", "message": error.message}]}))
        return 1
    print(json.dumps(line))
    return 0


if __name__ == "__main__":
    sys.exit(main())
