"""install.py: the skill installs from a fresh clone, runs from its installed copy
from any directory, upgrades and uninstalls symmetrically; every script reports
a missing dependency as one JSON line naming the package and the install command.
The installs beyond the shared one are marked slow: .ci/run runs them (-m slow)."""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tomllib
from importlib.metadata import distribution
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from observe.evaluator_digest import CODE_DIRECTORIES, evaluator_sha256

ROOT = Path(__file__).resolve().parent.parent
SKILL = "github-codex-pr-loop"
# The scripts that load the skill's code (the loader and the environment builder load none).
NOT_ENTRY_POINTS = ("isolation.py", "environment.py")
ENTRY_POINTS = sorted(p.name for p in (ROOT / "scripts").glob("*.py") if p.name not in NOT_ENTRY_POINTS)
VALID_INITIAL = "fixtures/initial/valid/new-pr-branch-validate-commit-push.json"


def run(argv, cwd, stdin="", python=sys.executable, timeout=180, env=None):
    return subprocess.run(
        [python, *argv], cwd=cwd, input=stdin, capture_output=True, text=True, timeout=timeout, check=False, env=env
    )


@pytest.fixture(scope="module", autouse=True)
def homes(tmp_path_factory):
    """This module's own HOME, CODEX_HOME, XDG_DATA_HOME (where the shared private environment is built) and
    XDG_STATE_HOME (where the loops are), for the installs and every script they run."""
    base = tmp_path_factory.mktemp("homes")
    with pytest.MonkeyPatch.context() as patch:
        for name in ("HOME", "CODEX_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME"):
            (base / name).mkdir()
            patch.setenv(name, str(base / name))
        yield base


def private_environment(skill: Path) -> Path:
    """Where the scripts of ``skill`` find their private environment (scripts/isolation.py's rule)."""
    found = runpy.run_path(str(ROOT / "scripts" / "isolation.py"))["private_environment"](str(skill))
    return Path(found)


def without_private_environment(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "XDG_DATA_HOME": str(tmp_path / "empty-data")}


def install(clone, *args):
    return run([str(clone / "install.py"), "--python-env-from", "current", *args], cwd=clone)


@pytest.fixture(scope="module")
def clone(tmp_path_factory):
    """A fresh clone of this repository's committed state: what a user installs from."""
    target = tmp_path_factory.mktemp("clone") / SKILL
    # A local clone hard-links the object files (git never changes one in place): a tenth of a copy's time.
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
    return target


@pytest.fixture(scope="module")
def installed(clone, tmp_path_factory):
    home = tmp_path_factory.mktemp("codex-home")
    result = install(clone, "--codex-home", str(home))
    assert result.returncode == 0, result.stderr
    return home / "skills" / SKILL


def a_checkout(directory: Path) -> Path:
    subprocess.run(["git", "init", "-q", str(directory)], check=True)
    subprocess.run(["git", "-C", str(directory), "remote", "add", "origin", "https://github.com/o/r.git"], check=True)
    return directory


def test_only_the_runtime_parts_are_installed(installed):
    packages = {"evaluator", "observe", "act"}
    expected = {"SKILL.md", "LICENSE", "requirements-runtime.lock", "agents", "scripts", "references"}
    assert {p.name for p in installed.iterdir()} == expected | packages | {".install-record.json"}
    assert not list(installed.rglob("__pycache__"))  # no bytecode beside the skill's code
    # The private environment is outside the installed files, where every copy of the skill finds it.
    environment = private_environment(installed)
    assert (environment / "bin" / "python").exists() and not environment.is_relative_to(installed)


def test_the_record_holds_the_digest_of_every_installed_file(installed):
    import hashlib

    record = json.loads((installed / ".install-record.json").read_text())
    on_disk = {
        p.relative_to(installed).as_posix()
        for p in installed.rglob("*")
        if p.is_file() and p.name != ".install-record.json"
    }
    assert set(record["files"]) == on_disk
    assert record["private_environment"] == str(private_environment(installed))
    for relative, digest in record["files"].items():
        assert hashlib.sha256((installed / relative).read_bytes()).hexdigest() == digest


def test_the_installed_code_is_the_pinned_code_of_the_clone(clone, installed):
    """Every code directory the pin covers (act/ included) is installed whole, and nothing is added to it."""
    assert all((installed / directory).is_dir() for directory in CODE_DIRECTORIES)
    assert evaluator_sha256(installed) == evaluator_sha256(clone)


