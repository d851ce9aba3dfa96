"""Directory digests, and the digest of the installed evaluator.

The directory digest rule (references/digests.md): for each file in path
order, its relative path as UTF-8, a NUL byte, then the raw 32-byte SHA-256 of
its content; the digest is the lowercase hex SHA-256 of that concatenation.
"Path order" here is the relative POSIX path sorted by code point (equal to
UTF-8 byte order, and to ``LC_ALL=C sort``). A path never contains NUL and
each content hash is exactly 32 bytes, so the concatenation is unambiguous.

Why the evaluator is digested: the bootstrap records ``evaluator_sha256`` in
its checkpoint and every wakeup recomputes it before trusting the evaluator's
action. The evaluator is the safety kernel; an agent that edited it mid-loop
(to silence a check, or "fix" a stop) would otherwise be steering the loop
with its own rules. A changed digest is state drift, so the loop stops instead.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import Callable

from observe.errors import DIGEST_CODES, ObserveError

EVALUATOR_PACKAGE = "evaluator"
EVALUATOR_ENTRY_POINT = "scripts/evaluate_state.py"
_CHUNK = 1 << 20


class DigestError(ObserveError):
    """A file set that cannot be digested faithfully (escaping symlink, bad path, missing file)."""

    codes = DIGEST_CODES


def directory_digest(root: Path, files: list[str] | None = None) -> str:
    """Digest ``files`` (relative POSIX paths; default: every file under ``root``).

    Input order does not matter. A path that is not a canonical relative path,
    repeats, is not a regular file, or resolves outside ``root`` is refused.
    The default walk takes every file, caches included: a caller digesting code
    that Python runs should pass an explicit list (as ``evaluator_sha256`` does).
    """
    base = Path(root).resolve(strict=True)
    relative_paths = _walk(base, base, lambda name: True, skip_dirs=()) if files is None else list(files)
    if len(set(relative_paths)) != len(relative_paths):
        raise DigestError("evaluator-digest-failed", "the file list names a path more than once")
    stream = hashlib.sha256()
    for relative in sorted(relative_paths):
        _check_relative(relative)
        stream.update(_encode(relative) + b"\0" + _file_sha256(base, relative))
    return stream.hexdigest()


def evaluator_sha256(project_root: Path) -> str:
    """The digest of the installed evaluator: every ``*.py`` under evaluator/ plus the entry point.

    ``__pycache__`` is skipped because Python rewrites it on import, so it is
    not pinned: a .pyc planted with the source's recorded mtime and size would
    still load. Run the evaluator with ``PYTHONPYCACHEPREFIX`` set to a fresh
    directory to close that gap. The entry point must exist: an install
    without it is incomplete, and a missing file must not digest to a value.
    """
    base = Path(project_root).resolve(strict=True)
    package = base / EVALUATOR_PACKAGE
    if not package.is_dir() or package.is_symlink():
        raise DigestError("evaluator-digest-failed", f"{EVALUATOR_PACKAGE}/ is missing or not a plain directory under {base}")
    files = _walk(base, package, lambda name: name.endswith(".py"), skip_dirs=("__pycache__",))
    return directory_digest(base, files + [EVALUATOR_ENTRY_POINT])


def _walk(base: Path, top: Path, keep: Callable[[str], bool], skip_dirs: tuple[str, ...]) -> list[str]:
    found = []

    def fail(error: OSError) -> None:
        raise DigestError("evaluator-digest-failed", f"cannot walk {error.filename}: {error.strerror}") from error

    for directory, subdirectories, names in os.walk(top, onerror=fail):
        here = Path(directory)
        for name in subdirectories:
            # os.walk does not descend into a directory symlink; silently leaving
            # its files out would leave importable code unpinned.
            if (here / name).is_symlink():
                raise DigestError("evaluator-digest-failed", f"{(here / name).relative_to(base).as_posix()} is a directory symlink")
        subdirectories[:] = sorted(name for name in subdirectories if name not in skip_dirs)
        found.extend((here / name).relative_to(base).as_posix() for name in names if keep(name))
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
