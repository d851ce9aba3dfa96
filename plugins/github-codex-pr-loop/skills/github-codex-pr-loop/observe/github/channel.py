"""ghapi's GhApi, its operations and its transport, within the loop's limits.

Every request to GitHub, read or write, REST or GraphQL, goes through one
``Channel``: ghapi's sync transport (``GhSyncTransport``, the one
``GhApi(..., sync=True)`` builds) over an httpx2 client that enforces the
deadline and the size cap (observe/github/transport.py). REST calls are
ghapi's generated operations (``api.pulls.get(pull_number=7)``), never URLs
built by hand; the only URLs sent as given are GitHub's own next-page links
(after a same-origin check) and the GraphQL endpoint.

``GhApi(sync=True)`` builds a function for each of the 1,225 operations of
GitHub's REST description when it is constructed, which takes about as long
as importing ghapi. ``OperationsApi`` is a GhApi that builds only the
operations it is given, from the same operation table (``ghapi.core.pspec``),
with the same classes and owner/repo defaults; an operation it was not given
does not exist on it (the observer's holds GET operations only).

What GhApi would otherwise take from the environment is fixed here: the
Authorization header is ours (``GITHUB_TOKEN`` and ``GITHUB_JWT_TOKEN`` are
never read), ghapi's request callback is ours (``GHAPI_DEBUG`` never prints),
and the base URL is given (``GH_HOST`` is never used). ghapi's connection
retries are off and redirects are not followed: the read client's retry loop
is the only one, and a redirect is an answer nobody asked for.
"""

from __future__ import annotations

import functools
import json
import os
import re
import ssl
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from ipaddress import ip_address
from typing import Any, cast
from urllib.parse import urlsplit

import httpx2
from fastcore.apisurface import mk_groups, snake
from fastspec.oapi import SyncOpFunc
from fasttransport.errors import APIError
from ghapi.core import GhApi, GhSyncTransport, pspec

from evaluator import policy
from evaluator.canonical import unique_pairs
from evaluator.redact import secret_forms
from observe.github.errors import GitHubObservationError
from observe.github.transport import BoundedClient, call_before
from observe.network import Network

# The media type ghapi's GhApi sends with every request.
GITHUB_ACCEPT = "application/vnd.github.v3+json"


def operation_name(spec: Any) -> str:
    """``group.name`` as GhApi exposes it: ``pulls.get``, ``reactions.list_for_issue``."""
    groups = spec.group if isinstance(spec.group, list) else [spec.group]
    return ".".join([*(snake(group) for group in groups), spec.name])


class OperationsApi(GhApi):
    """A GhApi whose generated operations are only the ones named, built on the transport given."""

    def __init__(self, operations: Iterable[str], *, owner: str, repo: str, gh_host: str, transport: Any):
        # What GhApi.__init__ sets, without its environment lookups and the other 1,200 operations.
        wanted = set(operations)
        self.headers = transport.base_headers
        self.token, self.gh_host, self.transport = None, gh_host, transport
        defaults = {"owner": owner, "repo": repo}  # GhApi's defaults; a call may name another repository
        chosen = [spec for spec in pspec.ops if operation_name(spec) in wanted]
        self.ops = [SyncOpFunc(spec, transport, gh_host, defaults=defaults) for spec in chosen]
        unknown = wanted - {operation_name(op) for op in self.ops}
        if unknown:
            raise ValueError(f"not operations of ghapi's table: {sorted(unknown)}")
        self.func_dict = {f"{op.path}:{op.verb.upper()}": op for op in self.ops}
        self.groups = mk_groups(self.ops)
        for group, value in self.groups.items():
            setattr(self, group, value)

    def operation(self, name: str) -> Any:
        """The operation ``group.name``; ``ValueError`` for one this api was not built with."""
        found = [op for op in self.ops if operation_name(op) == name]
        if not found:
            raise ValueError(f"{name!r} is not an operation of this client")
        return found[0]


# -- the route -------------------------------------------------------------------


