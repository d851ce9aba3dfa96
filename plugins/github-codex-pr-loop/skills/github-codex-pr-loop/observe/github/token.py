"""Where the GitHub token comes from, and how it is referred to without being shown.

Order: an explicit argument, then ``GH_TOKEN``, then ``GITHUB_TOKEN`` (the
order `gh` itself uses), then ``<gh_path> auth token --hostname <host>``, where
``gh_path`` is the absolute path the caller named (the collector's ``--gh``):
never whatever ``gh`` comes first on the caller's PATH, and no CLI at all when
no path was named. The token is only ever placed in the Authorization header;
anything that must name it (the ETag cache key) uses ``token_identity``
(references/github-observations.md, "Token handling").
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
from collections.abc import Callable, Mapping
from urllib.parse import urlsplit

from observe.gh import GhSetupError, gh_environment, trusted_gh
from observe.gh import gh_config_dir as default_gh_config_dir
from observe.github.errors import GitHubObservationError

GH_CLI_TIMEOUT_SECONDS = 10.0
# A token goes into an HTTP header: anything outside visible ASCII (a stray
# newline from a file, a space) would corrupt the request or inject a header.
_TOKEN_SHAPE = re.compile(r"[\x21-\x7e]{1,1024}")
# Domain separation: the identity digest is useless for anything but this cache.
_IDENTITY_PREFIX = b"github-codex-pr-loop token identity v1\x00"


def gh_hostname(api_base_url: str) -> str:
    """The `gh` host name for an API base URL (api.github.com -> github.com)."""
    parts = urlsplit(api_base_url)
    host = parts.hostname or ""
    if host == "api.github.com":
        return "github.com"
    return parts.netloc or host


def resolve_token(
    explicit: str | None = None,
    *,
    api_base_url: str = "https://api.github.com",
    environ: Mapping[str, str] | None = None,
    gh_path: str | None = None,
    gh_config_dir: str | None = None,
    run: Callable[..., subprocess.CompletedProcess] = subprocess.run,
) -> str:
    """Return the token to use, or raise ``github-token-missing``.

    gh runs only once checked as trusted (observe/gh.py), with an environment built from nothing
    but where its configuration lives (``gh_config_dir``; default: resolved from ``environ``).
    """
    environ = os.environ if environ is None else environ
    candidates = (
        ("the token argument", explicit),
        ("GH_TOKEN", environ.get("GH_TOKEN")),
        ("GITHUB_TOKEN", environ.get("GITHUB_TOKEN")),
    )
    for source, value in candidates:
        if value:
            return _checked(value, source)
    if gh_path is None:
        raise GitHubObservationError(
            "github-token-missing", "no token argument, GH_TOKEN or GITHUB_TOKEN, and no gh CLI path was given"
        )
    if not os.path.isabs(gh_path):
        # A relative path would be looked up from the working directory: the same guess as PATH.
        raise GitHubObservationError("github-token-missing", "the gh CLI path must be absolute")
    try:
        trusted = trusted_gh(gh_path)
        environment = gh_environment(gh_config_dir or default_gh_config_dir(environ))
    except GhSetupError as error:
        raise GitHubObservationError("github-token-missing", f"gh cannot be asked for a token: {error}") from None
    return _checked(_token_from_gh_cli(trusted, api_base_url, run, environment), "`gh auth token`")


def token_identity(token: str) -> str:
    """A stable, one-way name for a token (cache keys), never the token itself."""
    return hashlib.sha256(_IDENTITY_PREFIX + token.encode("utf-8")).hexdigest()


def _checked(value: str, source: str) -> str:
    if not _TOKEN_SHAPE.fullmatch(value):
        # Say where the bad value came from, never what it was.
        raise GitHubObservationError(
            "github-token-missing", f"the token from {source} is empty or contains characters a header cannot carry"
        )
    return value


def _token_from_gh_cli(
    gh_path: str, api_base_url: str, run: Callable[..., subprocess.CompletedProcess], environment: dict[str, str]
) -> str:
    command = [gh_path, "auth", "token", "--hostname", gh_hostname(api_base_url)]
    try:
        completed = run(
            command, capture_output=True, text=True, timeout=GH_CLI_TIMEOUT_SECONDS, check=False, env=environment
        )
    except FileNotFoundError as error:
        raise GitHubObservationError(
            "github-token-missing",
            "no token argument, GH_TOKEN or GITHUB_TOKEN, and the given gh CLI path does not exist",
        ) from error
    except subprocess.TimeoutExpired as error:
        raise GitHubObservationError(
            "github-token-missing", f"`gh auth token` did not answer within {GH_CLI_TIMEOUT_SECONDS:g} s"
        ) from error
    except OSError as error:
        raise GitHubObservationError(
            "github-token-missing", f"`gh auth token` could not be started ({type(error).__name__})"
        ) from error
    if completed.returncode != 0:
        # stderr is not quoted: it is gh's text, and we keep messages to values we control.
        raise GitHubObservationError(
            "github-token-missing", f"`gh auth token` exited with status {completed.returncode}"
        )
    return (completed.stdout or "").strip()
