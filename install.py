#!/usr/bin/env python3
"""Install, upgrade or uninstall the github-codex-pr-loop skill (standard library only).

    python install.py [--codex-home DIR | --project DIR] [--upgrade | --uninstall] [--force]

The skill goes to ``$HOME/.agents/skills/github-codex-pr-loop``, where Codex
now looks for a user's skills; with ``--project DIR`` to the repository-local
``DIR/.agents/skills/github-codex-pr-loop``; with ``--codex-home DIR`` (older
Codex setups, which read ``$CODEX_HOME/skills``) to
``DIR/skills/github-codex-pr-loop``. Only the runtime parts are copied
(RUNTIME_FILES, RUNTIME_DIRECTORIES and the packages the scripts load). The
skill's private environment, holding exactly requirements-runtime.lock, is
the one every copy of the skill shares (scripts/environment.py builds it, in
``$XDG_DATA_HOME/github-codex-pr-loop/env/<lock SHA-256>``): the scripts
re-execute into it, so nothing needs activating, and one that exists is
kept. ``.install-record.json`` records the SHA-256 of every installed file;
upgrade and uninstall refuse a modified install unless ``--force``. An
upgrade that changes nothing changes nothing; one that changes files
refuses while a loop is live (naming the loops), unless ``--force``, and is
built and checked beside the old install, then swapped in.

``--python-env-from current`` (tests, offline machines) copies the locked
distributions of the installing interpreter into the private environment
instead of downloading them, after checking that they hold every pinned
version exactly. How the
installed skill runs and what is pinned: references/automation-registry.md.
"""

from __future__ import annotations

import argparse
import ctypes
import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

SKILL_NAME = "github-codex-pr-loop"
SOURCE = Path(__file__).resolve().parent
RUNTIME_FILES = ("SKILL.md", "LICENSE", "requirements-runtime.lock")
RUNTIME_DIRECTORIES = ("agents", "scripts", "references")
RECORD = ".install-record.json"
# Where installs before the shared environment kept theirs: ignored when an old install is upgraded or removed.
OLD_PRIVATE_ENV = ".venv"
RECORD_FORMAT = 2
_SKIPPED = ("__pycache__",)


class InstallError(Exception):
    """A refusal: printed as one line, exit 1."""


def progress(step: str) -> None:
    """One line per step on stderr, as it starts (pip alone can take a minute); stdout keeps the one result line."""
    print(f"install.py: {step} ...", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if sys.version_info < (3, 11):  # noqa: UP036  (the interpreter a user happens to run)
        print("install.py needs Python 3.11 or later", file=sys.stderr)
        return 2
    target = _target(args)
    try:
        if not args.uninstall:
            warn_about_other_copies(target)
        if args.uninstall:
            uninstall(target, force=args.force)
            print(f"uninstalled {target}")
        else:
            changed = install(target, upgrade=args.upgrade, force=args.force, env_from=args.python_env_from)
            print(f"installed {target}" if changed else f"{target} already holds this version: nothing changed")
    except InstallError as error:
        print(f"install.py: {error}", file=sys.stderr)
        return 1
    return 0


def skill_version(source: Path = SOURCE) -> str:
    """The skill's version, read from evaluator/version.py's source (the one place it is written), never run."""
    import ast

    path = source / "evaluator" / "version.py"
    for node in ast.parse(path.read_text(encoding="utf-8"), str(path)).body:
        if isinstance(node, ast.Assign) and [getattr(t, "id", None) for t in node.targets] == ["VERSION"]:
            return str(ast.literal_eval(node.value))
    raise InstallError(f"{path} assigns no VERSION")


def _shown_version() -> str:
    try:
        return skill_version()
    except (InstallError, OSError, SyntaxError, ValueError):  # a broken clone: --help must still answer
        return "unknown (evaluator/version.py is missing or unreadable)"


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="install.py", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--version",
        action="version",
        version=f"%(prog)s (github-codex-pr-loop) {_shown_version()}",
        help="print the version of the skill this installs",
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--codex-home",
        metavar="DIR",
        help="an older Codex setup's home: install into DIR/skills (default: ~/.agents/skills)",
    )
    where.add_argument("--project", metavar="DIR", help="install into DIR/.agents/skills instead")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--upgrade", action="store_true", help="replace an existing install")
    what.add_argument("--uninstall", action="store_true", help="remove exactly what was installed")
    parser.add_argument(
        "--force", action="store_true", help="upgrade or uninstall even a modified install, or while a loop is live"
    )
    parser.add_argument(
        "--python-env-from",
        choices=["download", "current"],
        default="download",
        help="where the private environment's packages come from: pip (default) or this interpreter (offline)",
    )
    return parser


