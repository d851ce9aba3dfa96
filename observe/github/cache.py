"""On-disk ETag cache for GitHub GET requests.

GitHub does not count a 304 answer to an authorized conditional request
against the primary rate limit, so a wakeup that finds nothing changed costs
no REST points. Each entry keeps the ETag, the Link header (a 304 need not
repeat it, and pagination needs it) and the exact body bytes.

Entries live under ``$XDG_CACHE_HOME/github-codex-pr-loop/etag`` (or
``~/.cache/...``), one JSON file per URL and token identity. The file name is
a digest of both, so one token's cached bodies are never served to another.
The token itself is never written. A damaged entry is treated as absent: the
cache can only save requests, never change an answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Mapping, NamedTuple

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


class EtagCache:
    def __init__(self, directory: Path, identity: str):
        self.directory = Path(directory) / "etag"
        self._identity = identity

    def _path(self, url: str) -> Path:
        key = hashlib.sha256(f"{self._identity}\x00{url}".encode("utf-8")).hexdigest()
        return self.directory / key[:2] / f"{key}.json"

    def load(self, url: str) -> CachedPage | None:
        try:
            entry = json.loads(self._path(url).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(entry, dict) or entry.get("version") != _ENTRY_VERSION or entry.get("url") != url:
            return None
        etag, link, body = entry.get("etag"), entry.get("link"), entry.get("body")
        if not isinstance(etag, str) or not etag or not isinstance(body, str) or not (link is None or isinstance(link, str)):
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
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
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
