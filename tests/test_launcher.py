"""The scripts under an older launcher: one JSON line, never a traceback, and the skill's .venv when it has one.

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


def launch(python: str, skill: Path, script: str, *args: str) -> subprocess.CompletedProcess:
    command = [python, str(skill / "scripts" / script), *args]
    return subprocess.run(
        command, cwd=skill.parent, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=120
    )


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
    assert "python3.11 install.py" in error["message"]
    if script == "evaluate_state.py":
        assert json.loads(line)["check"] == "initial"


@needs_older
@pytest.mark.parametrize("python", OLDER)
def test_an_older_launcher_re_executes_in_the_skills_venv(skill, python):
    # The private environment install.py makes, here with this interpreter's (pinned) packages.
    subprocess.run(
        [sys.executable, "-m", "venv", "--system-site-packages", str(skill / ".venv")], check=True, timeout=120
    )
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
