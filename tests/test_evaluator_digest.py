"""The directory digest rule and the pin of the installed skill code (the evaluator digest).

Expected values are computed here with hashlib over hand-built bytes, never by
calling the code under test.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import py_compile
import random
import re
import runpy
import shutil
import sys
from pathlib import Path

import pytest

from observe.evaluator_digest import (
    DigestError,
    code_sha256,
    directory_digest,
    environment_files,
    evaluator_sha256,
    private_environment,
)

DOC = Path(__file__).resolve().parent.parent / "references" / "automation-registry.md"

# "a.txt" sorts before "a/b.txt" ("." is 0x2E, "/" is 0x2F), although a
# directory-first walk would visit a/ first; "é" (U+00E9) sorts after ASCII.
TREE = {
    "a/b.txt": b"inner\n",
    "a.txt": b"outer\n",
    "Z.txt": b"",
    "\u00e9t\u00e9.txt": b"summer\n",
}


def build(root: Path, files: dict[str, bytes]) -> Path:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    return root


def independent_digest(files: dict[str, bytes]) -> str:
    stream = b"".join(
        relative.encode("utf-8") + b"\x00" + hashlib.sha256(files[relative]).digest()
        for relative in sorted(files, key=lambda p: p.encode("utf-8"))
    )
    return hashlib.sha256(stream).hexdigest()


# -- the rule -----------------------------------------------------------------


def test_known_answer_over_hand_built_bytes(tmp_path: Path) -> None:
    root = build(tmp_path / "skill", TREE)
    stream = (
        b"Z.txt\x00"
        + hashlib.sha256(b"").digest()
        + b"a.txt\x00"
        + hashlib.sha256(b"outer\n").digest()
        + b"a/b.txt\x00"
        + hashlib.sha256(b"inner\n").digest()
        + "\u00e9t\u00e9.txt".encode("utf-8")
        + b"\x00"
        + hashlib.sha256(b"summer\n").digest()
    )
    expected = hashlib.sha256(stream).hexdigest()
    assert expected == independent_digest(TREE)
    assert directory_digest(root) == expected
    assert directory_digest(root, list(TREE)) == expected


def test_empty_file_list_is_the_digest_of_nothing(tmp_path: Path) -> None:
    assert directory_digest(tmp_path, []) == hashlib.sha256(b"").hexdigest()


def test_input_order_does_not_matter(tmp_path: Path) -> None:
    root = build(tmp_path / "skill", TREE)
    names = sorted(TREE)
    digests = set()
    for seed in range(6):
        random.Random(seed).shuffle(names)
        digests.add(directory_digest(root, list(names)))
    assert digests == {independent_digest(TREE)}


def test_only_the_listed_files_are_covered(tmp_path: Path) -> None:
    root = build(tmp_path / "skill", TREE)
    subset = {"a.txt": TREE["a.txt"], "Z.txt": TREE["Z.txt"]}
    assert directory_digest(root, list(subset)) == independent_digest(subset)
    assert directory_digest(root, list(subset)) != directory_digest(root)


def test_one_changed_byte_changes_the_digest(tmp_path: Path) -> None:
    root = build(tmp_path / "skill", TREE)
    before = directory_digest(root)
    (root / "a" / "b.txt").write_bytes(b"innes\n")
    after = directory_digest(root)
    assert after != before
    assert after == independent_digest({**TREE, "a/b.txt": b"innes\n"})


def test_a_rename_changes_the_digest(tmp_path: Path) -> None:
    root = build(tmp_path / "skill", TREE)
    before = directory_digest(root)
    (root / "a.txt").rename(root / "b.txt")
    assert directory_digest(root) != before


def test_symlink_leaving_the_root_is_refused(tmp_path: Path) -> None:
    root = build(tmp_path / "skill", TREE)
    (tmp_path / "outside.txt").write_bytes(b"not pinned\n")
    (root / "escape.txt").symlink_to(tmp_path / "outside.txt")
    with pytest.raises(DigestError, match="outside"):
        directory_digest(root)
    with pytest.raises(DigestError, match="outside"):
        directory_digest(root, ["escape.txt"])


def test_directory_symlink_is_refused_by_the_walk(tmp_path: Path) -> None:
    root = build(tmp_path / "skill", TREE)
    (root / "linked").symlink_to(root / "a")
    with pytest.raises(DigestError, match="directory symlink"):
        directory_digest(root)


def test_symlink_inside_the_root_digests_its_target(tmp_path: Path) -> None:
    root = build(tmp_path / "skill", TREE)
    (root / "copy.txt").symlink_to(root / "a.txt")
    assert directory_digest(root) == independent_digest({**TREE, "copy.txt": TREE["a.txt"]})


@pytest.mark.parametrize("bad", ["", "./a.txt", "a//b.txt", "a/../a.txt", "../skill/a.txt", "/a.txt", "a\\b.txt", "a/"])
def test_non_canonical_paths_are_refused(tmp_path: Path, bad: str) -> None:
    root = build(tmp_path / "skill", TREE)
    with pytest.raises(DigestError, match="canonical"):
        directory_digest(root, [bad])


def test_repeated_missing_and_non_file_entries_are_refused(tmp_path: Path) -> None:
    root = build(tmp_path / "skill", TREE)
    with pytest.raises(DigestError, match="more than once"):
        directory_digest(root, ["a.txt", "a.txt"])
    with pytest.raises(DigestError, match="cannot be resolved"):
        directory_digest(root, ["missing.txt"])
    with pytest.raises(DigestError, match="not a regular file"):
        directory_digest(root, ["a"])


# -- the installed skill code (the evaluator pin) ----------------------------

SKILL_TREE = {
    "evaluator/__init__.py": b"",
    "evaluator/policy.py": b"HEARTBEAT_RRULE = 'FREQ=MINUTELY;INTERVAL=2'\n",
    "evaluator/models/initial.py": b"class Initial: ...\n",
    "evaluator/schema.json": b"{}\n",
    "observe/__init__.py": b"",
    "observe/evaluator_digest.py": b"def evaluator_sha256(root): ...\n",
    "act/__init__.py": b"",
    "act/execute.py": b"def execute(plan): ...\n",
    "act/build/remediation.py": b"def build(state): ...\n",
    "scripts/evaluate_state.py": b"from evaluator.cli import main\nmain()\n",
    "scripts/collect_state.py": b"from observe.cli import main\nmain()\n",
    "scripts/loop.py": b"from act.cli import main\nmain()\n",
    "scripts/isolation.py": b"def run(script, module): ...\n",
}
# Outside the code directories: the scripts never put these on the import path.
NOT_PINNED = {
    "README.md": b"# project\n",
    "json.py": b"print('not on the path')\n",
    "tests/test_policy.py": b"def test(): ...\n",
}


def test_the_pin_covers_every_file_of_the_code_directories_and_nothing_else(tmp_path: Path) -> None:
    root = build(tmp_path / "project", {**SKILL_TREE, **NOT_PINNED})
    assert code_sha256(root) == independent_digest(SKILL_TREE)


@pytest.mark.parametrize(
    "added",
    ["evaluator/rules/new.py", "scripts/json.py", "observe/notes.txt", "evaluator/policy.py.orig", "act/build/new.py"],
)
def test_any_added_file_changes_the_pin(tmp_path: Path, added: str) -> None:
    root = build(tmp_path / "project", SKILL_TREE)
    recorded = code_sha256(root)
    build(root, {added: b""})
    assert code_sha256(root) == independent_digest({**SKILL_TREE, added: b""}) != recorded


@pytest.mark.parametrize(
    "edited",
    [
        "evaluator/policy.py",
        "observe/evaluator_digest.py",
        "act/execute.py",
        "act/build/remediation.py",
        "scripts/isolation.py",
        "scripts/loop.py",
    ],
)
def test_an_edit_anywhere_in_the_skill_code_changes_the_pin(tmp_path: Path, edited: str) -> None:
    root = build(tmp_path / "project", SKILL_TREE)
    recorded = code_sha256(root)
    (root / edited).write_bytes(SKILL_TREE[edited] + b"# steer\n")
    assert code_sha256(root) != recorded


@pytest.mark.parametrize("edited", sorted(SKILL_TREE))
def test_one_changed_byte_in_any_pinned_file_changes_the_pin(tmp_path: Path, edited: str) -> None:
    root = build(tmp_path / "project", SKILL_TREE)
    recorded = code_sha256(root)
    content = SKILL_TREE[edited] or b"\n"  # an empty file gains its one byte
    changed = content[:-1] + bytes([content[-1] ^ 1])
    (root / edited).write_bytes(changed)
    assert code_sha256(root) == independent_digest({**SKILL_TREE, edited: changed}) != recorded


@pytest.mark.parametrize(
    "planted, reason",
    [
        ("evaluator/__pycache__/policy.cpython-311.pyc", "bytecode cache"),
        ("scripts/__pycache__/isolation.cpython-311.pyc", "bytecode cache"),
        ("act/__pycache__/execute.cpython-311.pyc", "bytecode cache"),
        ("act/build/__pycache__/remediation.cpython-311.pyc", "bytecode cache"),
        ("act/execute.pyc", "compiled code"),
        ("act/build/remediation.cpython-311-x86_64-linux-gnu.so", "compiled code"),
        ("evaluator/policy.pyc", "compiled code"),
        ("observe/cli.pyo", "compiled code"),
        ("evaluator/policy.cpython-311-x86_64-linux-gnu.so", "compiled code"),
        ("evaluator/policy.abi3.so", "compiled code"),
        ("observe/github/client.pyd", "compiled code"),
    ],
)
def test_bytecode_and_extension_modules_are_refused(tmp_path: Path, planted: str, reason: str) -> None:
    root = build(tmp_path / "project", {**SKILL_TREE, planted: b"\x00compiled"})
    with pytest.raises(DigestError, match=reason):
        code_sha256(root)


def test_an_empty_bytecode_cache_directory_is_refused(tmp_path: Path) -> None:
    root = build(tmp_path / "project", SKILL_TREE)
    (root / "observe" / "__pycache__").mkdir()
    with pytest.raises(DigestError, match="bytecode cache"):
        code_sha256(root)


@pytest.mark.parametrize("entry_point", ["scripts/evaluate_state.py", "scripts/collect_state.py", "scripts/loop.py"])
def test_a_skill_without_an_entry_point_is_refused(tmp_path: Path, entry_point: str) -> None:
    tree = dict(SKILL_TREE)
    del tree[entry_point]
    root = build(tmp_path / "project", tree)
    with pytest.raises(DigestError, match=entry_point):
        code_sha256(root)


@pytest.mark.parametrize("directory", ["evaluator", "observe", "act", "scripts"])
def test_a_missing_code_directory_is_refused(tmp_path: Path, directory: str) -> None:
    root = build(tmp_path / "project", {k: v for k, v in SKILL_TREE.items() if not k.startswith(directory + "/")})
    with pytest.raises(DigestError, match=f"{directory}/ is missing"):
        code_sha256(root)


def test_evaluator_symlink_leaving_the_project_is_refused(tmp_path: Path) -> None:
    root = build(tmp_path / "project", SKILL_TREE)
    (tmp_path / "steer.py").write_bytes(b"ACTION = 'execute'\n")
    (root / "evaluator" / "steer.py").symlink_to(tmp_path / "steer.py")
    with pytest.raises(DigestError, match="outside"):
        code_sha256(root)


def test_evaluator_entry_point_symlink_leaving_the_project_is_refused(tmp_path: Path) -> None:
    tree = dict(SKILL_TREE)
    del tree["scripts/evaluate_state.py"]
    root = build(tmp_path / "project", tree)
    (tmp_path / "entry.py").write_bytes(b"")
    (root / "scripts" / "evaluate_state.py").symlink_to(tmp_path / "entry.py")
    with pytest.raises(DigestError, match="outside"):
        code_sha256(root)


def test_evaluator_directory_symlink_is_refused(tmp_path: Path) -> None:
    root = build(tmp_path / "project", SKILL_TREE)
    (tmp_path / "elsewhere").mkdir()
    (root / "evaluator" / "plugins").symlink_to(tmp_path / "elsewhere")
    with pytest.raises(DigestError, match="directory symlink"):
        code_sha256(root)


WORKED_EXAMPLE = {
    "evaluator/__init__.py": b"VERSION = 1\n",
    "observe/__init__.py": b"from evaluator import VERSION\n",
    "act/__init__.py": b"from observe import VERSION\n",
    "scripts/evaluate_state.py": b"from evaluator import VERSION\nprint(VERSION)\n",
    "scripts/collect_state.py": b"import observe\n",
    "scripts/loop.py": b"import act\n",
}


def test_worked_example_in_the_reference_doc(tmp_path: Path) -> None:
    demo = build(tmp_path / "demo", WORKED_EXAMPLE)
    documented = "86c8e9a65cff4239569c410dfa3a20b4a3f56ce09b0371a6d76e57bb077bc9e4"
    assert code_sha256(demo) == documented == independent_digest(WORKED_EXAMPLE)
    text = DOC.read_text(encoding="utf-8")
    example = text[text.index("### Worked example") :]
    assert f"# {documented}  -" in example
    # Every file's sha256sum line is printed, in LC_ALL=C order, and nothing else.
    listed = re.findall(r"^# ([0-9a-f]{64})  (\S+/\S+)$", example, flags=re.MULTILINE)
    assert listed == [(hashlib.sha256(WORKED_EXAMPLE[path]).hexdigest(), path) for path in sorted(WORKED_EXAMPLE)]
    # The shell commands build exactly this tree.
    for path, content in WORKED_EXAMPLE.items():
        printf = content.decode().replace("\n", "\\n")
        assert f"printf '{printf}' > {path}\n" in example


# -- the private environment: the locked distributions, checked against RECORD --

ROOT = DOC.parent.parent
SIX = "six==1.17.0"
DATEUTIL = "python-dateutil==2.9.0.post0"


def copy_distribution(name: str, site: Path) -> None:
    """Copy an installed distribution's files (as its RECORD lists them) into ``site``, times kept."""
    found = importlib.metadata.distribution(name)
    for listed in found.files or []:
        if str(listed).startswith("../"):
            continue  # console scripts live outside the site directory
        target = site / str(listed)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(str(found.locate_file(listed))), target)


