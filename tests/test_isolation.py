"""The scripts load only the pinned sources of the skill, whatever is planted next to them.

Each test copies the skill's code directories into a fresh directory, plants
something that an ordinary ``python scripts/...`` run would load, and runs the
copied scripts as subprocesses from inside that directory. The pin refuses or
covers every planted file (references/automation-registry.md#the-evaluator-digest).
"""

from __future__ import annotations

import importlib.machinery
import importlib.metadata
import json
import py_compile
import runpy
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from observe.evaluator_digest import CODE_DIRECTORIES, ENTRY_POINTS, DigestError, evaluator_sha256
from simulator.app import Server
from simulator.world import World
from tests.helpers import FIXTURES, ROOT

INVALID_INITIAL = FIXTURES / "initial" / "invalid" / "boundary-clean-filters-active--lfs.json"
WAITING_STATE = FIXTURES / "state" / "scenarios" / "wait--awaiting-codex-response.json"
PLANTED_OK = "import sys\nsys.stdout.write('{\"ok\":true}\\n')\nsys.exit(0)\n"


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    root = tmp_path / "skill"
    for directory in CODE_DIRECTORIES:
        shutil.copytree(ROOT / directory, root / directory, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copyfile(ROOT / "requirements-runtime.lock", root / "requirements-runtime.lock")  # the scripts check it
    return root


def run_script(skill: Path, script: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run a copied script from inside the copy, the way the agent runs it (cwd = the skill)."""
    environment = {"PATH": "/usr/bin:/bin", **(env or {})}
    command = [sys.executable, f"scripts/{script}", *args]
    return subprocess.run(command, cwd=skill, capture_output=True, text=True, env=environment, timeout=60)


def evaluate(skill: Path, *args: str, env: dict[str, str] | None = None) -> tuple[int, dict]:
    completed = run_script(skill, "evaluate_state.py", *args, env=env)
    assert "Traceback" not in completed.stderr, completed.stderr
    lines = completed.stdout.splitlines()
    assert len(lines) == 1, completed
    return completed.returncode, json.loads(lines[0])


def test_an_untouched_copy_runs_and_writes_no_bytecode(skill):
    pinned = evaluator_sha256(skill)
    assert evaluate(skill, "--initial", str(INVALID_INITIAL))[0] == 1
    status, output = evaluate(skill, "--state", str(WAITING_STATE))
    assert status == 0 and output["action"] == "wait"
    assert not list(skill.rglob("__pycache__")) and not list(skill.rglob("*.pyc"))
    assert evaluator_sha256(skill) == pinned


@pytest.mark.parametrize("where", ["scripts/json.py", "json.py"])
def test_a_planted_json_module_never_shadows_the_standard_library(skill, where):
    pinned = evaluator_sha256(skill)
    (skill / where).write_text(PLANTED_OK)
    status, output = evaluate(skill, "--initial", str(INVALID_INITIAL))
    assert status == 1 and output["ok"] is False
    # In a code directory the planted file changes the pin; at the root it is never on the path.
    assert (evaluator_sha256(skill) != pinned) == where.startswith("scripts/")


def test_a_module_on_pythonpath_never_shadows_the_standard_library(skill, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "json.py").write_text(PLANTED_OK)
    status, output = evaluate(skill, "--initial", str(INVALID_INITIAL), env={"PYTHONPATH": str(elsewhere)})
    assert status == 1 and output["ok"] is False


def test_a_planted_extension_module_is_never_loaded_and_the_pin_refuses_it(skill):
    suffix = next(s for s in importlib.machinery.EXTENSION_SUFFIXES if s != ".so")
    (skill / "evaluator" / f"policy{suffix}").write_bytes(b"\x7fELF not really a shared object")
    status, output = evaluate(skill, "--state", str(WAITING_STATE))
    assert status == 0 and output["action"] == "wait"
    with pytest.raises(DigestError, match="compiled code"):
        evaluator_sha256(skill)


def test_a_planted_bytecode_cache_is_never_loaded_and_the_pin_refuses_it(skill, tmp_path):
    impostor = tmp_path / "cli.py"
    impostor.write_text(f"def main(argv=None):\n    exec({PLANTED_OK!r})\n")
    cache = skill / "evaluator" / "__pycache__" / f"cli.{sys.implementation.cache_tag}.pyc"
    # An unchecked hash-based pyc is loaded whatever the source says, by any
    # interpreter that reads the cache.
    unchecked = py_compile.PycInvalidationMode.UNCHECKED_HASH
    py_compile.compile(
        str(impostor),
        cfile=str(cache),
        dfile=str(skill / "evaluator" / "cli.py"),
        invalidation_mode=unchecked,
        doraise=True,
    )
    status, output = evaluate(skill, "--initial", str(INVALID_INITIAL))
    assert status == 1 and output["ok"] is False
    with pytest.raises(DigestError, match="bytecode cache"):
        evaluator_sha256(skill)


def test_a_planted_sourceless_module_is_never_loaded_and_the_pin_refuses_it(skill, tmp_path):
    impostor = tmp_path / "errors.py"
    impostor.write_text(PLANTED_OK)
    py_compile.compile(str(impostor), cfile=str(skill / "evaluator" / "errors.pyc"), doraise=True)
    (skill / "evaluator" / "errors.py").unlink()  # only the bytecode is left
    completed = run_script(skill, "evaluate_state.py", "--state", str(WAITING_STATE))
    assert completed.returncode == 2 and completed.stdout == ""
    assert "evaluator.errors" in completed.stderr and "Traceback" not in completed.stderr
    with pytest.raises(DigestError, match="compiled code"):
        evaluator_sha256(skill)


def test_the_collector_is_isolated_too(skill):
    pinned = evaluator_sha256(skill)
    (skill / "scripts" / "json.py").write_text('def dumps(*args, **kwargs):\n    return "PLANTED"\n')
    completed = run_script(skill, "collect_state.py")
    assert completed.returncode == 2 and completed.stdout == ""
    assert json.loads(completed.stderr)["errors"][0]["code"] == "usage-error"
    assert evaluator_sha256(skill) != pinned
    assert not list(skill.rglob("__pycache__"))


def test_the_collectors_own_code_is_pinned(skill):
    pinned = evaluator_sha256(skill)
    digest_module = skill / "observe" / "evaluator_digest.py"
    digest_module.write_text(digest_module.read_text() + "\n# edited\n")
    assert evaluator_sha256(skill) != pinned


def test_the_pin_covers_every_package_the_loader_admits_and_every_entry_point():
    """What a script can import is exactly what is pinned: the loader's packages and scripts/."""
    loader = runpy.run_path(str(ROOT / "scripts" / "isolation.py"))
    assert set(CODE_DIRECTORIES) == set(loader["PACKAGES"]) | {"scripts"}
    # The loader, and the environment builder, which loads no skill code (standard library only), are no entry points.
    builders = {"scripts/isolation.py", "scripts/environment.py"}
    scripts = {f"scripts/{p.name}" for p in (ROOT / "scripts").glob("*.py")} - builders
    assert set(ENTRY_POINTS) == scripts


def test_the_hands_are_pinned_and_a_planted_cache_of_theirs_is_never_loaded(skill, tmp_path):
    pinned = evaluator_sha256(skill)
    executor = skill / "act" / "execute.py"
    original = executor.read_bytes()
    executor.write_bytes(original + b"# widen a write\n")
    assert evaluator_sha256(skill) != pinned
    executor.write_bytes(original)
    assert evaluator_sha256(skill) == pinned

    impostor = tmp_path / "cli.py"
    impostor.write_text(f"def main(argv=None):\n    exec({PLANTED_OK!r})\n")
    cache = skill / "act" / "__pycache__" / f"cli.{sys.implementation.cache_tag}.pyc"
    unchecked = py_compile.PycInvalidationMode.UNCHECKED_HASH
    py_compile.compile(
        str(impostor), cfile=str(cache), dfile=str(skill / "act" / "cli.py"), invalidation_mode=unchecked, doraise=True
    )
    completed = run_script(skill, "loop.py", "--help")
    assert completed.returncode == 0 and completed.stdout.startswith("usage: loop.py"), completed
    with pytest.raises(DigestError, match="bytecode cache"):
        evaluator_sha256(skill)


def test_isolated_flags_are_required_to_load_the_skill(skill):
    """Run unisolated on purpose (the loader itself, no entry point): it refuses."""
    code = "import runpy; runpy.run_path('scripts/isolation.py')['run']('scripts/evaluate_state.py', 'evaluator.cli')"
    command = [sys.executable, "-c", code]
    completed = subprocess.run(
        command, cwd=skill, capture_output=True, text=True, env={"PATH": "/usr/bin:/bin"}, timeout=60
    )
    assert completed.returncode != 0 and "python -I -B" in completed.stderr


def isolation_namespace() -> dict:
    return runpy.run_path(str(ROOT / "scripts" / "isolation.py"))  # in-process: only its functions are used


def test_the_loader_finds_every_installed_version_as_importlib_metadata_does():
    """The scripts read versions without importlib.metadata; they must agree with it on every distribution here."""
    names = sorted({distribution.metadata["Name"] for distribution in importlib.metadata.distributions()})
    assert len(names) > 10
    found = isolation_namespace()["installed_versions"]([*names, "no-such-distribution-anywhere"])
    assert found == {name: importlib.metadata.version(name) for name in names}


def test_names_match_whatever_their_case_and_separators():
    versions = isolation_namespace()["installed_versions"](["Typing.Extensions", "PYDANTIC-core", "annotated__types"])
    assert versions == {
        "Typing.Extensions": importlib.metadata.version("typing_extensions"),
        "PYDANTIC-core": importlib.metadata.version("pydantic_core"),
        "annotated__types": importlib.metadata.version("annotated-types"),
    }


def test_a_wrongly_versioned_dependency_is_one_dependency_missing_line(skill):
    lock = skill / "requirements-runtime.lock"
    lock.write_text(lock.read_text().replace("fasttransport==0.0.4", "fasttransport==0.0.3"))
    completed = run_script(skill, "evaluate_state.py", "--initial", str(INVALID_INITIAL))
    assert completed.returncode == 2
    [line] = completed.stdout.splitlines()
    error = json.loads(line)
    assert error["ok"] is False and error["check"] == "initial"
    [violation] = error["errors"]
    assert violation["code"] == "dependency-missing"
    assert "fasttransport==0.0.3 (found 0.0.4)" in violation["message"]


def test_the_loader_imports_nothing_but_importlib_machinery():
    """importlib.metadata, .abc and .util would cost every run ~40 standard-library modules (bench/README.md)."""
    loader = str(ROOT / "scripts" / "isolation.py")
    code = (  # loaded as the scripts load it
        "import sys\n"
        "before = set(sys.modules)\n"
        f"exec(compile(open({loader!r}, 'rb').read(), {loader!r}, 'exec'), {{'__name__': 'isolation'}})\n"
        "print(' '.join(sorted(set(sys.modules) - before)))\n"
    )
    completed = subprocess.run([sys.executable, "-I", "-B", "-c", code], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    machinery = {"importlib", "importlib._bootstrap", "importlib._bootstrap_external", "importlib.machinery"}
    assert set(completed.stdout.split()) <= machinery | {"warnings"}  # importlib's own import


def plant_pydantic_plugin(directory: Path) -> Path:
    """A distribution with a ``pydantic`` entry point, importable from ``directory``; its import leaves a mark."""
    mark = directory / "plugin-loaded"
    (directory / "planted_plugin.py").write_text(
        f"from pathlib import Path\nPath({str(mark)!r}).write_text('loaded')\nplugin = None\n"
    )
    info = directory / "planted_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: planted-plugin\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[pydantic]\nplanted = planted_plugin:plugin\n")
    return mark


def test_no_pydantic_plugin_runs_in_the_scripts_validators(skill, tmp_path):
    planted = tmp_path / "planted"
    planted.mkdir()
    mark = plant_pydantic_plugin(planted)
    # The loader run as the entry point runs it, with the planted distribution on the path:
    # --initial builds and runs the initial document's validators.
    loader = skill / "scripts" / "isolation.py"
    probe = (
        f"import sys\nsys.path.append({str(planted)!r})\n"
        f"sys.argv = ['evaluate_state.py', '--initial', {str(INVALID_INITIAL)!r}]\n"
        f"namespace = {{'__name__': 'isolation'}}\n"
        f"exec(compile(open({str(loader)!r}).read(), {str(loader)!r}, 'exec'), namespace)\n"
        f"sys.exit(namespace['run']({str(skill / 'scripts' / 'evaluate_state.py')!r}, 'evaluator.cli', ('initial',)))\n"
    )
    completed = subprocess.run([sys.executable, "-I", "-B", "-c", probe], capture_output=True, text=True, timeout=60)
    assert completed.returncode == 1 and json.loads(completed.stdout)["ok"] is False, completed
    assert not mark.exists()
    # The same validation without the loader's setting loads the plugin: the check above can fail.
    control = (
        f"import sys\nsys.path.append({str(planted)!r})\nsys.path.insert(0, {str(skill)!r})\n"
        "from evaluator.cli import main\n"
        f"main(['--initial', {str(INVALID_INITIAL)!r}])\n"
    )
    subprocess.run([sys.executable, "-I", "-B", "-c", control], capture_output=True, text=True, timeout=60)
    assert mark.read_text() == "loaded"


def loaded_by(script: str, module: str, *args: str, checks: tuple[str, ...] = ()) -> tuple[int, set[str]]:
    """(exit status, top-level packages loaded) of one script run through the loader as its entry point runs it."""
    loader = str(ROOT / "scripts" / "isolation.py")
    probe = (
        "import sys\n"
        f"sys.argv = [{script!r}, *{list(args)!r}]\n"
        "namespace = {'__name__': 'isolation'}\n"
        f"exec(compile(open({loader!r}).read(), {loader!r}, 'exec'), namespace)\n"
        f"status = namespace['run']({str(ROOT / 'scripts' / script)!r}, {module!r}, {checks!r})\n"
        "sys.stderr.write(' '.join(sorted({name.partition('.')[0] for name in sys.modules})))\n"
        "sys.exit(status)\n"
    )
    environment = {"PATH": "/usr/bin:/bin", "GH_TOKEN": "ghp_" + "x" * 36}
    completed = subprocess.run(
        [sys.executable, "-I", "-B", "-c", probe], capture_output=True, text=True, timeout=60, env=environment
    )
    return completed.returncode, set(completed.stderr.split())


def test_the_evaluator_validates_with_pydantic_and_the_collector_reads_through_ghapi():
    status, evaluator = loaded_by(
        "evaluate_state.py", "evaluator.cli", "--initial", str(INVALID_INITIAL), checks=("initial",)
    )
    assert status == 1 and {"pydantic", "pydantic_core"} <= evaluator
    assert not {"ghapi", "dateutil"} & evaluator
    # The simulated GitHub refuses the token (it knows none): the collector's report reached its first request.
    world = World()
    server = Server(world).start()
    try:
        status, collector = loaded_by(
            "collect_state.py",
            "observe.cli",
            "--api-url",
            server.url,
            "report",
            "--repository",
            "octo-org/hello-world",
            "--pr",
            "1",
            "--run-id",
            "0" * 32,
        )
    finally:
        server.stop()
        world.close()
    assert status == 1 and {"ghapi", "fastspec"} <= collector and "pydantic" not in collector
    # The registry reader (prompt and state collections), found by the loader's finder as they find it.
    loader = str(ROOT / "scripts" / "isolation.py")
    probe = (
        "import importlib, sys\n"
        "namespace = {'__name__': 'isolation'}\n"
        f"exec(compile(open({loader!r}).read(), {loader!r}, 'exec'), namespace)\n"
        f"sys.meta_path.insert(0, namespace['SkillFinder']({str(ROOT)!r}))\n"
        "importlib.import_module('observe.registry')\n"
        "print('dateutil.rrule' in sys.modules)\n"
    )
    completed = subprocess.run([sys.executable, "-I", "-B", "-c", probe], capture_output=True, text=True, timeout=60)
    assert completed.stdout.split() == ["True"], completed.stderr
