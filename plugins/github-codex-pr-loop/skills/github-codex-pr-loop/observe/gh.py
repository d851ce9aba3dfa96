"""The GitHub CLI as users have it: found on PATH, checked as a trusted executable, run with their login.

``gh`` answers twice for the loop: ``gh auth token`` (the GitHub client's
token, observe/github/token.py) and ``gh auth git-credential`` (git's one
credential helper, observe/git/runner.py). Both run it with an environment
built from nothing; the one thing of the user's they get is where gh keeps
its login, ``GH_CONFIG_DIR``, resolved here exactly as gh resolves it.

A gh is trusted when the file it resolves to (symlinks followed, as
Homebrew's ``/opt/homebrew/bin/gh`` is one) is a regular executable file
owned by root or by this user and writable by no one else, in directories
owned by root or this user that no other user can change (references/prerequisites.md).
"""

from __future__ import annotations

import grp
import os
import re
import shutil
import stat
from collections.abc import Mapping

# Runs through the shell inside git's credential helper value, so it must need no quoting.
SAFE_EXECUTABLE_PATH = re.compile(r"/[A-Za-z0-9/._+-]+")
# Groups whose members may change the system anyway: a directory writable by them adds no one.
# (Homebrew's prefix on Intel macOS, /usr/local, is group-writable by "admin".)
_ADMIN_GROUPS = frozenset({"root", "wheel", "admin"})


class GhSetupError(Exception):
    """gh cannot be used as it is; ``code`` is ``gh-not-found`` or ``git-credential-helper-unsafe``."""

    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


def find_gh(explicit: str | None, environ: Mapping[str, str] = os.environ) -> str | None:
    """``--gh`` when given, else the first ``gh`` on the user's PATH (as found, not yet trusted)."""
    if explicit is not None:
        return explicit
    return shutil.which("gh", path=environ.get("PATH", os.defpath))


def trusted_gh(path: str | None) -> str:
    """The real path of a gh that may run as git's credential helper, or ``GhSetupError``."""
    if path is None:
        raise GhSetupError(
            "gh-not-found", "no gh on PATH and no --gh PATH: the loop needs the GitHub CLI for its login"
        )
    if not os.path.isabs(path):
        raise GhSetupError("git-credential-helper-unsafe", f"gh must be an absolute path, not {path!r}")
    real = os.path.realpath(path)
    try:
        status = os.stat(real)
    except OSError as error:
        raise GhSetupError("gh-not-found", f"gh at {path} cannot be found ({error.strerror})") from None
    if not SAFE_EXECUTABLE_PATH.fullmatch(real):
        raise GhSetupError(
            "git-credential-helper-unsafe", f"gh resolves to {real!r}, which needs shell quoting inside git's helper"
        )
    if not stat.S_ISREG(status.st_mode) or not os.access(real, os.X_OK):
        raise GhSetupError("git-credential-helper-unsafe", f"gh resolves to {real}, which is not an executable file")
    _require_owned(real, status, "gh")
    if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise GhSetupError("git-credential-helper-unsafe", f"gh at {real} is writable by other users")
    directory = os.path.dirname(real)
    while True:
        _require_safe_directory(directory)
        parent = os.path.dirname(directory)
        if parent == directory:
            return real
        directory = parent


def _require_owned(path: str, status: os.stat_result, what: str) -> None:
    if status.st_uid not in (0, os.geteuid()):
        raise GhSetupError(
            "git-credential-helper-unsafe", f"{what} at {path} belongs to uid {status.st_uid}, not to root or you"
        )


def _require_safe_directory(directory: str) -> None:
    status = os.stat(directory)
    _require_owned(directory, status, "the directory")
    sticky = bool(status.st_mode & stat.S_ISVTX)  # others may add entries, never replace ours
    if status.st_mode & stat.S_IWOTH and not sticky:
        raise GhSetupError("git-credential-helper-unsafe", f"{directory}, which holds gh, is writable by anyone")
    if status.st_mode & stat.S_IWGRP and not sticky and _group_name(status.st_gid) not in _ADMIN_GROUPS:
        raise GhSetupError("git-credential-helper-unsafe", f"{directory}, which holds gh, is writable by its group")


def _group_name(gid: int) -> str:
    try:
        return grp.getgrgid(gid).gr_name
    except KeyError:
        return ""


def gh_config_dir(environ: Mapping[str, str] = os.environ) -> str:
    """Where gh keeps ``hosts.yml``: GH_CONFIG_DIR, else $XDG_CONFIG_HOME/gh, else ~/.config/gh (gh's own order)."""
    explicit = environ.get("GH_CONFIG_DIR")
    if explicit:
        if not os.path.isabs(explicit):
            raise GhSetupError("gh-config-dir-invalid", f"GH_CONFIG_DIR must be an absolute path, not {explicit!r}")
        return os.path.normpath(explicit)
    xdg = environ.get("XDG_CONFIG_HOME")
    if xdg and os.path.isabs(xdg):
        return os.path.join(os.path.normpath(xdg), "gh")
    home = environ.get("HOME") or os.path.expanduser("~")
    if not os.path.isabs(home):
        raise GhSetupError("gh-config-dir-invalid", "HOME is not an absolute path: set GH_CONFIG_DIR")
    return os.path.join(os.path.normpath(home), ".config", "gh")


def gh_environment(config_dir: str) -> dict[str, str]:
    """What gh runs with when the loop starts it itself: a fixed PATH and the user's gh configuration only."""
    return {"PATH": "/usr/bin:/bin", "LC_ALL": "C", "GH_CONFIG_DIR": config_dir, "GH_PROMPT_DISABLED": "1"}
