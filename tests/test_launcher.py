"""The scripts under an older launcher: one JSON line, never a traceback, and the skill's private environment.

macOS's ``/usr/bin/python3`` is 3.9; the skill's code needs 3.11. Each entry
point's prologue (and scripts/isolation.py, which it compiles before
re-executing) must parse and run on Python 3.6+, so such a launcher either
re-executes the script in the skill's private environment or prints
``python-too-old`` naming the command to run instead. Run with every older
interpreter this machine has (pyenv's, or ``python3.X`` on PATH).
"""

from __future__ import annotations

import ast
import glob
import json
import os
import re
import runpy
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from observe.evaluator_digest import CODE_DIRECTORIES

ROOT = Path(__file__).resolve().parent.parent
LAUNCHED = ["collect_state.py", "evaluate_state.py", "loop.py"]
# Where each script prints its errors: the collector keeps standard output for its documents.
ERRORS_ON = {"collect_state.py": "stderr", "evaluate_state.py": "stdout", "loop.py": "stdout"}
VALID_INITIAL = ROOT / "fixtures" / "initial" / "valid" / "new-pr-branch-validate-commit-push.json"


def older_pythons() -> list[str]:
    found = {}
    for minor in range(6, 11):
        candidates = sorted(glob.glob(f"/root/.pyenv/versions/3.{minor}.*/bin/python3.{minor}"))
        on_path = shutil.which(f"python3.{minor}")
        for candidate in [*candidates, *([on_path] if on_path else [])]:
            found.setdefault(minor, candidate)
    return [found[minor] for minor in sorted(found)]