def skill_locations(environ: dict[str, str] | None = None) -> list[Path]:
    """Where Codex looks for a user's skills: ``~/.agents/skills``, and the older ``$CODEX_HOME/skills``."""
    environ = dict(os.environ) if environ is None else environ
    codex_home = Path(environ.get("CODEX_HOME") or Path.home() / ".codex").expanduser()
    return [Path.home().expanduser().resolve() / ".agents" / "skills", codex_home.resolve() / "skills"]


def warn_about_other_copies(target: Path) -> None:
    """Name any other copy of the skill Codex would also list (it then shows the skill twice)."""
    for location in skill_locations():
        other = location / SKILL_NAME
        if other != target and (other / "SKILL.md").exists():
            print(
                f"install.py: warning: {other} holds another copy of the skill; Codex reads both places and "
                f"lists the skill twice: remove one (`python install.py --uninstall` with the options that "
                f"installed it)",
                file=sys.stderr,
            )


def _target(args: argparse.Namespace) -> Path:
    if args.project:
        return Path(args.project).expanduser().resolve() / ".agents" / "skills" / SKILL_NAME
    if args.codex_home:
        return Path(args.codex_home).expanduser().resolve() / "skills" / SKILL_NAME
    # Codex's documented location of a user's skills; $CODEX_HOME no longer decides it.
    return Path.home().expanduser().resolve() / ".agents" / "skills" / SKILL_NAME


# --- what is installed ------------------------------------------------------


def runtime_files(source: Path = SOURCE) -> list[str]:
    """Every file the installed skill holds, relative POSIX paths in code-point order."""
    files = [name for name in RUNTIME_FILES if _plain_file(source / name)]
    if len(files) != len(RUNTIME_FILES):
        raise InstallError(f"{source} lacks one of {', '.join(RUNTIME_FILES)}")
    for directory in RUNTIME_DIRECTORIES + skill_packages(source):
        files += _walk(source, directory)
    return sorted(files)


def skill_packages(source: Path = SOURCE) -> tuple[str, ...]:
    """The packages the scripts load (scripts/isolation.py's PACKAGES), read without running skill code."""
    namespace: dict = {}
    loader = source / "scripts" / "isolation.py"
    exec(compile(loader.read_bytes(), str(loader), "exec"), namespace)  # stdlib-only module, compiled from source
    return tuple(sorted(namespace["PACKAGES"]))


def _walk(source: Path, directory: str) -> list[str]:
    top = source / directory
    if not top.is_dir() or top.is_symlink():
        raise InstallError(f"{top} is missing or not a plain directory")
    found = []
    for here, subdirectories, names in os.walk(top):
        subdirectories[:] = sorted(name for name in subdirectories if name not in _SKIPPED)
        for name in names:
            path = Path(here) / name
            if name.endswith((".pyc", ".pyo")):
                continue
            if not _plain_file(path):
                raise InstallError(f"{path} is not a plain file")
            found.append(path.relative_to(source).as_posix())
    return found


def _plain_file(path: Path) -> bool:
    return path.is_file() and not path.is_symlink()


def file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


# --- install, upgrade, uninstall ---------------------------------------------


