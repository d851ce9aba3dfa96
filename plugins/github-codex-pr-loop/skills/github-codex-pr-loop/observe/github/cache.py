"""On-disk ETag cache for GitHub GET requests.

GitHub does not count a 304 answer to an authorized conditional request
against the primary rate limit, so a wakeup that finds nothing changed costs
no REST points. Each entry keeps the ETag, the Link header (a 304 need not
repeat it, and pagination needs it) and the exact body bytes.

Entries live under ``$XDG_CACHE_HOME/github-codex-pr-loop/etag`` (or
``~/.cache/...``), one JSON file per request key and token identity (the key
is the reader's: an operation's host, name and arguments, or a next-page
link as GitHub gave it). The file name is a digest of both, so one token's
cached bodies are never served to another.
The token itself is never written. A damaged entry is treated as absent: the
cache can only save requests, never change an answer.

Whoever can write a cache directory can swap an entry's body while keeping its
ETag, and GitHub's 304 would then vouch for the forged body. So every
directory of the cache (the cache directory, ``etag``, each shard) is created
one level at a time with mode 0700, whatever the umask, and an existing one is
used only when it is a real directory owned by this user that neither group
nor others can write; otherwise the cache is not used at all (more requests,
same answers). See references/github-observations.md, "ETag cache and points".
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import NamedTuple

CACHE_APP_NAME = "github-codex-pr-loop"
_ENTRY_VERSION = 1


class CachedPage(NamedTuple):
    etag: str
    link: str | None
    body: bytes


def default_cache_dir(environ: Mapping[str, str] | None = None) -> Path:
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / CACHE_APP_NAME


def _is_private_directory(path: Path) -> bool:
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return (
        stat.S_ISDIR(info.st_mode) and info.st_uid == os.geteuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )


def _make_directory(path: Path) -> None:
    try:
        os.mkdir(path, 0o700)  # one level at a time: mkdir(parents=True) gives ancestors umask-filtered 0777
    except FileExistsError:
        pass


class EtagCache:
    def __init__(self, directory: Path, identity: str):
        self.root = Path(directory)
        self.directory = self.root / "etag"
        self._identity = identity

    def _path(self, url: str) -> Path:
        key = hashlib.sha256(f"{self._identity}\x00{url}".encode()).hexdigest()
        return self.directory / key[:2] / f"{key}.json"

    def _private(self, shard: Path) -> bool:
        """Every directory of the cache down to ``shard`` is ours alone."""
        return all(_is_private_directory(level) for level in (self.root, self.directory, shard))

    def _create(self, shard: Path) -> None:
        missing = [level for level in (shard, *shard.parents) if not level.exists()]
        for level in reversed(missing):
            _make_directory(level)

    def load(self, url: str) -> CachedPage | None:
        path = self._path(url)
        if not self._private(path.parent):
            return None
        try:
            with open(path, "rb") as stream:
                info = os.fstat(stream.fileno())
                if info.st_uid != os.geteuid() or info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
                    return None
                entry = json.loads(stream.read().decode("utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("version") != _ENTRY_VERSION or entry.get("url") != url:
            return None
        etag, link, body = entry.get("etag"), entry.get("link"), entry.get("body")
        if (
            not isinstance(etag, str)
            or not etag
            or not isinstance(body, str)
            or not (link is None or isinstance(link, str))
        ):
            return None
        return CachedPage(etag, link, body.encode("utf-8"))

    def store(self, url: str, etag: str, link: str | None, body: bytes) -> None:
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError:
            return  # only strict UTF-8 JSON is ever served from the cache
        entry = {"version": _ENTRY_VERSION, "url": url, "etag": etag, "link": link, "body": text}
        path = self._path(url)
        temporary: str | None = None
        try:
            self._create(path.parent)
            if not self._private(path.parent):
                return  # refuse to write where others could swap the entry
            # Write then rename, so a reader never sees half an entry.
            handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=".json")
            with os.fdopen(handle, "w", encoding="utf-8") as stream:
                json.dump(entry, stream, ensure_ascii=False, separators=(",", ":"))
            os.replace(temporary, path)
            temporary = None
        except OSError:
            pass  # a cache that cannot be written costs requests, not correctness
        finally:
            if temporary is not None:
                Path(temporary).unlink(missing_ok=True)