@pytest.fixture
def site(tmp_path: Path) -> Path:
    """A site directory holding real copies of six and python-dateutil, their RECORDs intact."""
    directory = tmp_path / "site-packages"
    for name in ("six", "python-dateutil"):
        copy_distribution(name, directory)
    return directory


def lock(tmp_path: Path, *pins: str) -> Path:
    path = tmp_path / "requirements-runtime.lock"
    path.write_text("# runtime\n" + "".join(pin + "\n" for pin in pins), encoding="utf-8")
    return path


def pin_with(site: Path) -> str:
    """The project's own pin, with ``site`` searched before the interpreter's path."""
    return evaluator_sha256(ROOT, [str(site), *sys.path])


def pinned_content(path: Path) -> bytes:
    """What the pin holds of a file: its SHA-256, and of cached bytecode the SHA-256 of the code after the header."""
    content = path.read_bytes()
    return hashlib.sha256(content[16:] if path.parent.name == "__pycache__" else content).digest()


def test_every_file_of_a_locked_distribution_is_pinned_by_content(site: Path, tmp_path: Path) -> None:
    entries = environment_files(lock(tmp_path, SIX), [str(site)])
    on_disk = {
        f"{SIX}/{path.relative_to(site).as_posix()}": pinned_content(path)
        for path in site.rglob("*")
        if path.is_file()
        and (path.name.startswith("six") or path.parent.name.startswith("six-"))
        and path.name != "RECORD"  # the list of the files, each pinned itself: pip writes it anew each install
    }
    assert entries == on_disk
    assert f"{SIX}/six.py" in entries and any(name.endswith(".pyc") for name in entries)


