"""Directory digests, and the digest of the installed skill and its environment (the evaluator pin).

The directory digest rule is ``evaluator.canonical.tree_digest``
(references/digests.md): for each file in path order, its relative path as
UTF-8, a NUL byte, then the raw 32-byte SHA-256 of its content; the digest is
the lowercase hex SHA-256 of that concatenation. This module computes it
without importing the evaluator, on purpose: the digest pins the evaluator's
files, so it must not be computed by the code it pins (an edited
evaluator/canonical.py could otherwise report the pinned value). A test
checks that both computations agree.
"Path order" here is the relative POSIX path sorted by code point (equal to
UTF-8 byte order, and to ``LC_ALL=C sort``). A path never contains NUL and
each content hash is exactly 32 bytes, so the concatenation is unambiguous.

Why the skill's code is digested: the bootstrap records ``evaluator_sha256``
in its checkpoint and every wakeup recomputes it before trusting the
evaluator's action. The evaluator is the safety kernel, the collector
builds what it judges (and computes this very pin), and the hands perform the
writes it permits; an agent that edited any of them mid-loop (to silence a
check, "fix" a stop, or widen a write) would otherwise be steering the loop
with its own rules. A changed digest is state drift, so the
loop stops instead. The same holds for the packages the scripts import from
the skill's private environment (the distributions its runtime lock names):
a tampered ``httpx2`` or ``dateutil`` steers the collector as surely as an
edited collector, so every file of theirs is checked against the
distribution's own ``RECORD`` and pinned too, and the skill's private
environment may hold nothing else: a module there that a locked package
imports when present is refused. What is pinned and refused, and
how the scripts make sure nothing else is loaded:
references/automation-registry.md#the-evaluator-digest.
"""

from __future__ import annotations

import base64
import csv
import hashlib
import importlib.metadata
import os
import sys
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path

from observe.errors import DIGEST_CODES, ObserveError

# Every directory the entry points load code from: the packages
# scripts/isolation.py lets them import (the evaluator, the collector, the
# hands) and the scripts themselves (with that loader).
CODE_DIRECTORIES = ("evaluator", "observe", "act", "scripts")
ENTRY_POINTS = ("scripts/evaluate_state.py", "scripts/collect_state.py", "scripts/loop.py")
# Files Python could load as code without reading a pinned source: bytecode and
# extension modules. Never pinned (caches change on their own), always refused.
_BYTECODE_CACHE = "__pycache__"
_LOADABLE_NON_SOURCE = (".pyc", ".pyo", ".so", ".pyd", ".dylib")
_CHUNK = 1 << 20
# The distributions the scripts load: exactly those this lock names, at its versions.
RUNTIME_LOCK = "requirements-runtime.lock"
# Where the skill's private environment lives (scripts/environment.py builds it; the scripts re-execute into
# it): scripts/isolation.py's rule, restated here because the pin is never computed by code it pins through
# an import of the scripts (a test checks both agree).
APP = "github-codex-pr-loop"
# A bytecode file's header: magic, flags, then the source's modification time and size (or its hash). What
# runs is the code object after it; the header only says whether Python may use it instead of the source.
_PYC_HEADER = 16
# RECORD hashes this module can check (hashlib's guaranteed algorithms, less the broken ones).
_RECORD_ALGORITHMS = frozenset(hashlib.algorithms_guaranteed) - {"md5", "sha1"}


class DigestError(ObserveError):
    """A file set that cannot be digested faithfully (escaping symlink, bad path,
    missing file), skill code that carries compiled code, or a locked
    distribution that is missing or differs from its RECORD."""

    codes = DIGEST_CODES


def directory_digest(root: Path, files: list[str] | None = None) -> str:
    """Digest ``files`` (relative POSIX paths; default: every file under ``root``).

    Input order does not matter. A path that is not a canonical relative path,
    repeats, is not a regular file, or resolves outside ``root`` is refused.
    The default walk takes every file, caches included: code that Python runs
    is digested by ``evaluator_sha256``, which refuses caches instead.
    """
    base = Path(root).resolve(strict=True)
    relative_paths = _walk(base, base, refuse_compiled=False) if files is None else list(files)
    if len(set(relative_paths)) != len(relative_paths):
        raise DigestError("evaluator-digest-failed", "the file list names a path more than once")
    entries = {}
    for relative in relative_paths:
        _check_relative(relative)
        entries[relative] = _file_sha256(base, relative)
    return _digest(entries)


