"""The commit identity: ``user.name`` and ``user.email``, and nothing else, from the user's git configuration.

The hardened runner never lets git read the global or system configuration
(``GIT_CONFIG_GLOBAL=/dev/null``, ``GIT_CONFIG_NOSYSTEM=1``): either could
set a hook path, a credential helper or a filter. So the identity the user
set with ``git config --global user.email ...`` is read here, key by key,
with ``git config --file F --no-includes --get KEY`` under the same
environment built from nothing, and handed to the commit explicitly
(``GIT_AUTHOR_*``/``GIT_COMMITTER_*``). Precedence is git's own: the
repository's config, then ``~/.gitconfig``, then
``$XDG_CONFIG_HOME/git/config`` (default ``~/.config/git/config``), then
the system file; an explicit flag (``--author-name``/``--author-email``)
beats them all. Included files are not followed (references/prerequisites.md).
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from observe.git.config import ConfigEntry
from observe.git.runner import BASE_ENVIRONMENT, DEFAULT_TIMEOUT_SECONDS

KEYS = ("user.name", "user.email")
SYSTEM_CONFIG = "/etc/gitconfig"
_FORBIDDEN = set("<>\n\r\0")  # git refuses or strips these in an ident


@dataclass(frozen=True)
class IdentityField:
    value: str
    source: str  # where it came from, for the approval summary: a flag, a file path, "repository config"


class IdentityError(Exception):
    """A config file that git cannot read, or a value a commit cannot carry; the message names the file."""


def user_config_files(environ: Mapping[str, str] = os.environ) -> list[str]:
    """The files git would read below the repository's, highest precedence first."""
    home = environ.get("HOME") or os.path.expanduser("~")
    xdg = environ.get("XDG_CONFIG_HOME") or os.path.join(home, ".config")
    files = []
    explicit_global = environ.get("GIT_CONFIG_GLOBAL")
    if explicit_global:
        files.append(explicit_global)
    else:
        files += [os.path.join(home, ".gitconfig"), os.path.join(xdg, "git", "config")]
    if not environ.get("GIT_CONFIG_NOSYSTEM"):
        files.append(environ.get("GIT_CONFIG_SYSTEM") or SYSTEM_CONFIG)
    return [path for path in files if os.path.isabs(path) and path != os.devnull]


def commit_identity(
    git_path: str,
    repository_entries: Sequence[ConfigEntry],
    explicit: Mapping[str, str | None],
    environ: Mapping[str, str] = os.environ,
) -> dict[str, IdentityField | None]:
    """Each of ``user.name`` and ``user.email`` with its source, or None where no source sets it."""
    found: dict[str, IdentityField | None] = {}
    for key in KEYS:
        value = explicit.get(key)
        field = IdentityField(value, f"--author-{key.split('.')[1]}") if value is not None else None
        if field is None:
            field = _from_repository(repository_entries, key)
        if field is None:
            field = next((f for path in user_config_files(environ) if (f := _from_file(git_path, path, key))), None)
        if field is not None:
            _require_usable(field, key)
        found[key] = field
    return found


def _from_repository(entries: Sequence[ConfigEntry], key: str) -> IdentityField | None:
    values = [entry.value for entry in entries if entry.key.lower() == key and entry.value is not None]
    return IdentityField(values[-1], "repository config") if values else None  # the last one wins, as in git


def _from_file(git_path: str, path: str, key: str) -> IdentityField | None:
    if not os.path.isfile(path):
        return None
    argv = [git_path, "config", "--file", path, "--no-includes", "--get", "--end-of-options", key]
    try:
        completed = subprocess.run(
            argv,
            env=dict(BASE_ENVIRONMENT, HOME=os.devnull),
            cwd="/",  # no repository around: only the named file is read
            capture_output=True,
            timeout=DEFAULT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise IdentityError(f"git could not read {path} ({type(error).__name__})") from None
    if completed.returncode == 1:
        return None
    if completed.returncode != 0:
        raise IdentityError(f"git cannot parse {path} (exit {completed.returncode}); fix it with `git config --list`")
    value = completed.stdout.decode("utf-8", "replace").removesuffix("\n")
    return IdentityField(value, path)


def _require_usable(field: IdentityField, key: str) -> None:
    if not field.value.strip() or _FORBIDDEN & set(field.value):
        raise IdentityError(f"{key} from {field.source} is empty or holds <, > or a line break")