def install(target: Path, *, upgrade: bool, force: bool, env_from: str) -> bool:
    """Install or upgrade; False when an upgrade finds the install already identical (then nothing is touched)."""
    if target.exists() or target.is_symlink():
        if not upgrade:
            raise InstallError(f"{target} exists; use --upgrade to replace it or --uninstall to remove it")
        record = check_unmodified(target, force=force)
        builder = environment_builder()
        current = {relative: file_sha256(SOURCE / relative) for relative in runtime_files()}
        environment = builder.private_environment(SOURCE) / "bin" / "python"
        if record.get("files") == current == _installed_files(target) and environment.exists():
            return False
        if not force:
            _refuse_if_loops_live(builder, f"upgrading {target}")
    elif upgrade:
        raise InstallError(f"nothing to upgrade at {target}")
    fresh = not target.exists()
    _ensure_environment(force=force, env_from=env_from)
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{SKILL_NAME}.new-", dir=target.parent))
    try:
        _build(staging)
        if fresh:
            os.rename(staging, target)
        else:
            _swap(staging, target)  # staging now holds the old install
        try:
            progress("checking the installed scripts from another directory")
            self_check(target)
        except InstallError:
            if fresh:
                shutil.rmtree(target)
            else:
                _swap(staging, target)  # the old install goes back in place
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return True


def environment_builder() -> Any:
    """scripts/environment.py of the source, compiled from its source (install.py imports no skill code)."""
    import types

    module = types.ModuleType("environment")
    module.__file__ = str(SOURCE / "scripts" / "environment.py")
    exec(compile(Path(module.__file__).read_bytes(), module.__file__, "exec"), module.__dict__)
    return module


def _refuse_if_loops_live(builder: Any, action: str) -> None:
    try:
        builder.refuse_if_loops_live(action)
    except builder.BuildError as error:
        raise InstallError(f"{error.message}") from None


def _ensure_environment(*, force: bool, env_from: str) -> None:
    """The shared private environment for this lock: kept when it exists, else built (refused while loops live)."""
    builder = environment_builder()
    try:
        builder.ensure(SOURCE, force=force, packages_from=env_from)
    except builder.BuildError as error:
        raise InstallError(f"{error.code}: {error.message}") from None