def evaluator_sha256(project_root: Path, search_path: Sequence[str] | None = None) -> str:
    """The evaluator pin: the skill's code and the installed packages it loads, in one digest.

    The directory digest rule over one list of named files: every file of the
    code directories (``code_files``), named by its path under the project
    root, and every file of each distribution ``RUNTIME_LOCK`` names
    (``environment_files``), named ``<name>==<version>/<path>``. The
    distributions are found on ``search_path`` (default: ``sys.path``, where
    the running interpreter finds them). A directory of that path inside the
    skill's private environment must hold nothing else (``environment_files``).
    """
    base = Path(project_root).resolve(strict=True)
    entries = code_files(base)
    path = sys.path if search_path is None else search_path
    entries.update(environment_files(base / RUNTIME_LOCK, path, private_environment(base)))
    return _digest(entries)


def private_environment(project_root: Path, environ: dict[str, str] | None = None) -> Path | None:
    """``$XDG_DATA_HOME/github-codex-pr-loop/env/<SHA-256 of the runtime lock>`` (None: the lock is unreadable)."""
    environ = dict(os.environ) if environ is None else environ
    try:
        digest = hashlib.sha256((Path(project_root) / RUNTIME_LOCK).read_bytes()).hexdigest()
    except OSError:
        return None
    base = environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(base) / APP / "env" / digest


def code_sha256(project_root: Path) -> str:
    """The digest of the skill's code directories alone (the first half of the evaluator pin)."""
    return _digest(code_files(Path(project_root).resolve(strict=True)))


def code_files(base: Path) -> dict[str, bytes]:
    """Every file of every code directory under ``base``: relative path -> SHA-256.

    Every file counts, whatever its name or extension, so nothing can be added
    next to the pinned code without changing the digest. A bytecode cache
    directory, a bytecode file or an extension module is refused outright: the
    scripts never write or read bytecode in the skill, so one that exists was
    put there by something else. The entry points must exist: an install
    without them is incomplete, and a missing file must not digest to a value.
    """
    files: list[str] = []
    for directory in CODE_DIRECTORIES:
        top = base / directory
        if not top.is_dir() or top.is_symlink():
            raise DigestError(
                "evaluator-digest-failed", f"{directory}/ is missing or not a plain directory under {base}"
            )
        files += _walk(base, top, refuse_compiled=True)
    for entry_point in ENTRY_POINTS:
        if entry_point not in files:
            raise DigestError("evaluator-digest-failed", f"{entry_point} is missing under {base}")
    entries = {}
    for relative in files:
        _check_relative(relative)
        entries[relative] = _file_sha256(base, relative)
    return entries


