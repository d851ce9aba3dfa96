"""The simulated GitHub API as a WSGI application, and a loopback server for it.

``GitHubApp(world)`` serves REST (simulator/rest.py) and ``POST /graphql``
(simulator/graphql_api.py) at the root path, so ``http://127.0.0.1:PORT`` is
an API base URL; an HTTPS front can mount the same app for api.github.com.
Around every route it behaves like GitHub where clients depend on it:

- ``Authorization: token <t>`` or ``Bearer <t>`` must name a known token, else 401;
- lists page with ``per_page`` (default 30, max 100) and ``page``, answer
  ``[]`` past the end, and link pages with ``Link: rel="next"/"last"/...``;
- every GET answer carries a weak ETag over its body; a matching
  ``If-None-Match`` gets a bodiless 304 that costs no rate-limit point;
- each token has a primary window per resource (``core`` for REST, ``graphql``)
  of 5000 points an hour of simulated time; every REST answer but a 304 costs
  one point, a GraphQL query its computed cost (``graphql_api.query_cost``),
  an exhausted window answers 403 with ``x-ratelimit-remaining: 0`` (GraphQL:
  200, ``data: null`` and an error of type ``RATE_LIMITED``);
  ``World.rate_spent`` keeps each token's points across window resets
  (``rate_spent_on`` each repository's);
- each token has GitHub's secondary limits (``World.secondary_limits``:
  content-generating requests per minute and per hour, points per minute),
  counted on the simulated clock: a request over one is refused with 403,
  ``retry-after`` (the seconds until it would fit, or the whole window) and GitHub's message, and
  is kept in ``World.secondary_refusals``; ``secondary_rate_limit`` also makes
  the next matching requests hit one (403/429, ``retry-after``);
- ``Link`` URLs name the origin the request came to (``https://api.github.com``
  behind the HTTPS front); a 201 that GitHub answers with ``Location`` (a new
  pull request, issue comment, review reply, status) carries the new
  resource's API URL;
- a token whose ``World.add_token(..., permissions=...)`` lacks write access
  for a write (or read access for a read of a private repository) gets
  GitHub's refusal: REST 403 "Resource not accessible by integration"
  (``ghs_`` tokens) or "... by personal access token" with
  ``X-Accepted-GitHub-Permissions`` naming what would do (``pull_requests=write``;
  alternatives separated by ``; ``), GraphQL an error of type ``FORBIDDEN``
  and a null mutation payload; a classic token (``scopes=[...]``) gets
  ``X-OAuth-Scopes`` on every answer and, lacking ``repo`` (``public_repo``
  for a public repository's writes), 404 with ``X-Accepted-OAuth-Scopes``;
- queued faults (``World.fail/stall/truncate/corrupt/graphql_errors`` and the
  hostile ``drip/gzip_bomb/echo/after``) are consumed in order by the first
  request they match; a stalled or dripping answer ends when its World is
  retired (``World.close``) and then leaves no trace.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import threading
from typing import Any
from urllib.parse import urlencode

from werkzeug.serving import make_server
from werkzeug.wrappers import Request, Response

from simulator import SERVE_POLL_SECONDS, graphql_api
from simulator.rest import Rest
from simulator.world import ApiError, World, not_accessible

logging.getLogger("werkzeug").setLevel(logging.ERROR)  # keep test output to test results

DOCUMENTATION = "https://docs.github.com/rest"
SECONDARY_LIMIT_DOCUMENTATION = (
    "https://docs.github.com/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits"
)
SECONDARY_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. If you reach out "
    "to GitHub Support for help, please include the request ID 0000:0000:0000000:0000000:00000000."
)
# The created resource's API URL comes back as ``Location`` on these 201 answers (GitHub's published
# description lists the header for exactly these operations of the ones served here).
LOCATED = {
    "POST /repos/{owner}/{repo}/pulls",
    "POST /repos/{owner}/{repo}/issues/{issue_number}/comments",
    "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies",
    "POST /repos/{owner}/{repo}/statuses/{sha}",
}
# The fine-grained permission each served write needs (any one of them, at "write").
WRITE_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "POST /repos/{owner}/{repo}/pulls": ("pull_requests",),
    "PATCH /repos/{owner}/{repo}/pulls/{pull_number}": ("pull_requests",),
    "PUT /repos/{owner}/{repo}/pulls/{pull_number}/merge": ("contents",),
    "POST /repos/{owner}/{repo}/pulls/{pull_number}/reviews": ("pull_requests",),
    "POST /repos/{owner}/{repo}/pulls/{pull_number}/comments/{comment_id}/replies": ("pull_requests",),
    "POST /repos/{owner}/{repo}/issues/{issue_number}/comments": ("issues", "pull_requests"),
    "PATCH /repos/{owner}/{repo}/issues/comments/{comment_id}": ("issues", "pull_requests"),
    "DELETE /repos/{owner}/{repo}/issues/comments/{comment_id}": ("issues", "pull_requests"),
    "POST /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions": ("issues", "pull_requests"),
    "POST /repos/{owner}/{repo}/issues/{issue_number}/reactions": ("issues", "pull_requests"),
    "POST /repos/{owner}/{repo}/check-runs": ("checks",),
    "POST /repos/{owner}/{repo}/statuses/{sha}": ("statuses",),
    "DELETE /repos/{owner}/{repo}/git/refs/{ref}": ("contents",),
    "POST /repos/{owner}/{repo}/git/refs": ("contents",),
}
# The fine-grained permission each served read of a private repository needs (any one of them, "read" or
# "write"). GitHub's permission tables: a public repository's resources need none of them.
READ_PERMISSIONS: dict[str, tuple[str, ...]] = {
    "GET /repos/{owner}/{repo}": ("metadata",),
    "GET /repos/{owner}/{repo}/pulls": ("pull_requests",),
    "GET /repos/{owner}/{repo}/pulls/{pull_number}": ("pull_requests",),
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/merge": ("pull_requests",),
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/reviews": ("pull_requests",),
    "GET /repos/{owner}/{repo}/pulls/{pull_number}/comments": ("pull_requests",),
    "GET /repos/{owner}/{repo}/issues/{issue_number}/comments": ("issues", "pull_requests"),
    "GET /repos/{owner}/{repo}/issues/comments/{comment_id}": ("issues", "pull_requests"),
    "GET /repos/{owner}/{repo}/issues/comments/{comment_id}/reactions": ("issues", "pull_requests"),
    "GET /repos/{owner}/{repo}/issues/{issue_number}/reactions": ("issues", "pull_requests"),
    "GET /repos/{owner}/{repo}/commits/{ref}/check-runs": ("checks",),
    "GET /repos/{owner}/{repo}/commits/{ref}/status": ("statuses",),
    "GET /repos/{owner}/{repo}/git/ref/{ref}": ("contents",),
    "GET /repos/{owner}/{repo}/branches/{branch}": ("contents",),
    "GET /repos/{owner}/{repo}/rules/branches/{branch}": ("metadata",),
}
# Content-generating REST methods (GitHub's secondary limits count them apart).
WRITES = frozenset({"POST", "PATCH", "PUT", "DELETE"})
# Object pages whose list is paged inside the object (with total_count beside it).
PAGED_KEYS = {
    "GET /repos/{owner}/{repo}/commits/{ref}/check-runs": "check_runs",
    "GET /repos/{owner}/{repo}/commits/{ref}/status": "statuses",
}


def may_write(world: World, token: str, permissions: tuple[str, ...]) -> bool:
    """Whether ``token`` holds write access for one of ``permissions`` (a token without a list may write all)."""
    granted = world.token_permissions.get(token)
    return not permissions or granted is None or any(granted.get(name) == "write" for name in permissions)


def may_read(world: World, token: str, permissions: tuple[str, ...]) -> bool:
    """Whether ``token`` holds read (or write) access for one of ``permissions``."""
    granted = world.token_permissions.get(token)
    return not permissions or granted is None or any(granted.get(name) in ("read", "write") for name in permissions)


def accepted_permissions(permissions: tuple[str, ...], level: str) -> str:
    """GitHub's ``X-Accepted-GitHub-Permissions`` value: each set that would do, separated by ``; ``."""
    return "; ".join(f"{name}={level}" for name in permissions)