OLDER = older_pythons()
needs_older = pytest.mark.skipif(not OLDER, reason="no Python older than 3.11 on this machine")


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    root = tmp_path / "skill"
    for directory in CODE_DIRECTORIES:
        shutil.copytree(ROOT / directory, root / directory, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "requirements-runtime.lock", root / "requirements-runtime.lock")
    return root


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An XDG_DATA_HOME holding the private environment of this repository's runtime lock (so of every test
    skill, which copies that lock), as scripts/environment.py builds it, here from this interpreter's pinned
    packages: exactly the locked distributions, in a venv of the base interpreter without its site-packages,
    whatever environment runs the tests (a venv at ``<clone>/.venv`` from a Python without the pins included)."""
    data = tmp_path_factory.mktemp("data")
    state = tmp_path_factory.mktemp("state")  # no live loop: the builder would refuse while one is
    builder = [sys.executable, str(ROOT / "scripts" / "environment.py"), "--packages-from", "current"]
    environ = {"PATH": "/usr/bin:/bin", "XDG_DATA_HOME": str(data), "XDG_STATE_HOME": str(state)}
    completed = subprocess.run(builder, capture_output=True, text=True, env=environ, timeout=600)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return data


def with_private_environment(skill: Path, data: Path) -> Path:
    """Make ``data`` the skill's XDG_DATA_HOME (its environment is there): the environment's interpreter."""
    skill.joinpath(".data").write_text(str(data))
    found = runpy.run_path(str(ROOT / "scripts" / "isolation.py"))["private_environment"]
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_DATA_HOME", str(data))
        python = Path(found(str(skill))) / "bin" / "python"
    assert python.exists()
    return python


def environ(skill: Path, path: str = "/usr/bin:/bin") -> dict[str, str]:
    """PATH, and the skill's XDG_DATA_HOME: the built environment's when the test gave one, else an empty one."""
    marker = skill / ".data"
    data = marker.read_text() if marker.exists() else str(skill.parent / "no-data")
    return {"PATH": path, "XDG_DATA_HOME": data}


def launch(python: str, skill: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    command = [python, str(skill / "scripts" / script), *args]
    return subprocess.run(command, cwd=skill.parent, capture_output=True, text=True, env=environ(skill), timeout=120)


@pytest.mark.parametrize("script", [*LAUNCHED, "isolation.py"])
def test_what_an_older_launcher_compiles_parses_as_python_3_6(script):
    ast.parse((ROOT / "scripts" / script).read_text(encoding="utf-8"), feature_version=(3, 6))


@needs_older
@pytest.mark.parametrize("python", OLDER)
@pytest.mark.parametrize("script", LAUNCHED)
def test_an_older_launcher_without_a_venv_gets_one_python_too_old_line(skill, python, script):
    completed = launch(python, skill, script, "--help")
    assert completed.returncode == 2
    errors, other = (completed.stdout, completed.stderr)[:: 1 if ERRORS_ON[script] == "stdout" else -1]
    assert other == "" and "Traceback" not in errors
    [line] = errors.splitlines()
    [error] = json.loads(line)["errors"]
    assert error["code"] == "python-too-old" and error["path"] == ""
    assert f"python3.11 {skill / 'scripts' / script}" in error["message"]
    assert f"python3.11 {skill / 'scripts' / 'environment.py'}" in error["message"]
    if script == "evaluate_state.py":
        assert json.loads(line)["check"] == "initial"


@needs_older
@pytest.mark.parametrize("python", OLDER)
def test_an_older_launcher_re_executes_in_the_skills_private_environment(skill, python, built):
    with_private_environment(skill, built)
    completed = launch(python, skill, "evaluate_state.py", "--initial", str(VALID_INITIAL))
    assert completed.returncode == 0, completed.stdout + completed.stderr
    [line] = completed.stdout.splitlines()
    assert json.loads(line)["ok"] is True


def test_loop_prints_a_missing_dependency_on_standard_output(skill, tmp_path):
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    completed = launch(str(bare / "bin" / "python"), skill, "loop.py", "--help")
    assert completed.returncode == 2 and completed.stderr == ""
    [line] = completed.stdout.splitlines()
    assert json.loads(line)["errors"][0]["code"] == "dependency-missing"


def test_the_installer_defaults_to_codexs_documented_skill_location(tmp_path):
    """``$HOME/.agents/skills`` by default, whatever CODEX_HOME says; --codex-home for older setups."""
    code = (
        "import runpy, sys; ns = runpy.run_path(sys.argv[1]); p = ns['_parser']();"
        "print(ns['_target'](p.parse_args(sys.argv[2:])))"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "old-codex")}

    def target(*args: str) -> str:
        command = [sys.executable, "-c", code, str(ROOT / "install.py"), *args]
        completed = subprocess.run(command, capture_output=True, text=True, env=env, timeout=60, check=True)
        return completed.stdout.strip()

    assert target() == str(tmp_path.resolve() / ".agents" / "skills" / "github-codex-pr-loop")
    assert target("--codex-home", str(tmp_path / "c")) == str(
        tmp_path.resolve() / "c" / "skills" / "github-codex-pr-loop"
    )


# The sh launcher: `scripts/loop ARGS` execs the command line loop.py would re-execute itself into, so one command
# is one interpreter. What proves it without tracing: the exact command the launcher execs (sh -x prints it) runs
# with sys.executable equal to the interpreter loop.py re-executes into, isolated, so launch() goes straight on.

LAUNCHER_PROBE = "import sys; print(sys.executable, sys.flags.isolated, sys.flags.dont_write_bytecode)"


def exec_line(launcher: Path, *args: str, path: str = "/usr/bin:/bin", skill: Path | None = None) -> str:
    """The command the launcher execs, from sh's own trace of its last command."""
    skill = skill or launcher.parent.parent
    traced = subprocess.run(
        ["/bin/sh", "-x", str(launcher), *args], capture_output=True, text=True, env=environ(skill, path), timeout=120
    )
    [line] = [line for line in traced.stderr.splitlines() if line.startswith("+ exec ")]
    return line.removeprefix("+ exec ")


def traced_as(argv: list[str]) -> set[str]:
    """How sh -x prints ``argv``: dash as is, bash quoted."""
    return {" ".join(argv), shlex.join(argv)}


def test_the_launcher_is_executable_and_posix_sh():
    launcher = ROOT / "scripts" / "loop"
    assert launcher.stat().st_mode & 0o111 == 0o111
    assert launcher.read_text(encoding="utf-8").startswith("#!/bin/sh\n")
    listed = subprocess.run(["git", "ls-files", "-s", "scripts/loop"], cwd=ROOT, capture_output=True, text=True)
    assert listed.stdout.startswith("100755 ")  # a fresh clone gets it executable too
    for shell in ("/bin/sh", shutil.which("dash"), shutil.which("bash")):
        if shell:
            assert subprocess.run([shell, "-n", str(launcher)], timeout=60).returncode == 0