def environment_files(lock: Path, search_path: Sequence[str], private: Path | None = None) -> dict[str, bytes]:
    """Every file of each distribution ``lock`` pins, checked against its RECORD: name -> SHA-256.

    Each distribution is the first one ``importlib.metadata`` finds on
    ``search_path`` under its name (as the scripts' dependency check finds it)
    and must carry the pinned version and a ``RECORD``. Every file RECORD
    lists with a hash must exist and match it (``environment-file-missing``,
    ``environment-file-modified``), and is pinned by its content; so is every
    file RECORD does not list but Python could load for the distribution
    (``_unlisted_files``: a planted module). Cached bytecode, listed or not,
    is pinned by the code after its header (``_bytecode_sha256``), so an
    identical rebuild keeps the pin. Not pinned: RECORD itself, files outside
    the site directory (console scripts), listed bytecode that is gone.

    Every directory of ``search_path`` inside ``private`` (the skill's private
    environment) must hold exactly the files the RECORDs of the locked
    distributions found there list: anything else is importable code that no
    pin covers (``environment-file-unlisted``, ``_refuse_unlisted``).
    """
    entries: dict[str, bytes] = {}
    listed_by_site: dict[Path, set[str]] = {}
    for name, version in _pins(lock):
        found = next(iter(importlib.metadata.distributions(name=name, path=list(search_path))), None)
        if found is None or found.version != version:
            seen = "not found" if found is None else f"found {found.version}"
            message = f"{name}=={version} ({seen} on the interpreter's path)"
            raise DigestError("environment-distribution-missing", message)
        site = Path(str(found.locate_file(""))).resolve()
        listed = _record(found, f"{name}=={version}")
        listed_by_site.setdefault(site, set()).update(listed)
        for path, expected in listed.items():
            if path.startswith("../"):
                continue  # outside the site directory (a console script, made for one location): never imported
            if expected is not None:
                entries[f"{name}=={version}/{path}"] = _verified_sha256(site, path, name, expected)
            elif _cached_bytecode(path) and os.path.lexists(site / path):
                entries[f"{name}=={version}/{path}"] = _bytecode_sha256(site, path, name)
            # else: RECORD itself, or bytecode pip compiled that is gone (the source is then compiled): not code
        for path in _unlisted_files(site, listed):
            pinned = _bytecode_sha256 if _cached_bytecode(path) else partial(_verified_sha256, expected=None)
            entries[f"{name}=={version}/{path}"] = pinned(site, path, name=name)
    if private is not None:
        for directory in _private_directories(private, search_path):
            _refuse_unlisted(directory, listed_by_site.get(directory, set()))
    return entries


def _private_directories(private: Path, search_path: Sequence[str]) -> list[Path]:
    """The directories of ``search_path`` that lie inside the private environment (its site-packages)."""
    if not private.is_dir():
        return []
    inside = private.resolve()
    found: list[Path] = []
    for entry in search_path:
        directory = Path(entry or ".").resolve()
        if directory.is_dir() and directory.is_relative_to(inside) and directory not in found:
            found.append(directory)
    return found


def _cached_bytecode(path: str) -> bool:
    """A file of a ``__pycache__`` directory: bytecode Python reads instead of compiling the source beside it."""
    parts = path.split("/")
    return len(parts) >= 2 and parts[-2] == _BYTECODE_CACHE and path.endswith(".pyc")


def _bytecode_sha256(site: Path, path: str, name: str) -> bytes:
    """The SHA-256 of the code a bytecode file holds, after its header.

    The header (the source's modification time and size) changes whenever the
    environment is rebuilt; the code object after it is what runs, and it is
    the same for the same source compiled by the same interpreter at the same
    path. So an identical rebuild keeps the pin, and edited bytecode changes it.
    """
    target = Path(os.path.normpath(site / path))
    if os.path.lexists(target) and not os.path.isfile(target):
        raise DigestError("environment-file-missing", f"{name}: {path} is not a regular file (at {site})")
    try:
        content = target.read_bytes()
    except OSError as error:
        raise DigestError("environment-file-missing", f"{name}: {path} cannot be read at {site}") from error
    return hashlib.sha256(content[_PYC_HEADER:] if len(content) > _PYC_HEADER else content).digest()


def _with_bytecode(listed: set[str]) -> set[str]:
    """The listed files and the bytecode this interpreter compiles for each listed source."""
    tag = sys.implementation.cache_tag
    compiled = set()
    for path in listed:
        if tag and path.endswith(".py") and not path.startswith("../"):
            parent, _, source = path.rpartition("/")
            cache = f"{parent}/{_BYTECODE_CACHE}" if parent else _BYTECODE_CACHE
            compiled.add(f"{cache}/{source[: -len('.py')]}.{tag}.pyc")
    return listed | compiled


def _refuse_unlisted(directory: Path, listed: set[str]) -> None:
    """Refuse any file or directory under ``directory`` that no locked distribution's RECORD lists.

    The private environment holds the locked distributions and nothing else,
    so anything more was added after install: a module a locked package
    imports when present (``brotli.py``, which httpx2 would load), a package,
    an extension module, a ``.pth`` file the interpreter runs at start-up, or
    a whole other distribution. Refused rather than pinned: pinning would
    accept whatever was there at bootstrap. A directory counts too, even an
    empty one (Python imports it as a namespace package). Files are judged by
    name here; their content is what the pin hashes.
    """
    listed = _with_bytecode(listed)
    parents = {parent.as_posix() for path in listed for parent in Path(path).parents}
    for relative in sorted(_walk(directory, directory, refuse_compiled=False, with_directories=True)):
        if relative not in listed and relative not in parents:
            message = (
                f"{relative} is in the skill's private environment ({directory}) but in no RECORD of a "
                "distribution requirements-runtime.lock names; remove it or rebuild the environment"
            )
            raise DigestError("environment-file-unlisted", message)