def test_a_lock_with_hashes_pins_the_same_distributions(site: Path, tmp_path: Path) -> None:
    hashed = tmp_path / "hashed.lock"
    hashed.write_text(f"# made by a tool\n{SIX} \\\n    --hash=sha256:{'0' * 64} \\\n    --hash=sha256:{'1' * 64}\n")
    assert environment_files(hashed, [str(site)]) == environment_files(lock(tmp_path, SIX), [str(site)])


def test_a_rebuild_that_compiles_the_same_bytecode_again_keeps_the_pin(site: Path) -> None:
    """Only the header of cached bytecode (the source's time and size) changes when pip or compileall runs again."""
    before = pin_with(site)
    cached = site / "dateutil" / "__pycache__" / f"rrule.{sys.implementation.cache_tag}.pyc"
    content = cached.read_bytes()
    cached.write_bytes(content[:8] + bytes(8) + content[16:])  # another time and size: as after a rebuild
    assert pin_with(site) == before
    cached.write_bytes(content[:-1] + bytes([content[-1] ^ 1]))  # the code itself changed
    assert pin_with(site) != before


def test_bytecode_pip_listed_but_that_is_gone_is_not_required(site: Path) -> None:
    # Without it Python compiles the pinned source; the environment builder compiles its own bytecode instead.
    before = pin_with(site)
    (site / "dateutil" / "__pycache__" / f"rrule.{sys.implementation.cache_tag}.pyc").unlink()
    assert pin_with(site) != before  # one file of what runs fewer, and no refusal


