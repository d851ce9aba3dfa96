"""Limits on one GitHub exchange: a whole-collection deadline and a size cap on every answer.

A read timeout bounds each socket read, not a request: a server or proxy that
sends one byte every few seconds never trips it, and retries and Retry-After
waits add up on top. So a collection has ONE deadline (``policy.
COLLECTION_DEADLINE_SECONDS`` from the client's construction), and:

- each request runs in a worker thread that the caller waits for only until
  the deadline (``call_before``), so no server behaviour (a header sent a byte
  at a time, a name lookup that hangs) can hold the collection past it;
- every socket operation's timeout is the smaller of the read timeout and
  the time left, and the body is read chunk by chunk with the deadline checked
  between chunks, so an abandoned worker stops soon after too;
- the body is decoded here, not by httpx: only ``gzip`` (the one encoding we
  offer) or none is accepted, and the decoded size is counted as it is
  produced, with at most ``limit + 1`` bytes inflated per step, so a gzip bomb
  fails at the cap (``policy.MAX_GITHUB_RESPONSE_BYTES``) instead of
  inflating in memory.

References: references/github-observations.md, "Deadline and size limits".
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Callable
from typing import Any, TypeVar

import httpx2

from observe.github.errors import GitHubObservationError

T = TypeVar("T")


def deadline_error(where: str, detail: str) -> GitHubObservationError:
    return GitHubObservationError("github-deadline-exceeded", f"{where}: {detail}; the collection ran out of its time")


def call_before(remaining: float, call: Callable[[], T], where: str) -> T:
    """``call()`` in a daemon worker thread; ``github-deadline-exceeded`` unless it returns within ``remaining`` s.

    A worker still running then is abandoned: it is a daemon, its socket
    operations time out by the same deadline, and its answer is never used.
    """
    if remaining <= 0:
        raise deadline_error(where, "no time left before the request")
    outcome: dict[str, Any] = {}

    def work() -> None:
        try:
            outcome["value"] = call()
        except BaseException as error:  # handed to the caller, who raises it
            outcome["error"] = error

    worker = threading.Thread(target=work, name="github-request", daemon=True)
    worker.start()
    worker.join(remaining)
    if worker.is_alive():
        raise deadline_error(where, "no complete answer before the deadline")
    if "error" in outcome:
        raise outcome["error"]
    return outcome["value"]


class BoundedClient(httpx2.Client):
    """An httpx2 client whose every answer is read within the deadline and the size cap.

    ``remaining()`` gives the seconds left in the collection; ``read_timeout``
    is the per-operation timeout when more time than that is left.
    """

    def __init__(self, *, remaining: Callable[[], float], read_timeout: float, max_bytes: int, **options: Any):
        # Offer gzip only: the body is decoded here, with a size count, and nothing else is accepted.
        super().__init__(headers={"Accept-Encoding": "gzip"}, timeout=read_timeout, **options)
        self._remaining, self._read_timeout, self._max_bytes = remaining, read_timeout, max_bytes

    def send(self, request: httpx2.Request, *, stream: bool = False, **options: Any) -> httpx2.Response:
        where = f"{request.method} {request.url.path}"
        left = self._remaining()
        if left <= 0:
            raise deadline_error(where, "no time left before the request")
        request.extensions = {**request.extensions, "timeout": httpx2.Timeout(min(self._read_timeout, left)).as_dict()}
        response = super().send(request, stream=True, **options)
        try:
            body = read_body(response, self._max_bytes, lambda: self._remaining() <= 0, where)
        finally:
            response.close()
        # The decoded body, as if it had come unencoded; the status and every other header stay.
        skip = {"content-encoding", "content-length", "transfer-encoding"}
        headers = [(name, value) for name, value in response.headers.multi_items() if name.lower() not in skip]
        return httpx2.Response(response.status_code, headers=headers, content=body, request=request)


def read_body(response: httpx2.Response, limit: int, past_deadline: Callable[[], bool], where: str) -> bytes:
    """The decoded body, or ``github-response-too-large`` / ``github-deadline-exceeded`` / ``github-malformed-json``."""
    encoding = response.headers.get("content-encoding", "").strip().lower()
    if encoding not in ("", "identity", "gzip"):
        # Server text: its length, never its value.
        raise GitHubObservationError(
            "github-malformed-json", f"{where}: a content encoding we did not offer ({len(encoding)} characters)"
        )
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS) if encoding == "gzip" else None
    parts: list[bytes] = []
    received = decoded = 0
    for raw in response.iter_raw():
        if past_deadline():
            raise deadline_error(where, f"the answer was still arriving after {received} bytes")
        received += len(raw)
        pending = raw
        while pending:
            if inflater is None:
                piece, pending = pending, b""
            else:
                # At most one byte past the cap is ever inflated: the bomb never unfolds.
                try:
                    piece, pending = inflater.decompress(pending, limit - decoded + 1), inflater.unconsumed_tail
                except zlib.error:
                    raise GitHubObservationError(
                        "github-malformed-json", f"{where}: the gzip body is not gzip data"
                    ) from None
            decoded += len(piece)
            if decoded > limit or received > limit:
                raise GitHubObservationError(
                    "github-response-too-large", f"{where}: the answer exceeds {limit} bytes (decoded)"
                )
            parts.append(piece)
    if inflater is not None and received and (not inflater.eof or inflater.unused_data):
        raise GitHubObservationError(
            "github-malformed-json", f"{where}: the gzip body is truncated or followed by other data"
        )
    return b"".join(parts)