def _is_loopback(url: str) -> bool:
    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def route_options(network: Network | None, host: str) -> dict[str, Any]:
    """httpx2 settings for the route: a given proxy/CA (observe/network.py), else direct.

    A configured route is the only one: the environment's proxies are ignored
    (``trust_env=False``) and TLS trusts the system CAs plus the network's CA.
    Direct, loopback hosts ignore environment proxies too, which would
    otherwise see test traffic.
    """
    if network is not None and (network.https_proxy is not None or network.ca_file is not None):
        return {"proxy": network.https_proxy, "verify": network.ssl_context(), "trust_env": False}
    trust_env = not _is_loopback(host)
    if not _SHARED_TRUST:
        return {"trust_env": trust_env}
    settings = tuple(os.environ.get(name) for name in _TRUST_VARIABLES) if trust_env else ()
    return {"verify": _default_trust(trust_env, settings), "trust_env": trust_env}


# What httpx2's default trust reads from the environment when trust_env is on
# (the CA file or directory; the key log file Python's default context opens).
_TRUST_VARIABLES = ("SSL_CERT_FILE", "SSL_CERT_DIR", "SSLKEYLOGFILE")
# On macOS and Windows httpx2's default is a truststore context, which holds a
# lock through each handshake: one stalled connection would hold up the others.
_SHARED_TRUST = sys.platform not in ("darwin", "win32")


@functools.cache
def _default_trust(trust_env: bool, settings: tuple[str | None, ...]) -> ssl.SSLContext:
    """httpx2's default TLS trust, built once per process for the environment settings it depends on.

    Loading the system CA bundle takes tens of milliseconds, and one process
    (a loop command, a test run) may build several clients. Sharing is sound:
    connections only wrap sockets with it, and each sets the same ALPN list
    (HTTP/1.1) on it before a handshake. The bundle is read once per process:
    every command is a short-lived process, so a changed bundle is seen by
    the next one.
    """
    del settings  # the cache key: create_ssl_context reads them from the environment itself
    return httpx2.create_ssl_context(trust_env=trust_env)


