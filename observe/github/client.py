"""A fail-closed GitHub client over ghapi's transport layer.

ghapi sends every request through fasttransport's ``SyncTransport`` (its
``GhApi(..., sync=True)`` builds one, with GitHub's ``Accept`` header, then
1,225 generated endpoint functions this client never calls). The client builds
that transport alone, with the same header and our Authorization header, so a
wakeup neither imports ghapi's OpenAPI spec nor builds its endpoints; this
wrapper adds what the observer needs and ghapi leaves out
(references/github-observations.md):

- every list is read to its last page by following ``Link: rel="next"``
  (ghapi's own pager stops at the first empty page and ignores Link);
- a 304 is an answer, not an error: with an ETag cache it returns the cached
  body (ghapi raises it as an error);
- 5xx, timeouts, connection failures and rate limits are retried a bounded
  number of times with an injectable ``sleep``; ghapi retries only connection
  errors, with a sleep we cannot replace, so its own retries are switched off;
- every body is parsed as strict JSON; anything else raises
  ``GitHubObservationError``;
- the whole client (reads, retries, sleeps) runs within one deadline and
  every answer within a decoded-size cap (observe/github/transport.py).
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import ssl
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from ipaddress import ip_address
from pathlib import Path
from typing import Any, cast
from urllib.parse import quote, urlencode, urlsplit

import httpx2
from fasttransport.core import SyncTransport

from evaluator import policy
from evaluator.canonical import unique_pairs
from evaluator.formats import REPOSITORY
from evaluator.redact import secret_forms
from observe.github.cache import CachedPage, EtagCache, default_cache_dir
from observe.github.errors import GitHubObservationError
from observe.github.token import resolve_token, token_identity
from observe.github.transport import BoundedClient, call_before, deadline_error
from observe.network import Network

DEFAULT_API_URL = "https://api.github.com"
PER_PAGE = 100
# A PR with more than 100 pages (10,000 items) of anything is not something
# this loop should act on; the cap also stops a server that links in circles.
MAX_PAGES = 100
# A list of several pages is read until two consecutive passes agree (get_all).
MAX_LIST_PASSES = 4
_LINK_ENTRY = re.compile(r'<([^<>]*)>\s*;\s*rel="([^"]*)"')
_GRAPHQL_ERROR_TYPE = re.compile(r"[A-Z_]{1,40}")


@dataclass(frozen=True)
class Reply:
    """One answered request: ``body`` is parsed JSON, or None for a tolerated error status."""

    status: int
    body: Any
    link: str | None


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


def _item_identity(item: Any) -> Any:
    """What tells list items apart: the id GitHub gives every listed object, else the item itself."""
    if isinstance(item, dict) and isinstance(item.get("id"), int) and not isinstance(item["id"], bool):
        return item["id"]
    return json.dumps(item, sort_keys=True)


# The media type ghapi's GhApi sends with every request.
GITHUB_ACCEPT = "application/vnd.github.v3+json"


def split_repository(repository: str) -> tuple[str, str]:
    # GitHub answers with names as their owners spelled them; the grammar is
    # the loop's own, in whatever case.
    owner, _, name = repository.partition("/")
    if not (isinstance(repository, str) and REPOSITORY.matches(repository.lower())):
        raise ValueError(f"repository must be 'owner/name', got {repository!r}")
    return owner, name


def path_segment(value: str) -> str:
    """Quote a branch or ref for a URL path; GitHub keeps '/' inside branch names literal."""
    return quote(value, safe="/")


def parse_link_header(link: str | None) -> dict[str, str]:
    return {rel: url for url, rel in _LINK_ENTRY.findall(link or "")}


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


class GitHubClient:
    """Reads one repository's state through ghapi, completely or not at all."""

    def __init__(
        self,
        repository: str,
        *,
        host: str = DEFAULT_API_URL,
        token: str | None = None,
        cache_dir: Path | None = None,
        use_cache: bool = True,
        timeout: float = 30.0,
        max_attempts: int = 4,
        backoff_seconds: float = 1.0,
        max_wait_seconds: float = 60.0,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.time,
        environ: Mapping[str, str] | None = None,
        gh_path: str | None = None,
        deadline_seconds: float = policy.COLLECTION_DEADLINE_SECONDS,
        max_response_bytes: int = policy.MAX_GITHUB_RESPONSE_BYTES,
        monotonic: Callable[[], float] = time.monotonic,
        network: Network | None = None,
    ):
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self.owner, self.name = split_repository(repository)
        self.host = host.rstrip("/")
        self._origin = urlsplit(self.host)
        if self._origin.scheme not in ("http", "https") or not self._origin.netloc:
            raise ValueError(f"host must be an http(s) base URL, got {host!r}")
        secret = resolve_token(token, api_base_url=self.host, environ=environ, gh_path=gh_path)
        # Every shape the token could come back in (raw, URL-encoded, base64, JSON-escaped).
        self._echo_forms = sorted(secret_forms(secret))
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff_seconds = backoff_seconds
        self.max_wait_seconds = max_wait_seconds
        self._sleep = sleep
        self._clock = clock
        # One deadline for everything this client does: reads, retries and sleeps (transport.py).
        self._monotonic = monotonic
        self._deadline = monotonic() + deadline_seconds
        self._cache = EtagCache(cache_dir or default_cache_dir(environ), token_identity(secret)) if use_cache else None
        # The transport GhApi would build, without GhApi: no environment
        # variable of ghapi's (GITHUB_TOKEN, GITHUB_JWT_TOKEN, GHAPI_DEBUG) is
        # ever read, and the only Authorization header is the one set here.
        # One persistent client: connection reuse, no redirects (a redirect is
        # an answer we did not ask for), and no environment proxies for
        # loopback, where an inherited HTTP(S)_PROXY would see test traffic.
        # retries=0: our retry loop is the only one, with an injectable sleep.
        self.transport = SyncTransport(
            timeout=timeout,
            client=BoundedClient(
                remaining=self._remaining,
                read_timeout=timeout,
                max_bytes=max_response_bytes,
                follow_redirects=False,
                **route_options(network, self.host),
            ),
            base_headers={"Accept": GITHUB_ACCEPT, "Authorization": f"token {secret}"},
            follow_redirects=False,
            retries=0,
        )
        self._stats = dict.fromkeys(
            (
                "requests",
                "rest_requests",
                "rest_not_modified",
                "rest_points",
                "graphql_requests",
                "graphql_points",
                "retries",
            ),
            0,
        )

    # -- public surface -------------------------------------------------

    @property
    def repository(self) -> str:
        return f"{self.owner}/{self.name}"

    @property
    def stats(self) -> dict[str, int]:
        """Requests made, 304s, and rate-limit points spent since construction or ``reset_stats``.

        ``rest_points`` counts every REST answer other than 304 (GitHub does not
        charge an authorized conditional request that returns 304); this is an
        upper bound, since GitHub may not charge some errors either.
        ``graphql_points`` sums ``rateLimit { cost }`` of every GraphQL answer.
        """
        return dict(self._stats)

    def reset_stats(self) -> None:
        for key in self._stats:
            self._stats[key] = 0

    def close(self) -> None:
        self.transport.close()

    def get(self, path: str, query: Mapping[str, Any] | None = None, *, tolerated: tuple[int, ...] = ()) -> Reply:
        """GET one resource. A status in ``tolerated`` returns ``Reply(status, None, None)``."""
        url = self._url(path, query)
        reply = self._fetch(url)
        if reply.status in tolerated:
            return reply
        self._require_success(reply.status, f"GET {path}")
        return reply

    def get_all(
        self,
        path: str,
        query: Mapping[str, Any] | None = None,
        *,
        items_key: str | None = None,
        known_count: int | None = None,
    ) -> list[Any]:
        """GET every page of a list; ``items_key`` names the list inside an object page.

        ``known_count`` is the list's length as another answer read earlier in
        the same observation states it (the pull request's ``comments`` and
        ``review_comments``, GraphQL's ``totalCount`` of its ``reviews`` and
        ``reactions``): a full last page whose items bring the total to
        exactly that count cannot hide a next page, so it is revalidated
        conditionally instead of fetched again (_may_hide_a_next_page).

        Pages are followed through ``Link: rel="next"`` only. When a page object
        carries ``total_count`` the collected length must equal it.

        GitHub pages these lists by offset (``page=N``), so an item deleted
        from an earlier page while a later one is being requested shifts the
        next item into the page already read: one pass can silently miss an
        item that existed all along (a claim, a finding). A list that spans
        more than one page is therefore read again until two consecutive
        passes return the same item ids: a deletion during a pass removes an
        item that pass saw, so the next pass differs from it, and two equal
        passes mean the first missed nothing. A single page is one answer and
        needs no second read. See references/github-observations.md,
        "Pagination, faults and retries".
        """
        previous: list[Any] | None = None
        for _ in range(MAX_LIST_PASSES):
            items, pages = self._read_every_page(path, query, items_key, known_count)
            identities = [_item_identity(item) for item in items]
            if pages == 1 or identities == previous:
                return items
            previous = identities
        raise GitHubObservationError(
            "github-incomplete-pagination",
            f"{path}: the list changed between each of {MAX_LIST_PASSES} consecutive complete reads",
        )

    def _read_every_page(
        self, path: str, query: Mapping[str, Any] | None, items_key: str | None, known_count: int | None = None
    ) -> tuple[list[Any], int]:
        """One pass over every page: (items, pages read)."""
        url: str | None = self._url(path, {**(query or {}), "per_page": PER_PAGE})
        items: list[Any] = []
        seen: set[str] = set()
        total_count: Any = None
        while url is not None:
            if url in seen or len(seen) >= MAX_PAGES:
                raise GitHubObservationError(
                    "github-incomplete-pagination", f"{path}: pagination repeats a page or exceeds {MAX_PAGES} pages"
                )
            continuation = bool(seen)
            seen.add(url)
            reply = self._fetch(url, revalidate=partial(self._may_revalidate, items_key, len(items), known_count))
            if continuation and reply.status == 404:
                raise GitHubObservationError(
                    "github-incomplete-pagination", f"{path}: page {len(seen)} linked as next is missing (HTTP 404)"
                )
            self._require_success(reply.status, f"GET {path}")
            page_items, total_count = self._page_items(reply.body, items_key, path)
            items.extend(page_items)
            url = self._next_url(reply.link, path)
        if total_count is not None and total_count != len(items):
            raise GitHubObservationError(
                "github-incomplete-pagination",
                f"{path}: collected {len(items)} items but the pages report total_count {total_count}",
            )
        return items, len(seen)

    def graphql(self, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """Run one GraphQL query and return ``data``.

        Every query must select ``rateLimit { cost }``: its cost is how the
        stats account for GraphQL points, so an answer without it is rejected.
        """
        url = self._graphql_url()
        where = "POST /graphql"
        response = self._exchange("POST", url, {}, {"query": query, "variables": dict(variables)}, rest=False)
        self._require_success(response.status_code, where)
        body = self._parse(response, where)
        if not isinstance(body, dict):
            raise GitHubObservationError(
                "github-unexpected-shape", f"{where}: answer is a {type(body).__name__}, not an object"
            )
        if "errors" in body:
            if "RATE_LIMITED" in self._graphql_error_types(body["errors"]):
                # GraphQL reports an exhausted window in a 200 answer, not in the status.
                raise GitHubObservationError(
                    "github-rate-limited", f"{where}: GraphQL rate limit exhausted (error type RATE_LIMITED)"
                )
            raise GitHubObservationError(
                "github-graphql-errors",
                f"{where}: answer carries errors ({self._graphql_error_summary(body['errors'])})",
            )
        data = body.get("data")
        if not isinstance(data, dict):
            raise GitHubObservationError("github-unexpected-shape", f"{where}: answer has no data object")
        rate_limit = data.get("rateLimit")
        cost = rate_limit.get("cost") if isinstance(rate_limit, dict) else None
        if not isinstance(cost, int) or isinstance(cost, bool) or cost < 0:
            raise GitHubObservationError("github-unexpected-shape", f"{where}: answer has no data.rateLimit.cost")
        self._stats["graphql_points"] += cost
        return data

    # -- writes ---------------------------------------------------------

    def write(self, method: str, path: str, body: Mapping[str, Any]) -> Any:
        """One write (``POST``/``PATCH``), sent once and never retried; returns the parsed answer.

        A write is not idempotent, so the retry loop of the reads does not
        apply: a write whose connection never opened is ``github-write-failed``;
        a definite 4xx answer (not a rate limit) ``github-write-refused``;
        anything else (a timeout or dropped connection after sending, a 5xx, a
        rate limit, an unreadable answer) ``github-write-uncertain``. After an
        uncertain outcome the caller looks for the write's evidence on GitHub
        before it may write again (references/github-observations.md).
        """
        if method not in ("POST", "PATCH"):
            raise ValueError(f"not a write method: {method}")
        where = f"{method} {path}"
        response = self._send_once(method, self._url(path, None), dict(body), where, rest=True)
        self._require_write_accepted(response, where)
        try:
            return self._parse(response, where)
        except GitHubObservationError as error:
            message = f"{where}: HTTP {response.status_code} with an unreadable answer ({error.code})"
            raise GitHubObservationError("github-write-uncertain", message) from error

    def graphql_mutation(self, mutation: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """One GraphQL mutation, sent once and never retried; returns ``data``.

        Outcomes as for ``write``; an answer whose every error is of type
        ``FORBIDDEN`` (the token may not make it: GitHub changed nothing) is
        ``github-write-refused``; any other answer carrying ``errors`` is
        uncertain (GitHub may apply part of a mutation), so the caller looks
        for evidence.
        """
        where = "POST /graphql (mutation)"
        payload = {"query": mutation, "variables": dict(variables)}
        response = self._send_once("POST", self._graphql_url(), payload, where, rest=False)
        self._require_write_accepted(response, where)
        try:
            body = self._parse(response, where)
        except GitHubObservationError as error:
            message = f"{where}: an unreadable answer ({error.code})"
            raise GitHubObservationError("github-write-uncertain", message) from error
        if not isinstance(body, dict) or "errors" in body or not isinstance(body.get("data"), dict):
            has_errors = isinstance(body, dict) and "errors" in body
            summary = self._graphql_error_summary(body["errors"]) if has_errors else "no data"
            if has_errors and self._graphql_error_types(body["errors"], every=True) == {"FORBIDDEN"}:
                # Every error is a refusal of the token's permissions: GitHub changed nothing.
                raise GitHubObservationError("github-write-refused", f"{where}: the answer carries {summary}")
            raise GitHubObservationError("github-write-uncertain", f"{where}: the answer carries {summary}")
        return cast(dict[str, Any], body["data"])

    def _send_once(self, method: str, url: str, body: dict[str, Any], where: str, *, rest: bool) -> httpx2.Response:
        self._stats["requests"] += 1
        self._stats["rest_requests" if rest else "graphql_requests"] += 1

        def send() -> httpx2.Response:
            return cast(httpx2.Response, self.transport.request(method, url, headers={}, json=body, raw=True))

        try:
            response = call_before(self._remaining(), send, where)
        except httpx2.HTTPStatusError as error:
            response = error.response
        except (httpx2.ConnectError, httpx2.ConnectTimeout, httpx2.ProxyError) as error:
            message = f"{where}: {type(error).__name__}; nothing was sent"
            raise GitHubObservationError("github-write-failed", message) from error
        except (httpx2.TransportError, GitHubObservationError) as error:
            message = f"{where}: {type(error).__name__} after sending began; the write may or may not have happened"
            raise GitHubObservationError("github-write-uncertain", message) from error
        self._check_no_echo(response, where)
        return response

    def _require_write_accepted(self, response: httpx2.Response, where: str) -> None:
        status = response.status_code
        if self._is_rate_limited(response) or status >= 500:
            message = f"{where}: HTTP {status}; the write may or may not have happened"
            raise GitHubObservationError("github-write-uncertain", message)
        if not 200 <= status < 300:
            raise GitHubObservationError("github-write-refused", f"{where}: HTTP {status}")

    # -- URLs -----------------------------------------------------------

    def _url(self, path: str, query: Mapping[str, Any] | None) -> str:
        if not path.startswith("/"):
            raise ValueError(f"path must start with '/', got {path!r}")
        # Sorted query: one URL per request, so one cache entry per request.
        encoded = urlencode(sorted((key, str(value)) for key, value in (query or {}).items()))
        return f"{self.host}{path}" + (f"?{encoded}" if encoded else "")

    def _graphql_url(self) -> str:
        # GitHub Enterprise Server serves REST at /api/v3 and GraphQL at /api/graphql.
        if self.host.endswith("/api/v3"):
            return self.host[: -len("/v3")] + "/graphql"
        return f"{self.host}/graphql"

    def _next_url(self, link: str | None, path: str) -> str | None:
        next_url = parse_link_header(link).get("next")
        if next_url is None:
            return None
        target = urlsplit(next_url)
        same_origin = (target.scheme, target.netloc) == (self._origin.scheme, self._origin.netloc)
        if not same_origin or not target.path.startswith(self._origin.path):
            # Following it would send our token to another host.
            raise GitHubObservationError(
                "github-incomplete-pagination", f"{path}: the next-page link leaves the API host"
            )
        return next_url

    @staticmethod
    def _page_items(body: Any, items_key: str | None, path: str) -> tuple[list[Any], Any]:
        if items_key is None:
            if not isinstance(body, list):
                raise GitHubObservationError(
                    "github-unexpected-shape", f"{path}: a page is a {type(body).__name__}, not a list"
                )
            return body, None
        if not isinstance(body, dict) or not isinstance(body.get(items_key), list):
            raise GitHubObservationError("github-unexpected-shape", f"{path}: a page has no list {items_key!r}")
        total = body.get("total_count")
        if not isinstance(total, int) or isinstance(total, bool):
            raise GitHubObservationError("github-unexpected-shape", f"{path}: a page has no integer total_count")
        return body[items_key], total

    # -- one request, with cache and retries ---------------------------

    @classmethod
    def _may_revalidate(
        cls, items_key: str | None, items_before: int, known_count: int | None, cached: CachedPage
    ) -> bool:
        return not cls._may_hide_a_next_page(cached, items_key, items_before, known_count)

    @staticmethod
    def _may_hide_a_next_page(
        cached: CachedPage, items_key: str | None, items_before: int = 0, known_count: int | None = None
    ) -> bool:
        """A full last page of a plain list must be fetched again, not revalidated, unless a count proves it last.

        GitHub's ETag covers the body, not the Link header: when a list of
        exactly 100 items gains a 101st, page 1's body and ETag stay the same
        and a 304 would hide the new next page. Object pages carry
        total_count in the body, so growth changes their ETag. A plain list
        whose length another answer of the same observation states
        (``known_count``) is proven complete when the items before this page
        and the cached page's add up to exactly that count: a grown list has a
        larger count, and the page is then fetched again.
        """
        if items_key is not None or "next" in parse_link_header(cached.link):
            return False
        try:
            items = json.loads(cached.body)
        except ValueError:
            return True
        if not isinstance(items, list):
            return True
        if len(items) < PER_PAGE:
            return False
        return known_count is None or items_before + len(items) != known_count

    def _fetch(self, url: str, revalidate: Callable[[CachedPage], bool] | None = None) -> Reply:
        cached = self._cache.load(url) if self._cache else None
        if cached is not None and revalidate is not None and not revalidate(cached):
            cached = None
        headers = {"If-None-Match": cached.etag} if cached else {}
        response = self._exchange("GET", url, headers, None, rest=True)
        status = response.status_code
        where = f"GET {urlsplit(url).path}"
        if status == 304:
            if cached is None:
                raise GitHubObservationError(
                    "github-unexpected-status", f"{where}: HTTP 304 to a request that was not conditional"
                )
            self._stats["rest_not_modified"] += 1
            return Reply(304, parse_json_body(cached.body, "application/json", where), cached.link)
        if not 200 <= status < 300:
            return Reply(status, None, None)
        link = response.headers.get("link")
        body = self._parse(response, where)
        etag = response.headers.get("etag")
        if self._cache and etag:
            self._cache.store(url, etag, link, response.content)
        return Reply(status, body, link)

    def _parse(self, response: httpx2.Response, where: str) -> Any:
        body = parse_json_body(response.content, response.headers.get("content-type", ""), where)
        # JSON may spell the token with \u escapes the byte check cannot see; the parsed text can.
        self._refuse_echo(json.dumps(body, ensure_ascii=False), where)
        return body

    def _refuse_echo(self, text: str, where: str) -> None:
        """A server or proxy that repeats our credential is not answered, retried or quoted."""
        if any(form in text for form in self._echo_forms):
            raise GitHubObservationError(
                "github-credential-echoed",
                f"{where}: the answer repeats the credential it was sent; nothing in it is used",
            )

    def _check_no_echo(self, response: httpx2.Response, where: str) -> None:
        headers = "\n".join(
            f"{name.decode('latin-1')}: {value.decode('latin-1')}" for name, value in response.headers.raw
        )
        self._refuse_echo(headers + "\n" + response.content.decode("latin-1"), where)

    def _exchange(
        self, method: str, url: str, headers: dict[str, str], json_body: Any, *, rest: bool
    ) -> httpx2.Response:
        where = f"{method} {urlsplit(url).path}"

        def send() -> httpx2.Response:
            # The sync transport answers directly; its annotations are the async base's.
            return cast(httpx2.Response, self.transport.request(method, url, headers=headers, json=json_body, raw=True))

        for attempt in range(1, self.max_attempts + 1):
            self._stats["requests"] += 1
            self._stats["rest_requests" if rest else "graphql_requests"] += 1
            cause: Exception | None = None
            try:
                response: httpx2.Response | None = call_before(self._remaining(), send, where)
            except httpx2.HTTPStatusError as error:
                response = error.response  # ghapi raises every non-2xx; we classify it ourselves
            except httpx2.TimeoutException as error:
                response, cause = None, error
                failure = GitHubObservationError(
                    "github-timeout",
                    f"{where}: no answer within {self.timeout:g} s"
                    f" ({type(error).__name__}, attempt {attempt} of {self.max_attempts})",
                )
                wait = self._backoff(attempt)
            except httpx2.TransportError as error:
                response, cause = None, error
                failure = GitHubObservationError(
                    "github-connection-failed",
                    f"{where}: {type(error).__name__} (attempt {attempt} of {self.max_attempts})",
                )
                wait = self._backoff(attempt)
            if response is not None:
                self._check_no_echo(response, where)  # before anything of it is stored, retried or reported
                if rest and response.status_code != 304:
                    self._stats["rest_points"] += 1
                status = response.status_code
                if status >= 500:
                    failure = GitHubObservationError(
                        "github-server-error", f"{where}: HTTP {status} (attempt {attempt} of {self.max_attempts})"
                    )
                    wait = self._backoff(attempt)
                elif self._is_rate_limited(response):
                    wait = self._rate_limit_wait(response)
                    failure = GitHubObservationError(
                        "github-rate-limited",
                        f"{where}: HTTP {status} rate limit, retry possible in {wait:g} s"
                        f" (attempt {attempt} of {self.max_attempts}, wait cap {self.max_wait_seconds:g} s)",
                    )
                else:
                    return response
            if attempt == self.max_attempts or wait > self.max_wait_seconds:
                raise failure from cause
            if wait >= self._remaining():
                # Sleeping would end past the deadline: fail now, with the reason for the wait.
                raise deadline_error(
                    where, f"a retry after {wait:g} s would start past the deadline ({failure.code})"
                ) from cause
            self._stats["retries"] += 1
            self._sleep(wait)
        raise AssertionError("unreachable: the loop returns or raises")

    def _remaining(self) -> float:
        return self._deadline - self._monotonic()

    def _backoff(self, attempt: int) -> float:
        return min(self.backoff_seconds * 2 ** (attempt - 1), self.max_wait_seconds)

    @staticmethod
    def _is_rate_limited(response: httpx2.Response) -> bool:
        if response.status_code == 429:
            return True
        if response.status_code != 403:
            return False
        headers = response.headers
        # Primary limit: remaining 0. Secondary limit: retry-after, or only the message says so.
        return (
            headers.get("x-ratelimit-remaining") == "0"
            or "retry-after" in headers
            or b"rate limit" in response.content.lower()
        )

    def _rate_limit_wait(self, response: httpx2.Response) -> float:
        headers = response.headers
        retry_after = headers.get("retry-after", "").strip()
        if retry_after.isdigit():
            return float(retry_after)
        reset = headers.get("x-ratelimit-reset", "").strip()
        if headers.get("x-ratelimit-remaining") == "0" and reset.isdigit():
            return float(max(0, math.ceil(int(reset) - self._clock())))
        # A secondary limit without either header: GitHub asks for at least a minute.
        return 60.0

    @staticmethod
    def _require_success(status: int, where: str) -> None:
        if 200 <= status < 300 or status == 304:
            return
        code = {401: "github-unauthorized", 403: "github-forbidden", 404: "github-not-found"}.get(
            status, "github-unexpected-status"
        )
        raise GitHubObservationError(code, f"{where}: HTTP {status}")

    @staticmethod
    def _graphql_error_types(errors: Any, *, every: bool = False) -> set[str]:
        """The well-formed ``type`` of the errors; with ``every``, empty unless each error has one."""
        if not isinstance(errors, list):
            return set()
        types = [
            e["type"] if isinstance(e, dict) and isinstance(e.get("type"), str) else None for e in errors
        ]
        if every and (not types or any(t is None or not _GRAPHQL_ERROR_TYPE.fullmatch(t) for t in types)):
            return set()
        return {t for t in types if t is not None and _GRAPHQL_ERROR_TYPE.fullmatch(t)}

    @classmethod
    def _graphql_error_summary(cls, errors: Any) -> str:
        if not isinstance(errors, list):
            return "errors is not a list"
        types = sorted(cls._graphql_error_types(errors))
        return f"{len(errors)} error(s)" + (f", types {', '.join(types)}" if types else "")