# Run by the private environment's interpreter: the pin of the installed skill, or the code refusing it.
PIN_PROBE = """
import sys
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from observe.evaluator_digest import DigestError, evaluator_sha256
try:
    print(evaluator_sha256(Path(sys.argv[1])))
except DigestError as error:
    print(error.code)
"""


def private_pin(installed: Path, cwd: Path) -> str:
    """The installed skill's pin as its private interpreter computes it, or the code refusing it."""
    python = str(private_environment(installed) / "bin" / "python")
    result = run(["-I", "-B", "-c", PIN_PROBE, str(installed)], cwd=cwd, python=python)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def private_site(installed: Path) -> Path:
    (site,) = (private_environment(installed) / "lib").glob("python3*/site-packages")
    return site


def test_the_private_environment_holds_the_locked_distributions_only(installed, tmp_path):
    site = private_site(installed)
    locked = {canonicalize_name(line.partition("==")[0]) for line in requirements("requirements-runtime.lock")}
    infos = {canonicalize_name(p.name.partition("-")[0]) for p in site.glob("*.dist-info")}
    assert infos == locked and not list(site.glob("*.pth"))
    assert re.fullmatch("[0-9a-f]{64}", private_pin(installed, tmp_path))  # pinned, nothing refused


def test_a_tampered_package_in_the_private_environment_is_refused_by_the_pin(installed, tmp_path):
    pinned = private_pin(installed, tmp_path)
    rrule = private_site(installed) / "dateutil" / "rrule.py"
    original, times = rrule.read_bytes(), rrule.stat()
    try:
        rrule.write_bytes(original.replace(b"rrulestr = _rrulestr()", b"rrulestr = _rrulestr ", 1))
        assert private_pin(installed, tmp_path) == "environment-file-modified"
    finally:
        rrule.write_bytes(original)
        os.utime(rrule, ns=(times.st_atime_ns, times.st_mtime_ns))  # pip's bytecode stays valid
    assert private_pin(installed, tmp_path) == pinned


@pytest.mark.parametrize(
    "planted",
    ["brotli.py", "zz-startup.pth", "brotli-1.1.0.dist-info/METADATA"],
    ids=["optional-module", "pth-file", "extra-distribution"],
)
def test_a_file_planted_in_the_private_environment_is_refused_by_the_pin(installed, tmp_path, planted):
    site = private_site(installed)
    pinned = private_pin(installed, tmp_path)
    path = site / planted
    path.parent.mkdir(exist_ok=True)
    path.write_text("PLANTED = True\n" if planted == "brotli.py" else "Name: brotli\nVersion: 1.1.0\n")
    try:
        if planted == "brotli.py":
            # What makes it a hole: a locked package imports it whenever it is there.
            probe = ["-I", "-B", "-c", "from httpx2 import _decoders; print(_decoders.brotli.PLANTED)"]
            loaded = run(probe, cwd=tmp_path, python=str(private_environment(installed) / "bin" / "python"))
            assert loaded.stdout.strip() == "True", loaded.stderr
        assert private_pin(installed, tmp_path) == "environment-file-unlisted"
    finally:
        path.unlink()
        if path.parent != site:
            path.parent.rmdir()
    assert private_pin(installed, tmp_path) == pinned


@pytest.mark.parametrize("script", ENTRY_POINTS)
def test_installed_script_answers_help_from_another_directory(installed, script, tmp_path):
    result = run([str(installed / "scripts" / script), "--help"], cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "usage:" in result.stdout


def test_the_installed_launcher_runs_the_private_environment_from_another_directory(installed, tmp_path):
    launcher = installed / "scripts" / "loop"
    assert launcher.stat().st_mode & 0o777 == 0o755
    traced = subprocess.run(
        ["/bin/sh", "-x", str(launcher), "list"], cwd=tmp_path, capture_output=True, text=True, timeout=180,
        env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
             "XDG_DATA_HOME": os.environ["XDG_DATA_HOME"]},
    )  # fmt: skip
    assert traced.returncode == 0, traced.stdout + traced.stderr
    assert json.loads(traced.stdout)["loops"] == []
    private = private_environment(installed) / "bin" / "python"
    assert f"+ exec {private} -I -B {installed / 'scripts' / 'loop.py'} list" in traced.stderr.splitlines()


