"""A fail-closed GitHub reader over ghapi's operations (observe/github/channel.py).

Every REST read is one of ghapi's generated GET operations
(``READ_OPERATIONS``: ``pulls.get``, ``issues.list_comments`` ...), called
through a GhApi that holds those operations and no others, over ghapi's own
transport within the channel's deadline and size cap. This wrapper adds what
the observer needs and ghapi leaves out (references/github-observations.md):

- every list is read to its last page by following ``Link: rel="next"``
  (ghapi's own pager stops at the first empty page and ignores Link), and
  only to the API host itself;
- a 304 is an answer, not an error: with an ETag cache it returns the cached
  body (ghapi raises it as an error);
- 5xx, timeouts, connection failures and rate limits are retried a bounded
  number of times with an injectable ``sleep``; ghapi retries only connection
  errors, with a sleep we cannot replace, so its own retries are switched off;
- every body is parsed as strict JSON; anything else raises
  ``GitHubObservationError``.

It only reads: GitHub writes are the hands' (act/edge/ghops.py), on the same channel.
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import httpx2

from evaluator import policy
from evaluator.formats import REPOSITORY
from observe.github.cache import CachedPage, EtagCache, default_cache_dir
from observe.github.channel import Channel, graphql_error_types, graphql_summary, parse_json_body
from observe.github.errors import GitHubObservationError
from observe.github.token import resolve_token, token_identity
from observe.github.transport import deadline_error
from observe.network import Network

DEFAULT_API_URL = "https://api.github.com"
PER_PAGE = 100
# A PR with more than 100 pages (10,000 items) of anything is not something
# this loop should act on; the cap also stops a server that links in circles.
MAX_PAGES = 100
# A list of several pages is read until two consecutive passes agree (get_all).
MAX_LIST_PASSES = 4
_LINK_ENTRY = re.compile(r'<([^<>]*)>\s*;\s*rel="([^"]*)"')
# The GET operations of ghapi's table the observer (and the hands' evidence) read; nothing else is built.
READ_OPERATIONS = (
    "users.get_authenticated",
    "pulls.get",
    "pulls.list",
    "pulls.list_reviews",
    "pulls.list_review_comments",
    "issues.list_comments",
    "reactions.list_for_issue",
    "reactions.list_for_issue_comment",
    "git.get_ref",
    "repos.get_branch",
    "repos.get_branch_protection",
    "repos.get_branch_rules",
)


@dataclass(frozen=True)
class Reply:
    """One answered request: ``body`` is parsed JSON, or None for a tolerated error status."""

    status: int
    body: Any
    link: str | None
    url: str | None = None  # the URL ghapi requested


def _item_identity(item: Any) -> Any:
    """What tells list items apart: the id GitHub gives every listed object, else the item itself."""
    if isinstance(item, dict) and isinstance(item.get("id"), int) and not isinstance(item["id"], bool):
        return item["id"]
    return json.dumps(item, sort_keys=True)


def split_repository(repository: str) -> tuple[str, str]:
    # GitHub answers with names as their owners spelled them; the grammar is
    # the loop's own, in whatever case.
    owner, _, name = repository.partition("/")
    if not (isinstance(repository, str) and REPOSITORY.matches(repository.lower())):
        raise ValueError(f"repository must be 'owner/name', got {repository!r}")
    return owner, name


def parse_link_header(link: str | None) -> dict[str, str]:
    return {rel: url for url, rel in _LINK_ENTRY.findall(link or "")}


def is_rate_limited(response: httpx2.Response) -> bool:
    if response.status_code == 429:
        return True
    if response.status_code != 403:
        return False
    headers = response.headers
    # Primary limit: remaining 0. Secondary limit: retry-after, or only the message says so.
    primary = headers.get("x-ratelimit-remaining") == "0"
    return primary or "retry-after" in headers or b"rate limit" in response.content.lower()


def _where(operation: Any, params: Mapping[str, Any]) -> str:
    """``GET /repos/o/r/pulls/7`` for messages: the operation's route with the values we chose."""
    values = {**operation.defaults, **params}
    path = re.sub(r"\{(\w+)\}", lambda m: str(values.get(m.group(1), m.group(0))), operation.path)
    return f"{operation.verb} {path}"


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
        secret = resolve_token(token, api_base_url=host.rstrip("/"), environ=environ, gh_path=gh_path)
        # One deadline for everything this client does: reads, retries, sleeps, and the hands' writes.
        self.channel = Channel(
            host,
            secret,
            network=network,
            timeout=timeout,
            deadline_seconds=deadline_seconds,
            max_response_bytes=max_response_bytes,
            monotonic=monotonic,
        )
        self.host = self.channel.host
        self.api = self.channel.api(READ_OPERATIONS, self.owner, self.name)
        self.timeout = timeout
        self.max_attempts = max_attempts
        self.backoff_seconds = backoff_seconds
        self.max_wait_seconds = max_wait_seconds
        self._sleep = sleep
        self._clock = clock
        self._cache = EtagCache(cache_dir or default_cache_dir(environ), token_identity(secret)) if use_cache else None
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
        self.channel.close()

    def get(self, operation: str, *, tolerated: tuple[int, ...] = (), **params: Any) -> Reply:
        """Call the GET operation ``operation`` (``"pulls.get"``) with ``params``.

        ``owner`` and ``repo`` default to the client's repository. A status in
        ``tolerated`` returns ``Reply(status, None, None)``.
        """
        op = self.api.operation(operation)
        where = _where(op, params)
        reply = self._fetch(self._operation_key(operation, params), partial(op, **params, raw_=True), where)
        if reply.status in tolerated:
            return reply
        self._require_success(reply.status, where)
        return reply

    def get_all(
        self,
        operation: str,
        *,
        items_key: str | None = None,
        known_count: int | None = None,
        **params: Any,
    ) -> list[Any]:
        """Every page of the list ``operation`` returns; ``items_key`` names the list inside an object page.

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
        where = _where(self.api.operation(operation), params)
        for _ in range(MAX_LIST_PASSES):
            items, pages = self._read_every_page(operation, {**params, "per_page": PER_PAGE}, items_key, known_count)
            identities = [_item_identity(item) for item in items]
            if pages == 1 or identities == previous:
                return items
            previous = identities
        raise GitHubObservationError(
            "github-incomplete-pagination",
            f"{where}: the list changed between each of {MAX_LIST_PASSES} consecutive complete reads",
        )

    def _read_every_page(
        self, operation: str, params: dict[str, Any], items_key: str | None, known_count: int | None = None
    ) -> tuple[list[Any], int]:
        """One pass over every page: (items, pages read). Page 1 is the operation; the rest GitHub's next links."""
        op = self.api.operation(operation)
        where = _where(op, params)
        items: list[Any] = []
        seen: set[str | None] = set()
        total_count: Any = None
        next_url: str | None = None
        while True:
            revalidate = partial(self._may_revalidate, items_key, len(items), known_count)
            if next_url is None:
                first = partial(op, **params, raw_=True)
                reply = self._fetch(self._operation_key(operation, params), first, where, revalidate)
            else:
                send = partial(self._get_url, next_url)
                reply = self._fetch(next_url, send, f"{where} (page {len(seen) + 1})", revalidate)
                if reply.status == 404:
                    missing = f"{where}: page {len(seen) + 1} linked as next is missing (HTTP 404)"
                    raise GitHubObservationError("github-incomplete-pagination", missing)
            seen.add(reply.url)
            self._require_success(reply.status, where)
            page_items, total_count = self._page_items(reply.body, items_key, where)
            items.extend(page_items)
            next_url = self._next_url(reply.link, where)
            if next_url is None:
                break
            if next_url in seen or len(seen) >= MAX_PAGES:
                raise GitHubObservationError(
                    "github-incomplete-pagination", f"{where}: pagination repeats a page or exceeds {MAX_PAGES} pages"
                )
        if total_count is not None and total_count != len(items):
            raise GitHubObservationError(
                "github-incomplete-pagination",
                f"{where}: collected {len(items)} items but the pages report total_count {total_count}",
            )
        return items, len(seen)

    def graphql(self, query: str, variables: Mapping[str, Any]) -> dict[str, Any]:
        """Run one GraphQL query and return ``data``.

        Every query must select ``rateLimit { cost }``: its cost is how the
        stats account for GraphQL points, so an answer without it is rejected.
        """
        where = "POST /graphql"
        payload = {"query": query, "variables": dict(variables)}
        send = self.channel.request("POST", self.channel.graphql_url(), json=payload)
        response = self._exchange(send, where, rest=False)
        self._require_success(response.status_code, where)
        body = self.channel.parse(response, where)
        if not isinstance(body, dict):
            raise GitHubObservationError(
                "github-unexpected-shape", f"{where}: answer is a {type(body).__name__}, not an object"
            )
        if "errors" in body:
            if "RATE_LIMITED" in graphql_error_types(body["errors"]):
                # GraphQL reports an exhausted window in a 200 answer, not in the status.
                raise GitHubObservationError(
                    "github-rate-limited", f"{where}: GraphQL rate limit exhausted (error type RATE_LIMITED)"
                )
            raise GitHubObservationError(
                "github-graphql-errors", f"{where}: answer carries errors ({graphql_summary(body['errors'])})"
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

    # -- requests and cache keys -------------------------------------------

    def _operation_key(self, operation: str, params: Mapping[str, Any]) -> str:
        """The cache key of an operation call: the host, the operation and every argument (the repository included)."""
        arguments = {"owner": self.owner, "repo": self.name, **params}
        return f"{self.host} {operation} " + json.dumps(arguments, sort_keys=True, default=str)

    def _get_url(self, url: str, headers_: Mapping[str, str]) -> Any:
        return self.channel.request("GET", url, headers=headers_)()

    def _next_url(self, link: str | None, where: str) -> str | None:
        next_url = parse_link_header(link).get("next")
        if next_url is None:
            return None
        if not self.channel.same_origin(next_url):
            # Following it would send our token to another host.
            raise GitHubObservationError(
                "github-incomplete-pagination", f"{where}: the next-page link leaves the API host"
            )
        return next_url

    @staticmethod
    def _page_items(body: Any, items_key: str | None, where: str) -> tuple[list[Any], Any]:
        if items_key is None:
            if not isinstance(body, list):
                raise GitHubObservationError(
                    "github-unexpected-shape", f"{where}: a page is a {type(body).__name__}, not a list"
                )
            return body, None
        if not isinstance(body, dict) or not isinstance(body.get(items_key), list):
            raise GitHubObservationError("github-unexpected-shape", f"{where}: a page has no list {items_key!r}")
        total = body.get("total_count")
        if not isinstance(total, int) or isinstance(total, bool):
            raise GitHubObservationError("github-unexpected-shape", f"{where}: a page has no integer total_count")
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

    def _fetch(
        self,
        key: str,
        send: Callable[..., Any],
        where: str,
        revalidate: Callable[[CachedPage], bool] | None = None,
    ) -> Reply:
        """One GET, ``send(headers_=...)``: conditional when ``key`` has a cache entry still worth revalidating."""
        cached = self._cache.load(key) if self._cache else None
        if cached is not None and revalidate is not None and not revalidate(cached):
            cached = None
        headers = {"If-None-Match": cached.etag} if cached else {}
        response = self._exchange(partial(send, headers_=headers), where, rest=True)
        status, url = response.status_code, str(response.request.url)
        if status == 304:
            if cached is None:
                raise GitHubObservationError(
                    "github-unexpected-status", f"{where}: HTTP 304 to a request that was not conditional"
                )
            self._stats["rest_not_modified"] += 1
            return Reply(304, parse_json_body(cached.body, "application/json", where), cached.link, url)
        if not 200 <= status < 300:
            return Reply(status, None, None, url)
        link = response.headers.get("link")
        body = self.channel.parse(response, where)
        etag = response.headers.get("etag")
        if self._cache and etag:
            self._cache.store(key, etag, link, response.content)
        return Reply(status, body, link, url)

    def _exchange(self, send: Callable[[], Any], where: str, *, rest: bool) -> httpx2.Response:
        """``send`` once per attempt through the channel; retried on 5xx, timeouts, connection failures, rate limits."""
        for attempt in range(1, self.max_attempts + 1):
            self._stats["requests"] += 1
            self._stats["rest_requests" if rest else "graphql_requests"] += 1
            cause: Exception | None = None
            try:
                response: httpx2.Response | None = self.channel.exchange(send, where)
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
                if rest and response.status_code != 304:
                    self._stats["rest_points"] += 1
                status = response.status_code
                if status >= 500:
                    failure = GitHubObservationError(
                        "github-server-error", f"{where}: HTTP {status} (attempt {attempt} of {self.max_attempts})"
                    )
                    wait = self._backoff(attempt)
                elif is_rate_limited(response):
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
            if wait >= self.channel.remaining():
                # Sleeping would end past the deadline: fail now, with the reason for the wait.
                raise deadline_error(
                    where, f"a retry after {wait:g} s would start past the deadline ({failure.code})"
                ) from cause
            self._stats["retries"] += 1
            self._sleep(wait)
        raise AssertionError("unreachable: the loop returns or raises")

    def _backoff(self, attempt: int) -> float:
        return min(self.backoff_seconds * 2 ** (attempt - 1), self.max_wait_seconds)

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