# -- answers ---------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_json_body(content: bytes, content_type: str, where: str) -> Any:
    if "json" not in content_type.lower():
        # The header is server text (a proxy may echo anything into it): described, never quoted.
        raise GitHubObservationError(
            "github-malformed-json",
            f"{where}: expected a JSON content type, got {len(content_type)} characters of another",
        )
    try:
        return json.loads(content.decode("utf-8"), object_pairs_hook=unique_pairs, parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as error:
        # The body itself is not quoted: it is server text.
        raise GitHubObservationError(
            "github-malformed-json",
            f"{where}: {len(content)} body bytes are not strict UTF-8 JSON ({type(error).__name__})",
        ) from error


_GRAPHQL_ERROR_TYPE = re.compile(r"[A-Z_]{1,40}")


def graphql_error_types(errors: Any, *, every: bool = False) -> set[str]:
    """The well-formed ``type`` of the errors; with ``every``, empty unless each error has one."""
    if not isinstance(errors, list):
        return set()
    types = [e["type"] if isinstance(e, dict) and isinstance(e.get("type"), str) else None for e in errors]
    if every and (not types or any(t is None or not _GRAPHQL_ERROR_TYPE.fullmatch(t) for t in types)):
        return set()
    return {t for t in types if t is not None and _GRAPHQL_ERROR_TYPE.fullmatch(t)}


def graphql_summary(errors: Any) -> str:
    """How many GraphQL errors, and their types when they look like GitHub's (never their messages)."""
    if not isinstance(errors, list):
        return "errors is not a list"
    types = sorted(graphql_error_types(errors))
    return f"{len(errors)} error(s)" + (f", types {', '.join(types)}" if types else "")


class Channel:
    """One host, one token, one deadline: every exchange with GitHub, through ghapi's transport.

    ``exchange`` sends once and returns the answer whatever its status
    (ghapi raises a non-2xx; the caller classifies it) after refusing one
    that repeats the credential; it raises ``httpx2.TransportError`` when no
    answer came, and ``GitHubObservationError`` past the deadline or the size
    cap. Retrying is the caller's decision (reads retry, writes never do).
    """

    def __init__(
        self,
        host: str,
        token: str,
        *,
        network: Network | None = None,
        timeout: float = 30.0,
        deadline_seconds: float = policy.COLLECTION_DEADLINE_SECONDS,
        max_response_bytes: int = policy.MAX_GITHUB_RESPONSE_BYTES,
        monotonic: Callable[[], float] = time.monotonic,
    ):
        self.host = host.rstrip("/")
        self.origin = urlsplit(self.host)
        if self.origin.scheme not in ("http", "https") or not self.origin.netloc:
            raise ValueError(f"host must be an http(s) base URL, got {host!r}")
        # Every shape the token could come back in (raw, URL-encoded, base64, JSON-escaped).
        self._echo_forms = sorted(secret_forms(token))
        self.timeout = timeout
        self._monotonic = monotonic
        self._deadline = monotonic() + deadline_seconds
        self.sent = 0  # requests ghapi's transport sent (counted by its request callback)
        self.transport = GhSyncTransport(
            debug=self._count,
            timeout=timeout,
            base_headers={"Accept": GITHUB_ACCEPT, "Authorization": f"token {token}"},
            client=BoundedClient(
                remaining=self.remaining,
                read_timeout=timeout,
                max_bytes=max_response_bytes,
                follow_redirects=False,
                **route_options(network, self.host),
            ),
            follow_redirects=False,
            retries=0,
        )

    def _count(self, method: str, url: str, options: Mapping[str, Any]) -> None:
        """ghapi's request callback: counts, and never prints (so GHAPI_DEBUG has nothing to do)."""
        del method, url, options
        self.sent += 1

    def api(self, operations: Iterable[str], owner: str, repo: str) -> OperationsApi:
        return OperationsApi(operations, owner=owner, repo=repo, gh_host=self.host, transport=self.transport)

    def remaining(self) -> float:
        return self._deadline - self._monotonic()

    def close(self) -> None:
        self.transport.close()

    # -- one exchange ------------------------------------------------------------

    def request(self, method: str, url: str, *, headers: Mapping[str, str] | None = None, json: Any = None) -> Any:
        """A call that sends ``url`` as given through ghapi's transport (a next-page link, GraphQL)."""
        return lambda: self.transport.request(method, url, headers=dict(headers or {}), json=json, raw=True)

    def exchange(self, send: Callable[[], Any], where: str) -> httpx2.Response:
        try:
            response = cast(httpx2.Response, call_before(self.remaining(), send, where))
        except APIError as error:
            # A ghapi operation raises every non-2xx and every transport failure as APIError.
            cause = error.__cause__
            if isinstance(cause, httpx2.HTTPStatusError):
                response = cause.response
            elif isinstance(cause, httpx2.TransportError):
                raise cause from None
            else:
                raise
        except httpx2.HTTPStatusError as error:  # a URL sent as given: the transport's own error
            response = error.response
        self.check_no_echo(response, where)  # before anything of it is stored, retried or reported
        return response

    def parse(self, response: httpx2.Response, where: str) -> Any:
        body = parse_json_body(response.content, response.headers.get("content-type", ""), where)
        # JSON may spell the token with \u escapes the byte check cannot see; the parsed text can.
        self.refuse_echo(json.dumps(body, ensure_ascii=False), where)
        return body

    def refuse_echo(self, text: str, where: str) -> None:
        """A server or proxy that repeats our credential is not answered, retried or quoted."""
        if any(form in text for form in self._echo_forms):
            raise GitHubObservationError(
                "github-credential-echoed",
                f"{where}: the answer repeats the credential it was sent; nothing in it is used",
            )

    def check_no_echo(self, response: httpx2.Response, where: str) -> None:
        headers = "\n".join(
            f"{name.decode('latin-1')}: {value.decode('latin-1')}" for name, value in response.headers.raw
        )
        self.refuse_echo(headers + "\n" + response.content.decode("latin-1"), where)

    # -- URLs GitHub gives -------------------------------------------------------

    def graphql_url(self) -> str:
        # GitHub Enterprise Server serves REST at /api/v3 and GraphQL at /api/graphql.
        if self.host.endswith("/api/v3"):
            return self.host[: -len("/v3")] + "/graphql"
        return f"{self.host}/graphql"

    def same_origin(self, url: str) -> bool:
        """Same scheme, host and port, under the API base path: where our token may go."""
        target = urlsplit(url)
        return (target.scheme, target.netloc) == (
            self.origin.scheme,
            self.origin.netloc,
        ) and target.path.startswith(self.origin.path)
