"""The repository as a Codex plugin marketplace, and every way a copy of the skill reaches a person.

The plugin directory is a committed copy of what the skill runs, written by
tools/build_plugin.py: it must be exactly what that script writes. The slow
tests use the real programs: the Codex CLI adds a fresh clone as a local
marketplace and installs the plugin into a temporary HOME and CODEX_HOME;
the copy it makes (without symlinks) and a plain copy of the repository
then run once their shared private environment is built, with the lock's
hashes checked, by the command their first answer names (its files fetched
from PyPI beforehand by .ci/run: ``LOCKED_WHEELHOUSE``, so no test needs the
network).
"""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from evaluator.version import VERSION
from tests.codex_cli import codex_binary, locked_wheelhouse

ROOT = Path(__file__).resolve().parent.parent
BUILD = runpy.run_path(str(ROOT / "tools" / "build_plugin.py"))
NAME = "github-codex-pr-loop"
PLUGIN = ROOT / "plugins" / NAME
SKILL = PLUGIN / "skills" / NAME
VALID_INITIAL = ROOT / "fixtures" / "initial" / "valid" / "new-pr-branch-validate-commit-push.json"


def test_the_committed_plugin_is_what_the_build_writes():
    assert BUILD["differences"]() == []


def test_the_plugin_holds_what_the_skill_runs_and_nothing_else():
    files = {p.relative_to(SKILL).as_posix() for p in SKILL.rglob("*") if not p.is_dir()}
    assert files == set(runpy.run_path(str(ROOT / "install.py"))["runtime_files"](ROOT))
    assert not [p for p in PLUGIN.rglob("*") if p.is_symlink()]
    tops = {p.name for p in SKILL.iterdir()}
    assert tops == {"SKILL.md", "LICENSE", "requirements-runtime.lock", "agents", "scripts", "references"} | {
        "evaluator",
        "observe",
        "act",
    }
    assert not {"tests", "simulator", "bench", "fixtures", "demo", "tools", ".venv"} & tops


def test_the_manifests_name_the_plugin_as_codex_reads_them():
    marketplace = json.loads((ROOT / ".agents" / "plugins" / "marketplace.json").read_text())
    [entry] = marketplace["plugins"]
    assert marketplace["name"] == NAME and entry["name"] == NAME
    assert entry["source"] == {"source": "local", "path": f"./plugins/{NAME}"}
    manifest = json.loads((PLUGIN / ".codex-plugin" / "plugin.json").read_text())
    assert manifest["name"] == NAME and manifest["skills"] == "./skills/"
    assert re.fullmatch(r"\d+\.\d+\.\d+", manifest["version"])
    assert manifest["version"] == VERSION  # evaluator/version.py, the one place the version is written
    front = (SKILL / "SKILL.md").read_text().split("---\n")[1]
    assert f"description: {manifest['description']}\n" in front