def test_files_outside_the_site_directory_are_not_pinned(site: Path, tmp_path: Path) -> None:
    """A console script (``../../bin/NAME`` in RECORD) is written for one location and never imported."""
    before = environment_files(lock(tmp_path, SIX), [str(site)])
    record = next(site.glob("six-*.dist-info")) / "RECORD"
    record.write_text(record.read_text() + "../../bin/six-tool,sha256=" + "A" * 43 + ",10\n")  # and absent
    assert environment_files(lock(tmp_path, SIX), [str(site)]) == before


def test_the_same_files_found_elsewhere_give_the_same_pin(site: Path) -> None:
    # Names carry the distribution and RECORD's path, never where the site directory is.
    assert pin_with(site) == evaluator_sha256(ROOT)


def test_a_modified_package_file_is_refused(site: Path) -> None:
    before = pin_with(site)
    source = site / "dateutil" / "rrule.py"
    source.write_bytes(source.read_bytes().replace(b"rrulestr = _rrulestr()", b"rrulestr = _rrulestr ", 1))
    with pytest.raises(DigestError) as refused:
        pin_with(site)
    assert refused.value.code == "environment-file-modified"
    assert "python-dateutil: dateutil/rrule.py" in refused.value.message
    source.write_bytes(source.read_bytes().replace(b"rrulestr = _rrulestr ", b"rrulestr = _rrulestr()", 1))
    assert pin_with(site) == before  # restored byte for byte: the same pin again


