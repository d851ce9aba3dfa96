"""The one way the loop builds a GitHub client: the collector, the hands' reads and their writes alike.

Every caller names the route (``network``: a proxy and its CA, or direct), the
API base URL, the gh CLI asked for a token last, and the list that collects
the token for redaction; none of them has a default, so a caller cannot
silently fall back to the direct route. (Three hand-built clients once
diverged this way: ``loop.py init --reuse-pr`` read the PR without the
configured proxy and CA.)
"""

from __future__ import annotations

import time
from collections.abc import Callable

from observe.github.client import GitHubClient
from observe.github.token import resolve_token
from observe.network import Network


def github_client(
    repository: str,
    *,
    api_url: str,
    gh_path: str | None,
    network: Network,
    gh_config_dir: str | None = None,
    secrets: list[str],
    use_cache: bool = True,
    sleep: Callable[[float], None] = time.sleep,
) -> GitHubClient:
    """A client for ``repository`` over ``network``; the token it resolved is appended to ``secrets``.

    The token comes from ``GH_TOKEN``, ``GITHUB_TOKEN`` or ``<gh_path> auth
    token``, never from whichever gh is first on PATH (observe/github/token.py).
    """
    token = resolve_token(None, api_base_url=api_url, gh_path=gh_path, gh_config_dir=gh_config_dir)
    secrets.append(token)  # redacted from every line printed from now on
    return GitHubClient(repository, host=api_url, token=token, network=network, use_cache=use_cache, sleep=sleep)