def _pins(lock: Path) -> list[tuple[str, str]]:
    """Each requirement's (name, version); a line ending in a backslash goes on on the next (its ``--hash``es)."""
    try:
        lines = lock.read_text(encoding="utf-8").replace("\\\n", " ").splitlines()
    except (OSError, UnicodeDecodeError) as error:
        raise DigestError("evaluator-digest-failed", f"{lock} cannot be read: {error}") from error
    pins = [line.split()[0].partition("==")[::2] for line in lines if line.strip() and not line.startswith("#")]
    if not pins or not all(name and version for name, version in pins):
        raise DigestError("evaluator-digest-failed", f"{lock} must pin every requirement exactly (name==version)")
    return pins


def _record(distribution: importlib.metadata.Distribution, label: str) -> dict[str, tuple[str, str] | None]:
    """RECORD as path -> (algorithm, urlsafe-base64 digest without padding), None where it gives no hash."""
    text = distribution.read_text("RECORD")
    if not text:
        raise DigestError("environment-record-invalid", f"{label} has no RECORD (not a .dist-info install)")
    listed: dict[str, tuple[str, str] | None] = {}
    try:
        rows = list(csv.reader(text.splitlines()))
    except csv.Error as error:
        raise DigestError("environment-record-invalid", f"{label}'s RECORD is not CSV: {error}") from error
    for number, row in enumerate(rows, start=1):
        if len(row) != 3 or not row[0] or "\0" in row[0] or row[0] in listed:
            raise DigestError("environment-record-invalid", f"{label}'s RECORD row {number} is malformed")
        algorithm, equals, value = row[1].partition("=")
        if row[1] and (not equals or algorithm not in _RECORD_ALGORITHMS or not value):
            raise DigestError("environment-record-invalid", f"{label}'s RECORD row {number} has no usable hash")
        listed[row[0]] = (algorithm, value) if row[1] else None
    return listed


def _unlisted_files(site: Path, listed: Iterable[str]) -> list[str]:
    """Files RECORD does not list that Python could still load for the distribution.

    Every file under each top-level directory RECORD lists files in (the
    distribution's packages and its .dist-info, bytecode caches included),
    and, for each top-level module ``<stem>.py`` it lists, every entry of the
    site directory that an import of ``<stem>`` could pick instead
    (``<stem>/``, ``<stem>.<anything>``) and its cached bytecode
    ``__pycache__/<stem>.*``. Paths that leave the site directory
    (``../../bin/<console script>``) are RECORD's alone: checked, not walked.
    """
    listed = set(listed)
    tops = {path.split("/")[0] for path in listed if "/" in path and not path.startswith("../")}
    stems = {path[: -len(".py")] for path in listed if "/" not in path and path.endswith(".py")}
    candidates: set[str] = set()
    if stems:
        for entry in os.listdir(site):
            if any(entry == stem or entry.startswith(stem + ".") for stem in stems):
                (tops if (site / entry).is_dir() else candidates).add(entry)
        cache = site / _BYTECODE_CACHE
        if cache.is_dir():
            candidates.update(
                f"{_BYTECODE_CACHE}/{entry}"
                for entry in os.listdir(cache)
                if any(entry.startswith(stem + ".") for stem in stems)
            )
    for top in tops - {_BYTECODE_CACHE}:
        if (site / top).is_dir():
            candidates.update(_walk(site, site / top, refuse_compiled=False))
    return sorted(candidates - listed)


