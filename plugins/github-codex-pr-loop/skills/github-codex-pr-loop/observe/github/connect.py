"""The one way the loop builds a GitHub client: the collector, the hands' reads and their writes alike.

Every caller names the route (``network``: a proxy and its CA, or direct), the
API base URL, the gh CLI asked for a token last, and the list that collects
the token for redaction; none of them has a default, so a caller cannot
silently fall back to the direct route. (Three hand-built clients once
diverged this way: ``loop.py init --reuse-pr`` read the PR without the
configured proxy and CA.)

A command holds one ``GitHubSession``: the token is resolved once (one
``gh auth token`` at most), and every read and write of the command goes
through the one client of its repository (one connection pool, one deadline
policy), closed when the command ends.
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


class GitHubSession:
    """One command's GitHub: one token lookup, one client per repository, all closed together."""

    def __init__(
        self,
        *,
        api_url: str,
        gh_path: str | None,
        gh_config_dir: str | None,
        network: Network,
        secrets: list[str],
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self._route = (api_url, gh_path, gh_config_dir, network)
        self._secrets, self._sleep = secrets, sleep
        self._token: str | None = None
        self._clients: dict[str, GitHubClient] = {}
        self.opened = 0  # clients built, for the benchmarks: one per repository the command touched

    def client(self, repository: str) -> GitHubClient:
        """The command's client for ``repository``, built at first use."""
        if repository not in self._clients:
            api_url, gh_path, gh_config_dir, network = self._route
            if self._token is None:
                self._token = resolve_token(None, api_base_url=api_url, gh_path=gh_path, gh_config_dir=gh_config_dir)
                self._secrets.append(self._token)  # redacted from every line printed from now on
            self._clients[repository] = GitHubClient(
                repository, host=api_url, token=self._token, network=network, sleep=self._sleep
            )
            self.opened += 1
        return self._clients[repository]

    def close(self) -> None:
        for client in self._clients.values():
            client.close()
        self._clients.clear()