def _build(staging: Path) -> None:
    files = runtime_files()
    progress(f"copying {len(files)} files")
    for relative in files:
        destination = staging / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(SOURCE / relative, destination)
        if (SOURCE / relative).stat().st_mode & stat.S_IXUSR:  # the launcher (scripts/loop) runs as a program
            destination.chmod(0o755)
    environment = environment_builder().private_environment(SOURCE)
    record = {
        "format": RECORD_FORMAT,
        "skill": SKILL_NAME,
        "files": {relative: file_sha256(staging / relative) for relative in files},
        "private_environment": str(environment),
    }
    (staging / RECORD).write_text(json.dumps(record, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def uninstall(target: Path, *, force: bool) -> None:
    record = check_unmodified(target, force=force)
    for relative in record.get("files", {}):
        (target / relative).unlink(missing_ok=True)
    shutil.rmtree(target / OLD_PRIVATE_ENV, ignore_errors=True)
    (target / RECORD).unlink(missing_ok=True)
    for here, _subdirectories, _names in sorted(os.walk(target), key=lambda entry: -len(entry[0])):
        if not os.listdir(here):
            os.rmdir(here)
    if target.exists():
        left = sorted(p.relative_to(target).as_posix() for p in target.rglob("*") if not p.is_dir())
        print(f"left in place (not installed by install.py): {', '.join(left)}", file=sys.stderr)
    environment = record.get("private_environment")
    if isinstance(environment, str):
        print(f"the private environment {environment} stays: other copies of the skill share it", file=sys.stderr)


def check_unmodified(target: Path, *, force: bool) -> dict:
    """The install record, after checking the installed files still match it."""
    try:
        record = json.loads((target / RECORD).read_text(encoding="utf-8"))
        files = record["files"]
    except (OSError, ValueError, KeyError, TypeError):
        if force:
            return {"files": {}}
        message = f"{target} has no readable {RECORD}: not installed by install.py (--force to go on)"
        raise InstallError(message) from None
    changed = [relative for relative, digest in files.items() if not _matches(target / relative, digest)]
    present = {
        p.relative_to(target).as_posix()
        for p in target.rglob("*")
        if not p.is_dir() and p.relative_to(target).parts[0] not in (OLD_PRIVATE_ENV, RECORD)
    }
    added = sorted(present - set(files))
    if (changed or added) and not force:
        detail = ", ".join(sorted(changed) + [f"{name} (added)" for name in added])
        raise InstallError(f"{target} was modified since it was installed: {detail} (--force to go on)")
    return record


def _installed_files(target: Path) -> dict[str, str]:
    """What ``target`` holds now (its record and an old private environment aside): relative path -> SHA-256."""
    found = {}
    for path in sorted(target.rglob("*")):
        relative = path.relative_to(target)
        if relative.parts[0] in (OLD_PRIVATE_ENV, RECORD) or path.is_dir():
            continue
        found[relative.as_posix()] = file_sha256(path) if _plain_file(path) else "not a plain file"
    return found


def _matches(path: Path, digest: str) -> bool:
    return _plain_file(path) and file_sha256(path) == digest


def _swap(first: Path, second: Path) -> None:
    """Exchange two directories in one step where the kernel can (Linux renameat2), else by two renames."""
    if sys.platform == "linux":
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = getattr(libc, "renameat2", None)
        if renameat2 is not None:
            at_fdcwd, rename_exchange = -100, 2
            if renameat2(at_fdcwd, os.fsencode(first), at_fdcwd, os.fsencode(second), rename_exchange) == 0:
                return
    aside = first.with_name(first.name + ".swap")
    os.rename(second, aside)
    os.rename(first, second)
    os.rename(aside, first)


# --- the self-check ----------------------------------------------------------


def self_check(skill: Path) -> None:
    """Run the installed scripts from another directory: --help, and one real offline command each."""
    with tempfile.TemporaryDirectory(prefix="skill-check-") as elsewhere:
        for script in sorted((skill / "scripts").glob("*.py")):
            if script.name == "isolation.py":
                continue
            _expect(skill, [str(script), "--help"], elsewhere, {0})
        _expect(skill, [str(skill / "scripts" / "loop"), "--help"], elsewhere, {0}, interpreter=False)
        answer = _expect(skill, [str(skill / "scripts" / "evaluate_state.py"), "--initial", "-"], elsewhere, {1}, "{}")
        if json.loads(answer).get("ok") is not False:
            raise InstallError("the installed evaluator accepted an empty document")
        checkout = Path(elsewhere) / "checkout"
        git = ["git", "-C", str(checkout)]
        subprocess.run(["git", "init", "-q", str(checkout)], check=True, capture_output=True)
        subprocess.run([*git, "remote", "add", "origin", "https://github.com/o/r.git"], check=True)
        plain_file = os.path.realpath(shutil.which("git") or "/bin/sh")  # stands in for gh: nothing is pushed
        command = [str(skill / "scripts" / "collect_state.py"), "--gh", plain_file, "boundary"]
        answer = _expect(skill, [*command, "--checkout", str(checkout), "--repository", "o/r"], elsewhere, {0})
        if "transport_url_sha256" not in answer:
            raise InstallError("the installed collector printed no execution boundary")


def _expect(
    skill: Path, argv: list[str], cwd: str, codes: set[int], stdin: str = "", *, interpreter: bool = True
) -> str:
    command = [sys.executable, *argv] if interpreter else argv
    result = subprocess.run(command, cwd=cwd, input=stdin, capture_output=True, text=True, timeout=120, check=False)
    if result.returncode not in codes:
        shown = " ".join(Path(a).name if a.startswith(str(skill)) else a for a in argv)
        output = (result.stderr or result.stdout)[-1000:]
        raise InstallError(f"self-check `{shown}` exited {result.returncode}: {output}")
    return result.stdout


if __name__ == "__main__":
    sys.exit(main())