def _verified_sha256(site: Path, path: str, name: str, expected: tuple[str, str] | None) -> bytes:
    """The file's SHA-256, after checking it against RECORD's hash when RECORD gives one."""
    target = Path(os.path.normpath(site / path))
    content = hashlib.sha256()
    other = None if expected is None or expected[0] == "sha256" else hashlib.new(expected[0])
    if os.path.lexists(target) and not os.path.isfile(target):  # checked first: a FIFO would block the read
        raise DigestError("environment-file-missing", f"{name}: {path} is not a regular file (at {site})")
    try:
        with open(target, "rb") as handle:
            while chunk := handle.read(_CHUNK):
                content.update(chunk)
                if other is not None:
                    other.update(chunk)
    except OSError as error:
        message = f"{name}: {path}, listed in its RECORD, cannot be read at {site}: {error.strerror}"
        raise DigestError("environment-file-missing", message) from error
    if expected is not None:
        actual = (other or content).digest()
        if base64.urlsafe_b64encode(actual).rstrip(b"=").decode("ascii") != expected[1]:
            message = f"{name}: {path} differs from its RECORD (at {site}); rebuild the skill's environment"
            raise DigestError("environment-file-modified", message)
    return content.digest()


def _digest(entries: dict[str, bytes]) -> str:
    """The directory digest rule over named content hashes: name, NUL, raw SHA-256, in name order."""
    stream = hashlib.sha256()
    for name in sorted(entries):
        stream.update(_encode(name) + b"\0" + entries[name])
    return stream.hexdigest()


def _walk(base: Path, top: Path, *, refuse_compiled: bool, with_directories: bool = False) -> list[str]:
    """Every file under ``top`` (relative POSIX paths; every directory too when
    asked), refusing directory symlinks and, when asked, bytecode caches,
    bytecode files and extension modules."""
    found: list[str] = []

    def fail(error: OSError) -> None:
        raise DigestError("evaluator-digest-failed", f"cannot walk {error.filename}: {error.strerror}") from error

    for directory, subdirectories, names in os.walk(top, onerror=fail):
        here = Path(directory)
        for name in subdirectories:
            relative = (here / name).relative_to(base).as_posix()
            # os.walk does not descend into a directory symlink; silently leaving
            # its files out would leave importable code unpinned.
            if (here / name).is_symlink():
                raise DigestError("evaluator-digest-failed", f"{relative} is a directory symlink")
            if refuse_compiled and name == _BYTECODE_CACHE:
                message = "a bytecode cache in the skill's code is refused (delete it; the scripts write none)"
                raise DigestError("evaluator-compiled-code-present", f"{relative}/: {message}")
            if with_directories:
                found.append(relative)
        subdirectories.sort()
        for name in names:
            relative = (here / name).relative_to(base).as_posix()
            if refuse_compiled and name.endswith(_LOADABLE_NON_SOURCE):
                message = "compiled code in the skill's code is refused; only sources are pinned and loaded"
                raise DigestError("evaluator-compiled-code-present", f"{relative}: {message}")
            found.append(relative)
    return found


def _check_relative(relative: str) -> None:
    # One spelling per file: "a//b", "./a" or "a\\b" would give the same file another digest.
    if "\\" in relative or any(part in ("", ".", "..") for part in relative.split("/")):
        raise DigestError("evaluator-digest-failed", f"{relative!r} is not a canonical relative POSIX path")


def _encode(relative: str) -> bytes:
    try:
        return relative.encode("utf-8")
    except UnicodeEncodeError as error:  # a non-UTF-8 file name, surrogate-escaped by os
        raise DigestError("evaluator-digest-failed", f"{relative!r} is not valid UTF-8") from error


def _file_sha256(base: Path, relative: str) -> bytes:
    try:
        target = (base / relative).resolve(strict=True)
    except (OSError, RuntimeError) as error:  # missing, dangling or looping symlink
        raise DigestError("evaluator-digest-failed", f"{relative} cannot be resolved: {error}") from error
    if not target.is_relative_to(base):
        raise DigestError("evaluator-digest-failed", f"{relative} resolves to {target}, outside {base}")
    if not target.is_file():
        raise DigestError("evaluator-digest-failed", f"{relative} is not a regular file")
    content = hashlib.sha256()
    with open(target, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            content.update(chunk)
    return content.digest()