def test_the_launcher_execs_the_private_environment_isolated_and_launch_goes_straight_on(skill, built):
    private = with_private_environment(skill, built)
    argv = [str(private), "-I", "-B", str(skill / "scripts" / "loop.py"), "list", "--format", "text"]
    assert exec_line(skill / "scripts" / "loop", "list", "--format", "text") in traced_as(argv)
    # What launch() compares: it re-executes unless this is already its target, isolated, without bytecode.
    probed = subprocess.run([*argv[:3], "-c", LAUNCHER_PROBE], capture_output=True, text=True, timeout=120)
    assert probed.stdout.split() == [str(private), "1", "1"]
    completed = subprocess.run(
        [str(skill / "scripts" / "loop"), "--help"], capture_output=True, text=True, env=environ(skill)
    )
    assert completed.returncode == 0 and completed.stdout.startswith("usage: loop.py"), completed.stderr


def test_the_launcher_finds_the_skill_through_a_symlink_and_a_path_with_spaces(tmp_path, built):
    skill = tmp_path / "my skills" / "github-codex-pr-loop"
    for directory in CODE_DIRECTORIES:
        shutil.copytree(ROOT / directory, skill / directory, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "requirements-runtime.lock", skill / "requirements-runtime.lock")
    private = with_private_environment(skill, built)
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "loop").symlink_to(skill / "scripts" / "loop")  # ~/bin/loop, an absolute link
    (tmp_path / "bin" / "again").symlink_to("loop")  # and a relative link to that link
    for name in ("loop", "again"):
        argv = [str(private), "-I", "-B", str(skill / "scripts" / "loop.py"), "--help"]
        assert exec_line(tmp_path / "bin" / name, "--help", skill=skill) in traced_as(argv)
        completed = subprocess.run(
            [str(tmp_path / "bin" / name), "--help"], capture_output=True, text=True, env=environ(skill)
        )
        assert completed.returncode == 0 and completed.stdout.startswith("usage: loop.py"), completed.stderr


def test_the_launcher_without_a_private_environment_runs_the_first_python3_on_path(skill, tmp_path):
    found = tmp_path / "found"
    found.mkdir()
    (found / "python3").symlink_to(sys.executable)
    argv = [str(found / "python3"), "-I", "-B", str(skill / "scripts" / "loop.py"), "--help"]
    assert exec_line(skill / "scripts" / "loop", "--help", path=f"{found}:/usr/bin:/bin") in traced_as(argv)


def test_the_launcher_without_any_interpreter_prints_one_json_line(skill, tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    command = ["/bin/sh", str(skill / "scripts" / "loop"), "init"]
    completed = subprocess.run(command, capture_output=True, text=True, env=environ(skill, str(empty)))
    assert completed.returncode == 2 and completed.stderr == ""
    [line] = completed.stdout.splitlines()
    [error] = json.loads(line)["errors"]
    assert error["code"] == "dependency-missing" and error["path"] == ""
    hint = runpy.run_path(str(ROOT / "scripts" / "isolation.py"))["build_hint"](os.path.realpath(skill))
    assert error["message"].endswith(hint)  # the same words as every script's


@pytest.mark.skipif(shutil.which("strace") is None, reason="needs strace to count the interpreters started")
def test_one_launcher_command_is_one_interpreter_where_loop_py_is_two(skill, tmp_path, built):
    with_private_environment(skill, built)

    def interpreters(*command: str) -> int:
        trace = tmp_path / "trace"
        subprocess.run(
            ["strace", "-f", "-qq", "-e", "trace=execve", "-o", str(trace), *command, "--help"],
            capture_output=True, env=environ(skill), timeout=120, check=True,
        )  # fmt: skip
        started = re.findall(r'execve\("([^"]+)".* = 0$', trace.read_text(), re.M)
        return sum(1 for program in started if os.path.basename(program).startswith("python"))

    assert interpreters(str(skill / "scripts" / "loop")) == 1
    assert interpreters(sys.executable, str(skill / "scripts" / "loop.py")) == 2


@needs_older
@pytest.mark.parametrize("python", OLDER)
def test_the_launcher_with_an_older_python3_on_path_gets_one_python_too_old_line(skill, tmp_path, python):
    found = tmp_path / "found"
    found.mkdir()
    (found / "python3").symlink_to(python)  # macOS's python3 is 3.9
    completed = subprocess.run(
        [str(skill / "scripts" / "loop"), "--help"], capture_output=True, text=True, env=environ(skill, f"{found}:/bin")
    )
    assert completed.returncode == 2 and completed.stderr == ""
    [line] = completed.stdout.splitlines()
    [error] = json.loads(line)["errors"]
    assert error["code"] == "python-too-old" and "scripts/environment.py`" in error["message"]