def test_a_missing_record_listed_file_is_refused(site: Path) -> None:
    (site / "six.py").unlink()
    with pytest.raises(DigestError) as refused:
        pin_with(site)
    assert refused.value.code == "environment-file-missing"


def test_a_record_that_lists_a_wrong_hash_is_refused(site: Path) -> None:
    record = next(site.glob("six-*.dist-info")) / "RECORD"
    lines = record.read_text(encoding="utf-8").splitlines()
    lines = [("six.py,sha256=" + "A" * 43 + ",1") if line.startswith("six.py,") else line for line in lines]
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DigestError) as refused:
        pin_with(site)
    assert refused.value.code == "environment-file-modified"


@pytest.mark.parametrize(
    "row", ["six.py,sha256", "six.py,md5=AAAA,1", "six.py", 'six.py,"sha256=x,1', "six.py,sha256=,1"]
)
def test_a_malformed_record_is_refused(site: Path, tmp_path: Path, row: str) -> None:
    record = next(site.glob("six-*.dist-info")) / "RECORD"
    lines = [row if line.startswith("six.py,") else line for line in record.read_text(encoding="utf-8").splitlines()]
    record.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(DigestError) as refused:
        environment_files(lock(tmp_path, SIX), [str(site)])
    assert refused.value.code == "environment-record-invalid"


def test_a_distribution_without_its_record_is_refused(site: Path, tmp_path: Path) -> None:
    (next(site.glob("six-*.dist-info")) / "RECORD").unlink()
    with pytest.raises(DigestError) as refused:
        environment_files(lock(tmp_path, SIX), [str(site)])
    assert refused.value.code == "environment-record-invalid"


