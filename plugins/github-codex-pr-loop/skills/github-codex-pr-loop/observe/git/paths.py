"""Filesystem observations that use no git: path records, metadata files, scopes, commands.

Why a module of its own: the action runner must recheck path records
immediately before each edit and stage without opening a repository, so
everything here reads the filesystem only (lstat, readlink, realpath, file
bytes) and never starts a process. It holds the git-dir discovery from the
``.git`` entry, path records (lstat chain, resolved target, inside/outside
checks) and ``recheck_path_records``, the file and directory digests of the
metadata snapshot, filesystem scope digests and ``command_definition_sha256``.
Digest inputs are defined in references/digests.md.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable, Mapping, Sequence

from evaluator.canonical import digest, tree_digest
from evaluator.formats import names_git_metadata
from observe.git.runner import GitObservationError, _file_sha256, _utf8

# --- filesystem observations (no git) -------------------------------------


def resolve_git_dirs(worktree: str) -> tuple[str, str]:
    """(git dir, common dir) of a worktree from its ``.git`` entry, without running git."""
    dot_git = os.path.join(worktree, ".git")
    try:
        st = os.lstat(dot_git)
    except OSError as error:
        raise GitObservationError("git-dir-not-found", f"{worktree} has no .git") from error
    if stat.S_ISDIR(st.st_mode):
        git_dir = os.path.realpath(dot_git)
    elif stat.S_ISREG(st.st_mode):
        line = _small_text(dot_git)
        if not line.startswith("gitdir: "):
            raise GitObservationError("git-dir-not-found", f"{dot_git} is not a gitfile")
        git_dir = os.path.realpath(os.path.join(worktree, line[len("gitdir: ") :]))
    else:
        raise GitObservationError("git-dir-not-found", f"{dot_git} is neither a directory nor a gitfile")
    common_dir = git_dir
    commondir_file = os.path.join(git_dir, "commondir")
    if os.path.isfile(commondir_file):
        common_dir = os.path.realpath(os.path.join(git_dir, _small_text(commondir_file)))
    return git_dir, common_dir


def refuse_foreign_ownership(worktree: str, git_dir: str, common_dir: str) -> None:
    """Refuse a checkout another user owns: what git's safe.directory check does when git finds the repository.

    The runner passes ``--git-dir``, and git skips that check for an explicit git
    dir, so a repository planted by another user (with its config, hooks and
    drivers) would otherwise be read as ours. The work-tree root, its ``.git``
    entry, the git dir and the common dir must all belong to the effective uid.
    """
    uid = os.geteuid()
    for path in dict.fromkeys((worktree, os.path.join(worktree, ".git"), git_dir, common_dir)):
        try:
            owner = os.lstat(path).st_uid
        except OSError as error:
            raise GitObservationError("git-path-unobservable", f"cannot lstat {path}: {error.strerror}") from error
        if owner != uid:
            message = f"{path} is owned by uid {owner}, not by the current user (uid {uid})"
            raise GitObservationError("git-repository-not-owned", message)


def _small_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read(4096).strip()
    except (OSError, UnicodeDecodeError) as error:
        raise GitObservationError("git-dir-not-found", f"cannot read {path}: {error}") from error


def check_repository_path(path: str) -> list[str]:
    """The components of a canonical repository-relative path, or an error."""
    parts = path.split("/") if isinstance(path, str) else []
    bad = not parts or any(part in ("", ".", "..") for part in parts) or any(c in path for c in "\0\\")
    if bad:
        raise GitObservationError("git-path-not-canonical", f"{path!r} is not a canonical repository-relative path")
    return parts


def path_records(worktree: str, paths: Iterable[str]) -> list[dict]:
    """One record per path, sorted by path, in the exact shape of the spec's path_records."""
    root = os.path.realpath(worktree)
    git_dirs = resolve_git_dirs(root)
    paths = list(paths)
    if len(set(paths)) != len(paths):
        raise GitObservationError("git-path-duplicate", "a path is listed more than once")
    return [_path_record(root, git_dirs, path) for path in sorted(paths)]