def classic_scopes_allow(scopes: list[str], *, write: bool, private: bool) -> bool:
    """A classic token reads a private repository and writes any repository only with ``repo``
    (``public_repo`` is enough to write a public one); a public repository's reads need no scope."""
    if private:
        return "repo" in scopes
    return not write or "repo" in scopes or "public_repo" in scopes


def access_refusal(world: World, token: str, operation: str, parameters: dict[str, str]) -> ApiError | None:
    """GitHub's answer when ``token`` may not make ``operation`` on the repository it names, else None.

    Checked before the request body is read, as GitHub checks it: a refused
    write is refused whatever it would have sent (the loop's preflight relies
    on this to probe a permission with a body that can create nothing).
    """
    write = operation.partition(" ")[0] in WRITES
    if "owner" not in parameters or "repo" not in parameters:
        return None
    try:
        repository = world.repository(parameters["owner"], parameters["repo"])
    except ApiError:
        return None  # the handler answers 404 for a repository that does not exist
    scopes = world.token_scopes.get(token)
    if scopes is not None:
        if classic_scopes_allow(scopes, write=write, private=repository.private):
            return None
        # GitHub hides a repository from a token that may not see it: 404, never 403.
        needed = "repo" if repository.private else "public_repo, repo"
        return ApiError(404, "Not Found", headers={"X-Accepted-OAuth-Scopes": needed})
    if write:
        needed_permissions = WRITE_PERMISSIONS.get(operation, ())
        if may_write(world, token, needed_permissions):
            return None
        level = "write"
    else:
        needed_permissions = READ_PERMISSIONS.get(operation, ())
        if not repository.private or may_read(world, token, needed_permissions):
            return None
        level = "read"
    headers = {"X-Accepted-GitHub-Permissions": accepted_permissions(needed_permissions, level)}
    return ApiError(403, not_accessible(token), headers=headers)