@pytest.mark.parametrize("pin", ["six==1.16.0", "absent-package==1.0"])
def test_a_locked_distribution_not_found_at_its_version_is_refused(site: Path, tmp_path: Path, pin: str) -> None:
    with pytest.raises(DigestError) as refused:
        environment_files(lock(tmp_path, pin), [str(site)])
    assert refused.value.code == "environment-distribution-missing"


def cache_tag() -> str:
    return sys.implementation.cache_tag


@pytest.mark.parametrize(
    "planted",
    [
        "dateutil/__pycache__/rrule.{tag}.pyc",  # bytecode pip compiled (RECORD lists it without a hash)
        "dateutil/__pycache__/rrule.{tag}.opt-1.pyc",  # bytecode RECORD does not list
        "dateutil/rrule/__init__.py",  # a package that an import of dateutil.rrule prefers to rrule.py
        "dateutil/extra.py",
        "__pycache__/six.{tag}.pyc",  # the cache of a top-level module
        "six/__init__.py",  # a package that an import of six prefers to six.py
        "six.cpython-311-x86_64-linux-gnu.so",  # an extension module, found before six.py
    ],
)
def test_bytecode_and_planted_files_of_a_distribution_change_the_pin(site: Path, planted: str) -> None:
    before = pin_with(site)
    path = site / planted.format(tag=cache_tag())
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes((path.read_bytes() if path.exists() else b"") + b"# planted\n")
    assert pin_with(site) != before


def test_files_of_other_distributions_in_the_same_site_are_not_pinned(site: Path) -> None:
    # ``site`` is not inside the project's private environment: a development interpreter's site-packages.
    before = pin_with(site)
    (site / "unrelated.py").write_bytes(b"x = 1\n")
    (site / "__pycache__" / f"unrelated.{cache_tag()}.pyc").write_bytes(b"\0")
    assert pin_with(site) == before


# -- the private environment holds the locked distributions and nothing else --

PRIVATE_LOCK = f"# runtime\n{SIX}\n{DATEUTIL}\n"


@pytest.fixture
def private_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """A copy of the skill whose lock names six and python-dateutil, and its private environment (under
    XDG_DATA_HOME, keyed by the lock) holding real copies of exactly those: (project, its site-packages)."""
    project = tmp_path / "skill"
    for directory in ("evaluator", "observe", "act", "scripts"):
        shutil.copytree(ROOT / directory, project / directory, ignore=shutil.ignore_patterns("__pycache__"))
    (project / "requirements-runtime.lock").write_text(PRIVATE_LOCK, encoding="utf-8")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    environment = private_environment(project)
    assert environment is not None
    site = environment / "lib" / "python3.11" / "site-packages"
    for name in ("six", "python-dateutil"):
        copy_distribution(name, site)
    return project, site


def test_the_private_environment_is_keyed_by_the_lock_as_the_scripts_find_it(tmp_path: Path) -> None:
    (tmp_path / "requirements-runtime.lock").write_text(PRIVATE_LOCK, encoding="utf-8")
    isolation = runpy.run_path(str(ROOT / "scripts" / "isolation.py"))
    digest = hashlib.sha256(PRIVATE_LOCK.encode()).hexdigest()
    for data_home, base in [(str(tmp_path / "d"), tmp_path / "d"), ("relative", Path.home() / ".local" / "share")]:
        with pytest.MonkeyPatch.context() as patch:
            patch.setenv("XDG_DATA_HOME", data_home)
            expected = base / "github-codex-pr-loop" / "env" / digest
            assert private_environment(tmp_path) == expected
            assert isolation["private_environment"](str(tmp_path)) == str(expected)


def test_a_venv_inside_the_project_is_not_the_private_environment(private_project: tuple[Path, Path]) -> None:
    """A developer's ``<clone>/.venv`` holds their tools too: only the locked distributions count there."""
    project, site = private_project
    clone_venv = project / ".venv" / "lib" / "python3.11" / "site-packages"
    shutil.copytree(site, clone_venv)
    (clone_venv / "brotli.py").write_bytes(b"import os\n")
    assert evaluator_sha256(project, [str(clone_venv)]) == evaluator_sha256(project, [str(site)])