def recheck_path_records(worktree: str, records: Sequence[Mapping]) -> list[tuple[str, str]]:
    """(path, field) for every field that differs from a fresh observation; empty when all match."""
    if not all(isinstance(record, Mapping) and isinstance(record.get("path"), str) for record in records):
        raise GitObservationError("git-path-record-invalid", "each record must be an object with a string path")
    fresh = {record["path"]: record for record in path_records(worktree, [r["path"] for r in records])}
    differences = []
    for record in records:
        now = fresh[record["path"]]
        keys = sorted(set(now) | set(record))
        differences += [(record["path"], key) for key in keys if now.get(key) != record.get(key)]
    return differences


def _path_record(root: str, git_dirs: tuple[str, str], path: str) -> dict:
    parts = check_repository_path(path)
    # The root record carries the identity of this checkout, so a clone with the same layout differs.
    chain = [dict(_lstat_record(root, "."), repository=_repository_identity(root, git_dirs))]
    for depth in range(1, len(parts) + 1):
        chain.append(_lstat_record(os.path.join(root, *parts[:depth]), parts[depth - 1]))
    resolved = os.path.realpath(os.path.join(root, *parts))
    target = _target_record(resolved)
    _refuse_unwritable_target(path, target)
    inside = resolved.startswith(root + os.sep)
    location = os.path.relpath(resolved, root) if inside else resolved
    in_metadata = any(names_git_metadata(p) for p in parts + location.split("/")) or any(
        resolved == d or resolved.startswith(d + os.sep) for d in git_dirs
    )
    resolved_target = {"inside_worktree": inside, "location": location, "type": target["type"]}
    if target["type"] == "file":
        # The very file: an in-place edit keeps it, a swap for another file (or a new hard link) does not.
        resolved_target.update(device=target["device"], inode=target["inode"])
    return {
        "inside_worktree": inside,
        "lstat_chain_sha256": digest(chain),
        "outside_git_metadata": not in_metadata,
        "path": path,
        "resolved_target_sha256": digest(resolved_target),
    }


def _refuse_unwritable_target(path: str, target: dict) -> None:
    """A planned path is a regular file with one link, or nothing yet (then an edit creates it).

    A directory, FIFO, socket or device is not something an edit writes; a symlink
    loop or a path below a file cannot be written at all; and a file with a second
    hard link shares its bytes with a name that may lie anywhere on the device, so
    an in-place edit inside the work tree would write outside it.
    """
    if target["type"] not in ("file", "absent"):
        message = f"{path!r} resolves to neither a regular file nor nothing (found: {target['type']})"
        raise GitObservationError("git-path-not-regular-file", message)
    if target["type"] == "file" and target["links"] != 1:
        message = f"{path!r} is a file with {target['links']} hard links; an edit would also change the others"
        raise GitObservationError("git-path-hard-linked", message)


def _repository_identity(root: str, git_dirs: tuple[str, str]) -> dict:
    """Device and inode of the work-tree root, its ``.git`` entry, the git dir and the common dir."""
    identity = {}
    for name, path in (
        ("worktree", root),
        ("dot_git", os.path.join(root, ".git")),
        ("git_dir", git_dirs[0]),
        ("common_dir", git_dirs[1]),
    ):
        try:
            st = os.lstat(path)
        except OSError as error:
            raise GitObservationError("git-path-unobservable", f"cannot lstat {path}: {error.strerror}") from error
        identity[name] = [st.st_dev, st.st_ino]
    return identity


def _lstat(full_path: str) -> os.stat_result | str:
    """The lstat result, or ``"absent"`` / ``"unreachable"`` (behind a non-directory or a symlink loop)."""
    try:
        return os.lstat(full_path)
    except FileNotFoundError:
        return "absent"
    except OSError as error:
        if isinstance(error, NotADirectoryError) or error.errno == errno.ELOOP:
            return "unreachable"
        raise GitObservationError("git-path-unobservable", f"cannot lstat {full_path}: {error.strerror}") from error