def test_installed_scripts_run_real_commands_from_another_directory(installed, clone, tmp_path):
    evaluator = str(installed / "scripts" / "evaluate_state.py")
    evaluated = run([evaluator, "--initial", str(clone / VALID_INITIAL)], tmp_path)
    assert evaluated.returncode == 0, evaluated.stdout + evaluated.stderr
    assert json.loads(evaluated.stdout)["ok"] is True
    checkout = a_checkout(tmp_path / "checkout")
    gh = os.path.realpath(sys.executable)  # any plain absolute file: nothing is pushed
    argv = [str(installed / "scripts" / "collect_state.py"), "--gh", gh, "boundary", "--checkout", str(checkout)]
    collected = run([*argv, "--repository", "o/r"], cwd=tmp_path)
    assert collected.returncode == 0, collected.stderr
    assert json.loads(collected.stdout)["git"]["credential_strategy"] == "gh-cli-https"


def test_installed_scripts_run_in_the_private_environment(installed, tmp_path):
    probe = "import sys; print(sys.prefix)"
    private = run(["-c", probe], cwd=tmp_path, python=str(private_environment(installed) / "bin" / "python"))
    assert Path(private.stdout.strip()) == private_environment(installed)
    bare = bare_python(tmp_path)
    result = run([str(installed / "scripts" / "evaluate_state.py"), "--initial", "-"], tmp_path, "{}", python=bare)
    assert result.returncode == 1, result.stdout + result.stderr  # rejected by the evaluator: it loaded
    assert json.loads(result.stdout)["ok"] is False


@pytest.mark.slow
def test_install_upgrade_and_uninstall_are_symmetric(clone, tmp_path):
    home = tmp_path / "home"
    skill = home / "skills" / SKILL
    first = install(clone, "--codex-home", str(home))
    assert first.returncode == 0 and first.stdout == f"installed {skill}\n"
    said = [line.removeprefix("install.py: ").removesuffix(" ...") for line in first.stderr.splitlines()]
    assert any(step.startswith("copying ") for step in said)  # each step as it starts: a slow pip is not a hang
    assert said[-1] == "checking the installed scripts from another directory"
    again = install(clone, "--codex-home", str(home))
    assert again.returncode == 1 and "--upgrade" in again.stderr
    unchanged = install(clone, "--codex-home", str(home), "--upgrade")
    assert unchanged.returncode == 0 and unchanged.stdout == f"{skill} already holds this version: nothing changed\n"
    (skill / "evaluator" / "policy.py").write_text("HOST = 'example.com'\n")
    refused = install(clone, "--codex-home", str(home), "--upgrade")
    assert refused.returncode == 1 and "evaluator/policy.py" in refused.stderr
    assert (skill / "evaluator" / "policy.py").read_text() == "HOST = 'example.com'\n"
    forced = install(clone, "--codex-home", str(home), "--upgrade", "--force")
    assert forced.returncode == 0, forced.stderr
    assert (skill / "evaluator" / "policy.py").read_bytes() == (clone / "evaluator" / "policy.py").read_bytes()
    assert [p.name for p in skill.parent.iterdir()] == [SKILL]  # no staging or old copy left behind
    (skill / "notes.txt").write_text("mine\n")
    assert install(clone, "--codex-home", str(home), "--uninstall").returncode == 1
    removed = install(clone, "--codex-home", str(home), "--uninstall", "--force")
    assert removed.returncode == 0, removed.stderr
    assert [p.relative_to(skill).as_posix() for p in skill.rglob("*")] == ["notes.txt"]
    (skill / "notes.txt").unlink()
    skill.rmdir()
    assert install(clone, "--codex-home", str(home), "--uninstall").returncode == 1  # nothing installed


@pytest.mark.slow
def test_project_install_goes_to_agents_skills(clone, tmp_path):
    result = install(clone, "--project", str(tmp_path))
    assert result.returncode == 0, result.stderr
    skill = tmp_path / ".agents" / "skills" / SKILL
    assert (skill / "SKILL.md").is_file()
    assert install(clone, "--project", str(tmp_path), "--uninstall").returncode == 0
    assert not skill.exists()


def bare_python(tmp_path: Path) -> str:
    """An interpreter without the skill's dependencies: a venv of the base Python, no packages."""
    directory = tmp_path / "bare"
    if not directory.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True)
    return str(directory / "bin" / "python")


@pytest.mark.parametrize("script", ENTRY_POINTS)
def test_a_missing_dependency_is_one_json_line_naming_package_and_installer(script, tmp_path):
    result = run(
        [str(ROOT / "scripts" / script), "--help"], tmp_path, python=bare_python(tmp_path),
        env=without_private_environment(tmp_path),
    )  # fmt: skip
    assert result.returncode == 2
    lines = (result.stdout + result.stderr).splitlines()
    assert len(lines) == 1, lines
    error = json.loads(lines[0])
    assert error["ok"] is False
    [violation] = error["errors"]
    assert violation["code"] == "dependency-missing"
    assert "fasttransport==0.0.4 (missing)" in violation["message"]
    assert f"`python3 {ROOT / 'scripts' / 'environment.py'}`" in violation["message"]


