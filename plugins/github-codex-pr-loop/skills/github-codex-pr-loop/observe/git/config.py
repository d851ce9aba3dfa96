"""Repository configuration and the transport URL, parsed without running anything.

Why a module of its own: what ``-c`` cannot override (``url.*.insteadOf``,
URL-specific ``http.<url>.*``, ``include``/``includeIf``, URL-named remotes,
unnameable filter drivers) must be recognised in the config listing and
refused before any other git command; the filter drivers found there are what
the runner neutralizes by name. The canonical ``https://github.com/<owner>/<repo>.git``
URL rules and ``transport_url_sha256`` belong here too: they decide which
remote entries are acceptable. Pure functions over bytes and strings; the
observer (observe/git/observer.py) runs the command and feeds them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from evaluator.canonical import text_digest
from evaluator.formats import REPOSITORY
from observe.git.runner import GitObservationError, _utf8, redact_credentials

# The owner/repo inside is checked whole by the evaluator's REPOSITORY grammar.
_CANONICAL_URL = re.compile(r"https://github\.com/([^/]+/[^/]+)\.git")
_SAFE_NAME = re.compile(r"[A-Za-z0-9._-]+")  # remote and filter driver names we can put in argv


# --- transport URL ---------------------------------------------------------


def parse_github_https_url(url: str) -> str:
    """The lowercase ``owner/repo`` of an exactly canonical ``https://github.com/<owner>/<repo>.git``.

    Anything else is refused, never repaired: user info, port, query, fragment,
    percent escapes, dot segments, a missing ``.git``, upper case, whitespace.
    """
    match = _CANONICAL_URL.fullmatch(url) if isinstance(url, str) else None
    if match is None or not REPOSITORY.matches(match.group(1)):
        raise GitObservationError(
            "git-remote-url-not-canonical",
            "the remote URL is not exactly https://github.com/<lowercase-owner>/<lowercase-repo>.git",
        )
    return match.group(1)


# The spellings of a github.com repository a checkout's remote may have. They
# only say which remote is the pull request's; git's network traffic always
# uses the canonical https URL (references/git-execution-boundary.md).
_REMOTE_SPELLING = re.compile(
    r"(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)([A-Za-z0-9-]+/[A-Za-z0-9._-]+?)(?:\.git)?"
)


def github_repository_of(url: str) -> str | None:
    """The lowercase ``owner/repo`` a remote URL names on github.com, or None.

    ``https://github.com/o/r``, with or without ``.git``, ``git@github.com:o/r.git``
    and ``ssh://git@github.com/o/r`` all name ``o/r`` (GitHub ignores case).
    Any other host (a GitHub Enterprise Server among them), user info, port,
    query or path names nothing.
    """
    match = _REMOTE_SPELLING.fullmatch(url) if isinstance(url, str) else None
    if match is None:
        return None
    repository = match.group(1).lower()
    return repository if REPOSITORY.matches(repository) else None


def canonical_github_url(repository: str) -> str:
    if not REPOSITORY.matches(repository):
        raise GitObservationError("git-repository-invalid", f"repository {repository!r} is not lowercase owner/repo")
    return f"https://github.com/{repository}.git"


def transport_url_sha256(url: str) -> str:
    parse_github_https_url(url)
    return text_digest(url)


# --- repository configuration ---------------------------------------------


class ConfigEntry(NamedTuple):
    scope: str
    origin: str
    key: str
    value: str | None


def parse_config_listing(raw: bytes) -> list[ConfigEntry]:
    """Entries of ``git config --list --show-scope --show-origin -z`` (scope, origin, key[\\nvalue])."""
    fields = _utf8(raw, "config").split("\0")
    if fields[-1] != "" or (len(fields) - 1) % 3:
        raise GitObservationError("git-output-unexpected", "config listing is not NUL-separated triples")
    entries = []
    for index in range(0, len(fields) - 1, 3):
        key, newline, value = fields[index + 2].partition("\n")
        entries.append(ConfigEntry(fields[index], fields[index + 1], key, value if newline else None))
    return entries


def refuse_uncontrollable_config(entries: Iterable[ConfigEntry]) -> None:
    """Refuse config that ``-c`` cannot override.

    Messages name keys, never values, and even a key is redacted first: a URL in
    a subsection (``url.https://x-access-token:<token>@github.com/.insteadOf``)
    carries the token in the key itself.
    """
    for entry in entries:
        section, _, rest = entry.key.partition(".")
        subsection, _, _name = rest.rpartition(".")
        section = section.lower()
        where = redact_credentials(f"{entry.key} ({entry.scope} {entry.origin})")
        if section == "hook":
            # Hooks defined in config (hook.<name>.command) ignore core.hooksPath.
            raise GitObservationError("git-config-hook-present", f"{where}: a config hook ignores core.hooksPath")
        if section == "url":
            raise GitObservationError("git-insteadof-present", f"{where}: URL rewriting applies before any -c")
        if section in ("include", "includeif"):
            raise GitObservationError("git-include-present", f"{where}: included config is not observed")
        if section == "http" and subsection:
            raise GitObservationError("git-http-url-config-present", f"{where}: a URL-specific setting beats -c")
        if section == "http":
            # -c could override one generic key, but http has dozens; refusing all is the honest option.
            raise GitObservationError("git-http-config-present", f"{where}: http settings are refused, not enumerated")
        if section == "remote" and ("/" in subsection or ":" in subsection):
            # `git push <url>` reads remote.<url>.* as if the URL were a remote name.
            raise GitObservationError("git-url-named-remote-present", f"{where}: a remote named like a URL")
        if section == "filter" and not _SAFE_NAME.fullmatch(subsection):
            raise GitObservationError("git-filter-driver-unneutralizable", f"{where}: the driver name cannot go in -c")


def repository_entries(entries: Iterable[ConfigEntry]) -> list[ConfigEntry]:
    """The checkout's own config: our ``-c`` overrides (scope ``command``) removed."""
    return [entry for entry in entries if entry.scope != "command"]


def filter_drivers(entries: Iterable[ConfigEntry]) -> dict[str, dict[str, str | None]]:
    """Configured filter drivers and their last clean/smudge/process/required values."""
    drivers: dict[str, dict[str, str | None]] = {}
    for entry in entries:
        section, _, rest = entry.key.partition(".")
        name, _, variable = rest.rpartition(".")
        if section.lower() == "filter" and name:
            drivers.setdefault(name, {})[variable.lower()] = entry.value
    return drivers