def _target_record(full_path: str) -> dict:
    """What lies where a path resolves: its type, and for a file its device, inode and link count."""
    st = _lstat(full_path)
    if isinstance(st, str):
        return {"type": st}
    record: dict = {"type": _kind(st.st_mode)}
    if stat.S_ISREG(st.st_mode):
        record.update(device=st.st_dev, inode=st.st_ino, links=st.st_nlink)
    return record


def _lstat_record(full_path: str, name: str) -> dict:
    """Type, permission bits, owner, symlink target, and a directory's device and inode.

    Size and times are left out: an approved edit changes them. A directory keeps
    its inode through any edit of the files in it, so its identity is bound; a
    file's identity is bound by the resolved target instead.
    """
    st = _lstat(full_path)
    if isinstance(st, str):
        return {"name": name, "type": st}
    record = {"name": name, "type": _kind(st.st_mode), "mode": stat.S_IMODE(st.st_mode)}
    record.update(uid=st.st_uid, gid=st.st_gid)
    if stat.S_ISLNK(st.st_mode):
        record["target"] = _utf8(os.readlink(os.fsencode(full_path)), "symlink target")
    if stat.S_ISDIR(st.st_mode):
        record.update(device=st.st_dev, inode=st.st_ino)
    return record


def _kind(mode: int) -> str:
    for test, name in ((stat.S_ISREG, "file"), (stat.S_ISDIR, "directory"), (stat.S_ISLNK, "symlink")):
        if test(mode):
            return name
    return "other"


def file_observation(path: str) -> dict:
    """What a single metadata file is: absent, a file with its content digest, a symlink and its target."""
    try:
        kind = _kind(os.lstat(path).st_mode)
        if kind == "file":
            return {"sha256": _file_sha256(path), "type": kind}
        if kind == "symlink":
            return {"target": _utf8(os.readlink(os.fsencode(path)), "symlink target"), "type": kind}
        return {"type": kind}
    except FileNotFoundError:
        return {"type": "absent"}
    except OSError as error:
        raise GitObservationError("git-path-unobservable", f"cannot read {path}: {error.strerror}") from error


def directory_sha256(path: str) -> str | None:
    """The directory digest of references/digests.md (path, NUL, raw SHA-256 per file, in path order); None if absent.

    Extension: a symlink is never followed; it contributes SHA-256 of ``b"symlink\\0" + target``.
    """
    if not os.path.isdir(path) or os.path.islink(path):
        return None
    entries: list[tuple[str, bytes]] = []
    stack = [""]
    while stack:
        relative = stack.pop()
        for entry in os.scandir(os.path.join(path, relative) if relative else path):
            name = f"{relative}/{entry.name}" if relative else entry.name
            if entry.is_symlink():
                entries.append((name, hashlib.sha256(b"symlink\0" + os.readlink(os.fsencode(entry.path))).digest()))
            elif entry.is_dir(follow_symlinks=False):
                stack.append(name)
            elif entry.is_file(follow_symlinks=False):
                entries.append((name, bytes.fromhex(_file_sha256(entry.path))))
    return tree_digest(entries)


def filesystem_scope_sha256(paths: Iterable[str]) -> str:
    """Canonical digest of the sorted, de-duplicated real paths of a scope."""
    paths = list(paths)
    if not paths or not all(isinstance(p, str) and os.path.isabs(p) for p in paths):
        raise GitObservationError("filesystem-scope-invalid", "a scope is a non-empty list of absolute paths")
    return digest(sorted({os.path.realpath(p) for p in paths}))


def command_definition_sha256(argv: Sequence[str]) -> str:
    """Canonical digest of ``{"argv": argv, "executable_sha256": SHA-256 of argv[0]'s bytes}``."""
    if not argv or not all(isinstance(a, str) for a in argv) or not os.path.isabs(argv[0]):
        raise GitObservationError("command-executable-not-absolute", "argv[0] must be an absolute executable path")
    try:
        executable_sha256 = _file_sha256(argv[0])
    except OSError as error:
        message = f"cannot read {argv[0]}: {error.strerror}"
        raise GitObservationError("command-executable-unreadable", message) from error
    return digest({"argv": list(argv), "executable_sha256": executable_sha256})