def test_an_installed_skill_without_its_private_environment_names_the_command_that_builds_it(installed, tmp_path):
    argv = [str(installed / "scripts" / "evaluate_state.py"), "--state", "-"]
    result = run(argv, cwd=tmp_path, python=bare_python(tmp_path), env=without_private_environment(tmp_path))
    assert result.returncode == 2
    line = json.loads(result.stdout)
    assert line["check"] == "state" and line["errors"][0]["code"] == "dependency-missing"
    assert f"`python3 {installed / 'scripts' / 'environment.py'}`" in line["errors"][0]["message"]


@pytest.mark.parametrize("script", ENTRY_POINTS)
def test_an_unknown_flag_is_a_usage_error_that_names_it(script, tmp_path):
    result = run([str(ROOT / "scripts" / script), "--no-such-flag"], cwd=tmp_path)
    assert result.returncode == 2
    assert "--no-such-flag" in result.stdout + result.stderr


def runtime_closure() -> dict[str, str]:
    """pyproject's dependencies and theirs, as installed here: name -> version."""
    dependencies = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    found: dict[str, str] = {}
    pending = [Requirement(text) for text in dependencies]
    while pending:
        requirement = pending.pop()
        if canonicalize_name(requirement.name) in found:
            continue
        installed = distribution(requirement.name)
        found[canonicalize_name(requirement.name)] = installed.version
        for text in installed.requires or []:
            nested = Requirement(text)
            if nested.marker is None or nested.marker.evaluate({"extra": ""}):
                pending.append(nested)
    return found


def lock_entries(name: str) -> list[str]:
    """Each requirement of a lock with its hashes, as one line (a backslash continues a line)."""
    lines = (ROOT / name).read_text().replace("\\\n", " ").splitlines()
    return [" ".join(line.split()) for line in lines if line.strip() and not line.startswith("#")]


def requirements(name: str) -> list[str]:
    return [entry.split()[0] for entry in lock_entries(name)]


@pytest.mark.parametrize("name", ["requirements-runtime.lock", "requirements.lock"])
def test_every_requirement_of_the_locks_is_pinned_with_hashes(name):
    entries = lock_entries(name)
    assert entries
    for entry in entries:
        requirement, *options = entry.split()
        assert re.fullmatch(r"[A-Za-z0-9._-]+==[A-Za-z0-9.+!-]+", requirement), entry
        assert options and all(re.fullmatch(r"--hash=sha256:[0-9a-f]{64}", option) for option in options), entry
    # Hashes for every file PyPI holds (every platform's wheels): pydantic-core alone has dozens.
    [pydantic_core] = [entry for entry in entries if canonicalize_name(entry.partition("==")[0]) == "pydantic-core"]
    assert pydantic_core.count("--hash=") > 20
    assert "pip-compile --generate-hashes" in (ROOT / name).read_text()  # the header says how it was made


def test_the_runtime_lock_is_exactly_the_runtime_closure_with_the_full_locks_versions():
    runtime = requirements("requirements-runtime.lock")
    assert set(lock_entries("requirements-runtime.lock")) <= set(lock_entries("requirements.lock"))
    pinned = {canonicalize_name(line.partition("==")[0]): line.partition("==")[2] for line in runtime}
    assert pinned == runtime_closure()


def test_no_console_scripts_bypass_the_isolated_entry_points():
    assert "scripts" not in tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


# -- upgrades and live loops ---------------------------------------------------------------------------


def a_live_loop(run_id: str = "0123456789abcdef0123456789abcdef", stage: str = "active") -> Path:
    """A loop's state directory as `loop init` and the automation steps leave it (what `loop.py list` reads)."""
    directory = Path(os.environ["XDG_STATE_HOME"]) / SKILL / run_id
    directory.mkdir(parents=True, mode=0o700)
    (directory / "intent.json").write_text(json.dumps({"repository": "o/r", "head_branch": "feature/x"}))
    (directory / "automation.json").write_text(json.dumps({"stage": stage, "id": "loop-1"}))
    return directory