# -- with the real Codex CLI and the locked files ---------------------------------------------------------------


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """A temporary HOME, CODEX_HOME and XDG directories: nothing of the person's is read or written."""
    base = tmp_path_factory.mktemp("world")
    environ = {key: value for key, value in os.environ.items() if not key.startswith(("CODEX_", "XDG_"))}
    for name in ("HOME", "CODEX_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        (base / name).mkdir()
        environ[name] = str(base / name)
    # The person's python3: here one without the pinned packages (a venv of the base interpreter, no packages).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(base / "python")], check=True, timeout=300)
    environ["PATH"] = f"{base / 'python' / 'bin'}:{environ['PATH']}"
    return environ


@pytest.fixture(scope="module")
def plugin_copy(world: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The skill as `codex plugin add` installs it from a fresh clone added as a local marketplace."""
    clone = tmp_path_factory.mktemp("clone") / NAME
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=300)
    codex = [codex_binary(), "plugin"]
    added = subprocess.run(
        [*codex, "marketplace", "add", str(clone)], env=world, capture_output=True, text=True, timeout=300
    )
    assert added.returncode == 0, added.stderr
    installed = subprocess.run(
        [*codex, "add", f"{NAME}@{NAME}", "--json"], env=world, capture_output=True, text=True, timeout=300
    )
    assert installed.returncode == 0, installed.stderr
    answer = json.loads(installed.stdout)
    assert answer["pluginId"] == f"{NAME}@{NAME}"
    skill = Path(answer["installedPath"]) / "skills" / NAME
    assert skill.is_relative_to(Path(world["CODEX_HOME"]))  # Codex's plugin cache
    return skill


def run(world: dict[str, str], *argv: str, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    python3 = shutil.which("python3", path=world["PATH"])
    assert python3 is not None
    home = world["HOME"]
    return subprocess.run([python3, *argv], env=world, capture_output=True, text=True, timeout=timeout, cwd=home)


def judges_a_fixture(world: dict[str, str], skill: Path) -> None:
    helped = run(world, str(skill / "scripts" / "loop.py"), "--help")
    assert helped.returncode == 0 and helped.stdout.startswith("usage: loop.py"), helped.stdout + helped.stderr
    judged = run(world, str(skill / "scripts" / "evaluate_state.py"), "--initial", str(VALID_INITIAL))
    assert judged.returncode == 0, judged.stdout + judged.stderr
    assert json.loads(judged.stdout)["ok"] is True


@pytest.mark.slow
def test_the_plugin_codex_installs_runs_once_the_command_its_first_answer_names_has_built_its_environment(
    world: dict[str, str], plugin_copy: Path
) -> None:
    assert not [p for p in plugin_copy.rglob("*") if p.is_symlink()]
    assert not (plugin_copy / "tests").exists() and not (plugin_copy / "simulator").exists()
    first = run(world, str(plugin_copy / "scripts" / "evaluate_state.py"), "--initial", str(VALID_INITIAL))
    assert first.returncode == 2
    [error] = json.loads(first.stdout)["errors"]
    assert error["code"] == "dependency-missing"
    [command] = re.findall(r"`(python3 [^`]*environment\.py)`", error["message"])
    # The person's command, with the locked files fetched beforehand (.ci/run): --require-hashes, their
    # pip settings ignored, exactly as from PyPI.
    built = run(world, *command.split()[1:], *locked_wheelhouse())
    assert built.returncode == 0, built.stdout + built.stderr
    answer = json.loads(built.stdout)
    assert answer["ok"] is True and answer["built"] is True
    assert Path(answer["environment"]).is_relative_to(Path(world["XDG_DATA_HOME"]))
    judges_a_fixture(world, plugin_copy)
    again = run(world, *command.split()[1:])
    assert json.loads(again.stdout) == {**answer, "built": False}  # it exists: kept as it is


@pytest.mark.slow
def test_copies_without_symlinks_run_with_the_same_environment(
    world: dict[str, str], plugin_copy: Path, tmp_path: Path
) -> None:
    built = run(world, str(plugin_copy / "scripts" / "environment.py"), *locked_wheelhouse())
    assert built.returncode == 0, built.stdout + built.stderr
    # A plain copy of the plugin's skill where Codex looks for skills, and a copy of the whole
    # repository as `npx skills add` makes one: neither carries a symlink or an environment.
    plain = Path(world["HOME"]) / ".agents" / "skills" / NAME
    shutil.copytree(plugin_copy, plain, symlinks=False)
    whole = tmp_path / "whole"
    shutil.copytree(ROOT, whole, symlinks=False, ignore=shutil.ignore_patterns(".git", ".pycache", ".venv*"))
    for copy in (plain, whole):
        judges_a_fixture(world, copy)
    launcher = subprocess.run(
        [str(plain / "scripts" / "loop"), "--help"], env=world, capture_output=True, text=True, timeout=300
    )
    assert launcher.returncode == 0 and launcher.stdout.startswith("usage: loop.py"), launcher.stderr


# -- the environment builder's refusals (no network, nothing built) -----------------------------------


def builder(tmp_path: Path, root: Path = ROOT, **environ: str) -> subprocess.CompletedProcess[str]:
    env = {"PATH": os.environ["PATH"], "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"), **environ}
    command = [sys.executable, str(root / "scripts" / "environment.py")]
    return subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)


def test_the_builder_says_so_when_it_cannot_write_its_data_directory(tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")  # what a sandbox that keeps the directory unwritable looks like to mkdir
    refused = builder(tmp_path, XDG_DATA_HOME=str(tmp_path / "a-file"))
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    [error] = json.loads(refused.stdout)["errors"]
    assert error["code"] == "environment-build-failed" and "cannot write in" in error["message"]


def test_the_builder_refuses_a_lock_without_hashes(tmp_path: Path) -> None:
    skill = tmp_path / "skill"
    shutil.copytree(SKILL, skill)
    (skill / "requirements-runtime.lock").write_text("six==1.17.0\n")
    refused = builder(tmp_path, skill, XDG_DATA_HOME=str(tmp_path / "data"))
    assert refused.returncode == 1
    [error] = json.loads(refused.stdout)["errors"]
    assert (
        error["code"] == "environment-build-failed"
        and "six==1.17.0 is not name==version with hashes" in error["message"]
    )
    assert not (tmp_path / "data").exists()