def secondary_rate_limit(
    world: World, method: str, pattern: str, *, retry_after: int = 60, status: int = 403, times: int = 1
) -> None:
    """The next ``times`` matching requests hit a secondary rate limit, answered as GitHub answers it.

    403 (or 429) with ``retry-after`` and GitHub's message; the primary window
    is untouched (``x-ratelimit-remaining`` is not 0), so only the message and
    ``retry-after`` tell a client what happened.
    """
    world.fail(
        method,
        pattern,
        status,
        times=times,
        headers={"Retry-After": str(retry_after)},
        body=secondary_limit_body(status),
    )


def secondary_limit_body(status: int) -> bytes:
    """GitHub's answer body when a secondary rate limit refuses a request."""
    body = {
        "message": SECONDARY_LIMIT_MESSAGE,
        "documentation_url": SECONDARY_LIMIT_DOCUMENTATION,
        "status": str(status),
    }
    return json.dumps(body).encode()


def _repository_in(path: str) -> str | None:
    """``owner/name`` of a REST path under ``/repos/``, for the per-repository point count."""
    parts = path.split("/")
    return f"{parts[2]}/{parts[3]}" if len(parts) > 3 and parts[1] == "repos" else None


class GitHubApp:
    """WSGI callable over one World."""

    def __init__(self, world: World):
        self.world = world
        self.rest = Rest(world)
        self._idle = threading.Condition()
        self._in_flight = 0

    def use(self, world: World) -> None:
        """Serve another World from now on (a test's fresh scenario on the same port)."""
        self.world = world
        self.rest = Rest(world)

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        return self.handle(Request(environ))(environ, start_response)

    # -- one request ----------------------------------------------------

    def handle(self, request: Request) -> Response:
        with self._idle:
            self._in_flight += 1
        try:
            return self._handle(request)
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no request is being answered (a stalled one included)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout)

    def _handle(self, request: Request) -> Response:
        world = self.world  # a retired World keeps its late answers to itself
        target = request.path + (f"?{request.query_string.decode()}" if request.query_string else "")
        fault = world.take_fault(request.method, target)
        if fault is not None and fault.kind == "stall":
            world.released.wait(fault.seconds)  # a real client timeout needs real time; the answer is normal afterwards
            fault = None
        if world.released.is_set():
            return Response(status=503)  # the scenario ended meanwhile: leave no trace
        kind = self._write_kind(request)
        if kind is not None and world.writing(kind, "before"):
            return Response(status=503)  # a test stopped the client before the write: it is never applied
        with world.lock:
            response = self._respond(world, request, fault)
            world.log.append((request.method, target, response.status_code))
        if fault is not None and fault.kind == "after" and fault.action is not None:
            fault.action()  # e.g. a comment deleted between this page and the next
        if kind is not None:
            applied = self._applied(request, response)
            world.writing(kind, "applied", applied)
            response.call_on_close(lambda: world.writing(kind, "answered", applied))
        return response

    def _write_kind(self, request: Request) -> str | None:
        """The write's kind for ``World.write_hook``: its REST operation or GraphQL mutation fields; None: a read."""
        if request.path == "/graphql" and request.method == "POST":
            fields = graphql_api.mutation_fields(request.get_json(silent=True))
            return "graphql " + ",".join(fields) if fields else None
        if request.method not in WRITES:
            return None
        matched = self.rest.match(request.method, request.path)
        return matched[0] if matched is not None else f"{request.method} {request.path}"

    @staticmethod
    def _applied(request: Request, response: Response) -> bool:
        """Whether the write took effect: a success status (and, for GraphQL, an answer without errors)."""
        if response.status_code >= 300:
            return False
        if request.path != "/graphql":
            return True
        try:
            answer = json.loads(response.get_data())
        except ValueError:
            return False
        return isinstance(answer, dict) and not answer.get("errors")

    def _respond(self, world: World, request: Request, fault: Any) -> Response:
        token = self._token(request)
        user = world.token_user(token)
        if user is None or token is None:
            return self._error(401, "Bad credentials", {})
        authorization = request.headers.get("Authorization") or ""
        if fault is not None and fault.kind == "status":
            body = fault.body
            if fault.echo_authorization:  # a hostile server: clients must not repeat what it says
                body = json.dumps({"message": f"echo {authorization}"}).encode()
            headers = {
                **self._rate_headers(token, "graphql" if request.path == "/graphql" else "core"),
                **fault.headers,
            }
            return Response(body, status=fault.status, headers=headers, content_type="application/json")
        if fault is not None and fault.kind == "graphql-errors":
            payload = {
                "data": None,
                "errors": [{"type": "INTERNAL", "message": "Something went wrong while executing your query."}],
            }
            return Response(json.dumps(payload), status=200, content_type="application/json")
        if fault is not None and fault.kind == "gzip-bomb":
            return Response(
                fault.body, status=200, headers={"Content-Encoding": "gzip"}, content_type="application/json"
            )
        response = self._answer(request, token, user)
        if fault is None:
            return response
        if fault.kind == "truncate":
            data = response.get_data()
            response = Response(data[: len(data) // 2], status=200, headers=dict(response.headers))
            response.headers.pop("Content-Length", None)
        elif fault.kind == "corrupt":
            response = Response(fault.body, status=200, content_type="application/json")
        elif fault.kind == "echo":
            # A hostile server or proxy: the Authorization header comes back inside the answer.
            payload = json.loads(response.get_data())
            fault.edit(payload, authorization)
            headers = {key: value.replace("{authorization}", authorization) for key, value in fault.headers.items()}
            response = Response(
                json.dumps(payload), status=response.status_code, headers={**dict(response.headers), **headers}
            )
            response.headers.pop("Content-Length", None)
        elif fault.kind == "drip":
            response = self._drip(response, fault.seconds, world.released)
        return response

    @staticmethod
    def _drip(response: Response, seconds: float, released: threading.Event) -> Response:
        """The same answer, one byte every ``seconds``; retiring the World cuts it short."""
        body = response.get_data()

        def trickle():
            for index in range(len(body)):
                if released.wait(seconds):
                    return
                yield body[index : index + 1]

        headers = {key: value for key, value in response.headers.items() if key.lower() != "content-length"}
        return Response(trickle(), status=response.status_code, headers=headers, direct_passthrough=True)

    @staticmethod
    def _token(request: Request) -> str | None:
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        return value if scheme.lower() in ("token", "bearer") and value else None

    def _answer(self, request: Request, token: str, user: dict[str, Any]) -> Response:
        resource = "graphql" if request.path == "/graphql" else "core"
        window = self.world.rate_window(token, resource)
        if window.used >= window.limit:
            message = f"API rate limit exceeded for user ID {user['id']}."
            if resource == "graphql" and request.method == "POST":
                # GraphQL says so in the answer, not in the status: 200, no data, an error of type RATE_LIMITED.
                limited = {"data": None, "errors": [{"type": "RATE_LIMITED", "message": message}]}
                return self._json(limited, 200, self._rate_headers(token, resource))
            return self._error(403, message, self._rate_headers(token, resource))
        document = request.get_json(silent=True) if request.path == "/graphql" else None
        content = graphql_api.is_mutation(document) if request.path == "/graphql" else request.method in WRITES
        wait = self.world.admit(token, resource, content=content)
        if wait:
            self.world.secondary_refusals.append((token, request.method, request.path))
            body = secondary_limit_body(403)
            headers = {**self._rate_headers(token, resource), "Retry-After": str(wait)}
            return Response(body, status=403, headers=headers, content_type="application/json; charset=utf-8")
        if request.path == "/graphql":
            if request.method != "POST":
                return self._error(404, "Not Found", self._rate_headers(token, resource))
            cost = graphql_api.query_cost(document)
            window = self.world.charge(token, resource, cost, graphql_api.repository_of(self.world, document))
            permissions = self.world.token_permissions.get(token)
            scopes = self.world.token_scopes.get(token)
            if scopes is not None and not {"repo", "public_repo"} & set(scopes):
                permissions = {}  # a classic token without a repository scope makes no mutation
            payload = graphql_api.execute(self.world, document, user, window, cost, permissions, not_accessible(token))
            return self._json(payload, 200, self._rate_headers(token, resource))
        try:
            return self._rest(request, token, user)
        except ApiError as error:
            self.world.charge(token, resource, 1, _repository_in(request.path))
            headers = {**self._rate_headers(token, resource), **error.headers}
            return self._error(error.status, error.message, headers, errors=error.errors)

    def _rest(self, request: Request, token: str, user: dict[str, Any]) -> Response:
        matched = self.rest.match(request.method, request.path)
        if matched is None:
            raise ApiError(404, "Not Found")
        operation, handler, parameters = matched
        refusal = access_refusal(self.world, token, operation, parameters)
        if refusal is not None:
            raise refusal
        body: Any = None
        if request.method in ("POST", "PATCH", "PUT"):
            raw = request.get_data()
            try:
                body = json.loads(raw) if raw else {}
            except ValueError:
                raise ApiError(400, "Problems parsing JSON") from None
        view = {"args": request.args, "json": body, "user": user, "token": token}
        status, payload = handler(view, **parameters)
        headers: dict[str, str] = {}
        if status == 201 and operation in LOCATED:
            headers["Location"] = payload["url"]
        if request.method == "GET" and status == 200:
            payload, link = self._page(request, operation, payload)
            if link:
                headers["Link"] = link
        if request.method == "GET" and status == 200:
            data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
            etag = 'W/"' + hashlib.sha256(data).hexdigest()[:40] + '"'
            if request.headers.get("If-None-Match") == etag:
                return Response(status=304, headers={**self._rate_headers(token, "core"), **headers, "ETag": etag})
            self.world.charge(token, "core", 1, _repository_in(request.path))
            return Response(
                data,
                status=200,
                headers={**self._rate_headers(token, "core"), **headers, "ETag": etag},
                content_type="application/json; charset=utf-8",
            )
        self.world.charge(token, "core", 1, _repository_in(request.path))
        if payload is None:
            return Response(status=status, headers=self._rate_headers(token, "core"))
        return self._json(payload, status, {**self._rate_headers(token, "core"), **headers})

    # -- paging ----------------------------------------------------------

    def _page(self, request: Request, operation: str, payload: Any) -> tuple[Any, str | None]:
        items_key = PAGED_KEYS.get(operation)
        if items_key is None and not isinstance(payload, list):
            return payload, None
        items = payload if items_key is None else payload[items_key]
        per_page = self._positive(request.args.get("per_page"), 30, 100)
        page = self._positive(request.args.get("page"), 1, None)
        last = max(1, math.ceil(len(items) / per_page))
        base = (self.world.link_host or request.host_url.rstrip("/")) + request.path

        def page_url(number: int) -> str:
            return base + "?" + urlencode({**request.args.to_dict(), "page": number})

        links = []
        if page < last:
            links += [f'<{page_url(page + 1)}>; rel="next"', f'<{page_url(last)}>; rel="last"']
        if page > 1:
            links += [f'<{page_url(1)}>; rel="first"', f'<{page_url(page - 1)}>; rel="prev"']
        chunk = items[(page - 1) * per_page : page * per_page]
        if items_key is not None:
            payload = {**payload, items_key: chunk}
            if items_key == "check_runs" and self.world.check_runs_total_override is not None:
                payload["total_count"] = self.world.check_runs_total_override
            return payload, ", ".join(links) or None
        return chunk, ", ".join(links) or None

    @staticmethod
    def _positive(value: str | None, default: int, cap: int | None) -> int:
        number = int(value) if value and value.isdigit() and int(value) > 0 else default
        return min(number, cap) if cap else number

    # -- answers ----------------------------------------------------------

    def _rate_headers(self, token: str | None, resource: str) -> dict[str, str]:
        if token is None or token not in self.world.tokens:
            return {}
        window = self.world.rate_window(token, resource)
        # A classic token's every answer names its scopes (GitHub's X-OAuth-Scopes); others carry none.
        scopes = self.world.token_scopes.get(token)
        return {
            **({} if scopes is None else {"X-OAuth-Scopes": ", ".join(scopes)}),
            "X-RateLimit-Limit": str(window.limit),
            "X-RateLimit-Remaining": str(max(0, window.limit - window.used)),
            "X-RateLimit-Used": str(window.used),
            "X-RateLimit-Reset": str(window.reset),
            "X-RateLimit-Resource": resource,
        }

    @staticmethod
    def _json(payload: Any, status: int, headers: dict[str, str]) -> Response:
        return Response(
            json.dumps(payload, ensure_ascii=False),
            status=status,
            headers=headers,
            content_type="application/json; charset=utf-8",
        )

    def _error(
        self, status: int, message: str, headers: dict[str, str], *, errors: list[dict[str, Any]] | None = None
    ) -> Response:
        body: dict[str, Any] = {"message": message, "documentation_url": DOCUMENTATION, "status": str(status)}
        if errors is not None:
            body["errors"] = errors
        return self._json(body, status, headers)


class Server:
    """``GitHubApp`` on 127.0.0.1 in a background thread (``url`` is the API base)."""

    def __init__(self, world: World, host: str = "127.0.0.1", port: int = 0):
        self.app = GitHubApp(world)
        self._server = make_server(host, port, self.app, threaded=True)
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(SERVE_POLL_SECONDS,), name="github-simulator", daemon=True
        )

    def start(self) -> Server:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_port}"