def test_the_environment_builder_refuses_a_new_environment_while_a_loop_is_live(installed, tmp_path):
    loop = a_live_loop()
    try:
        builder = [str(installed / "scripts" / "environment.py"), "--rebuild", "--packages-from", "current"]
        refused = run(builder, cwd=tmp_path)
        assert refused.returncode == 1, refused.stdout + refused.stderr
        [error] = json.loads(refused.stdout)["errors"]
        assert error["code"] == "loops-live" and loop.name in error["message"] and "o/r feature/x" in error["message"]
        assert "--force" in error["message"] and "finish" in error["message"]
        (loop / "automation.json").write_text(json.dumps({"stage": "deleted"}))  # it can no longer wake
        kept = run([str(installed / "scripts" / "environment.py")], cwd=tmp_path)
        assert json.loads(kept.stdout)["built"] is False  # it exists: nothing to build, nothing refused
    finally:
        shutil.rmtree(loop)


@pytest.mark.slow
def test_an_upgrade_keeps_a_live_loops_pin_unless_it_changes_code_and_then_only_with_force(clone, tmp_path):
    """The pin a live loop recorded survives an upgrade that changes nothing; a changing upgrade is refused
    while the loop is live (naming it), and with --force changes the pin, which stops the loop at its next
    wakeup (evaluator-digest-changed, whose row says to let loops finish first). The same with a real loop
    driven through the installed copy, to done or to that stop: tests/test_upgrade_live_loop.py."""
    home = tmp_path / "home"
    skill = home / "skills" / SKILL
    assert install(clone, "--codex-home", str(home)).returncode == 0
    pinned = private_pin(skill, tmp_path)
    loop = a_live_loop("fedcba9876543210fedcba9876543210")
    try:
        unchanged = install(clone, "--codex-home", str(home), "--upgrade")
        assert unchanged.returncode == 0 and "nothing changed" in unchanged.stdout, unchanged.stderr
        assert private_pin(skill, tmp_path) == pinned
        source = tmp_path / "source"
        subprocess.run(["git", "clone", "-q", str(clone), str(source)], check=True)
        policy = source / "evaluator" / "policy.py"
        policy.write_text(policy.read_text() + "\n# a new release\n")
        refused = install(source, "--codex-home", str(home), "--upgrade")
        assert refused.returncode == 1 and loop.name in refused.stderr and "--force" in refused.stderr
        assert private_pin(skill, tmp_path) == pinned  # nothing was touched
        forced = install(source, "--codex-home", str(home), "--upgrade", "--force")
        assert forced.returncode == 0, forced.stderr
        assert private_pin(skill, tmp_path) != pinned
    finally:
        shutil.rmtree(loop)
    from act.core import steps  # the stop's words, as the hands give them

    said = steps.render(steps.WAKEUP["state-inconsistency"])
    assert "`evaluator-digest-changed`" in said and "wait until every loop has finished or been stopped" in said


@pytest.mark.slow
def test_installing_warns_about_a_copy_codex_reads_in_the_other_skills_location(clone, tmp_path):
    other = Path(os.environ["HOME"]) / ".agents" / "skills" / SKILL
    other.mkdir(parents=True)
    (other / "SKILL.md").write_text("---\nname: github-codex-pr-loop\n---\n")
    try:
        result = install(clone, "--codex-home", str(tmp_path / "codex"))
        assert result.returncode == 0, result.stderr
        assert f"warning: {other} holds another copy of the skill" in result.stderr
        assert "lists the skill twice" in result.stderr
    finally:
        shutil.rmtree(other.parent.parent)


@pytest.mark.slow
def test_codex_lists_an_installed_skill_once_and_a_whole_repository_copy_twice(installed, clone, tmp_path):
    """What README says of `npx skills add`: a copy of the whole repository (all but .git, as that tool
    copies) holds the plugin's copy of the skill too, and the real Codex lists both; install.py's copy, once."""
    from tests.codex_cli import listed_skills

    home = tmp_path / "home"
    home.mkdir()
    codex_home = installed.parent.parent  # install.py --codex-home DIR: DIR/skills/github-codex-pr-loop
    assert listed_skills(str(home), str(codex_home), str(tmp_path)) == [(SKILL, str(installed / "SKILL.md"))]
    whole = home / ".agents" / "skills" / SKILL
    shutil.copytree(clone, whole, ignore=shutil.ignore_patterns(".git"))
    nested = whole / "plugins" / SKILL / "skills" / SKILL / "SKILL.md"
    empty = tmp_path / "codex-home"
    empty.mkdir()
    listed = listed_skills(str(home), str(empty), str(tmp_path))
    assert sorted(listed) == [(SKILL, str(whole / "SKILL.md")), (f"{SKILL}:{SKILL}", str(nested))]
    shutil.rmtree(whole / "plugins")  # README's remedy
    assert listed_skills(str(home), str(empty), str(tmp_path)) == [(SKILL, str(whole / "SKILL.md"))]
