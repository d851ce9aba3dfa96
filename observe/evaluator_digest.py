"""Directory digests, and the digest of the installed skill code (the evaluator pin).

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
loop stops instead. What is pinned and refused, and how the scripts make sure
nothing else is loaded: references/automation-registry.md#the-evaluator-digest.
"""

from __future__ import annotations

import hashlib
import os
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


class DigestError(ObserveError):
    """A file set that cannot be digested faithfully (escaping symlink, bad path,
    missing file), or skill code that carries compiled code."""

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
    stream = hashlib.sha256()
    for relative in sorted(relative_paths):
        _check_relative(relative)
        stream.update(_encode(relative) + b"\0" + _file_sha256(base, relative))
    return stream.hexdigest()


def evaluator_sha256(project_root: Path) -> str:
    """The digest of the installed skill code: every file of every code directory.

    Every file counts, whatever its name or extension, so nothing can be added
    next to the pinned code without changing the digest. A bytecode cache
    directory, a bytecode file or an extension module is refused outright: the
    scripts never write or read bytecode in the skill, so one that exists was
    put there by something else. The entry points must exist: an install
    without them is incomplete, and a missing file must not digest to a value.
    """
    base = Path(project_root).resolve(strict=True)
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
    return directory_digest(base, files)


def _walk(base: Path, top: Path, *, refuse_compiled: bool) -> list[str]:
    """Every file under ``top`` (relative POSIX paths), refusing directory symlinks
    and, when asked, bytecode caches, bytecode files and extension modules."""
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