def test_bytecode_compiled_for_a_locked_source_in_the_private_environment_is_accepted_and_pinned(
    private_project: tuple[Path, Path],
) -> None:
    project, site = private_project
    cached = site / "dateutil" / "__pycache__" / f"rrule.{sys.implementation.cache_tag}.pyc"
    before = evaluator_sha256(project, [str(site)])
    cached.unlink()  # the builder installs with --no-compile and compiles afterwards: RECORD does not list it
    # Compiled under the name pip compiled it under (the builder compiles under the environment's own path).
    compiled_as = importlib.metadata.distribution("python-dateutil").locate_file("dateutil/rrule.py")
    py_compile.compile(str(site / "dateutil" / "rrule.py"), cfile=str(cached), dfile=str(compiled_as))
    assert evaluator_sha256(project, [str(site)]) == before  # the same code: accepted, and the same pin


def test_a_private_environment_of_exactly_the_locked_distributions_is_pinned_as_anywhere(
    private_project: tuple[Path, Path], tmp_path: Path
) -> None:
    project, site = private_project
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(site, elsewhere)
    assert evaluator_sha256(project, [str(site)]) == evaluator_sha256(project, [str(elsewhere)])


@pytest.mark.parametrize(
    "planted, named",
    [
        ("brotli.py", "brotli.py"),  # httpx2 imports brotli whenever it is importable
        ("brotli/__init__.py", "brotli"),  # the first unlisted path is named: here the package directory
        ("brotli/", "brotli"),  # an empty directory imports as a namespace package
        ("brotli.cpython-311-x86_64-linux-gnu.so", "brotli.cpython-311-x86_64-linux-gnu.so"),
        ("__pycache__/brotli.{tag}.pyc", "__pycache__/brotli.{tag}.pyc"),  # __pycache__ holds six's bytecode
        ("zz-startup.pth", "zz-startup.pth"),  # the interpreter runs or follows it at start-up
        ("dateutil/extra.py", "dateutil/extra.py"),  # beside a locked package: pinned elsewhere, refused here
        ("dateutil/__pycache__/rrule.{tag}.opt-1.pyc", "dateutil/__pycache__/rrule.{tag}.opt-1.pyc"),
    ],
)
def test_a_file_no_locked_record_lists_in_the_private_environment_is_refused(
    private_project: tuple[Path, Path], planted: str, named: str
) -> None:
    project, site = private_project
    path = site / planted.format(tag=cache_tag())
    if planted.endswith("/"):
        path.mkdir()
    else:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"import os\n")
    with pytest.raises(DigestError) as refused:
        evaluator_sha256(project, [str(site)])
    assert refused.value.code == "environment-file-unlisted"
    assert refused.value.message.startswith(f"{named.format(tag=cache_tag())} is in the skill's private environment")
    # Outside a private environment the same site is pinned as before: only the locked distributions count.
    outside = project.parent / "site-packages"
    shutil.move(site, outside)
    evaluator_sha256(project, [str(outside)])


def test_an_extra_distribution_in_the_private_environment_is_refused(private_project: tuple[Path, Path]) -> None:
    project, site = private_project
    copy_distribution("idna", site)
    with pytest.raises(DigestError) as refused:
        evaluator_sha256(project, [str(site)])
    assert refused.value.code == "environment-file-unlisted"
    assert refused.value.message.startswith("idna")


def test_only_search_path_directories_inside_the_private_environment_are_held_to_the_lock(
    private_project: tuple[Path, Path], tmp_path: Path
) -> None:
    project, site = private_project
    environment = private_environment(project)
    assert environment is not None
    # A directory of the private environment that is not on the path cannot be imported from.
    (environment / "bin").mkdir()
    (environment / "bin" / "brotli.py").write_bytes(b"import os\n")
    before = evaluator_sha256(project, [str(site)])
    # A second directory of the path inside the environment must hold only locked files too.
    extra = environment / "lib" / "extra"
    extra.mkdir()
    assert evaluator_sha256(project, [str(site), str(extra)]) == before
    (extra / "brotli.py").write_bytes(b"import os\n")
    with pytest.raises(DigestError) as refused:
        evaluator_sha256(project, [str(site), str(extra)])
    assert refused.value.code == "environment-file-unlisted" and str(extra) in refused.value.message
