"""A fake GitHub (REST + GraphQL) on 127.0.0.1 for the observer tests and the bench.

Payloads are the recorded OpenAPI examples under fixtures/github/rest (same
keys, same order) with the fields a scenario needs overridden, and the Codex
variants under fixtures/github/codex. The server behaves like GitHub where
the observer depends on it:

- ``Authorization: token <t>`` must match, else 401;
- lists page with ``per_page`` (default 30, max 100) and ``page``, answer
  ``[]`` past the end, and link pages with ``Link: rel="next"/"last"``;
- every JSON answer carries a weak ETag; a matching ``If-None-Match`` gets a
  bodiless 304 that does not move ``x-ratelimit-used``;
- GraphQL pages ``reviewThreads`` 100 at a time and thread comments through
  ``node(id:)``, and reports ``rateLimit { cost: 1 }``.

Faults are queued per request pattern (``fail``, ``stall``, ``truncate``,
``corrupt``, ``graphql_errors``, and the hostile ones: ``drip``, ``gzip_bomb``,
``echo`` of the Authorization header, ``after`` to change state between two
pages) and consumed in order. ``reset()`` releases every stalled or dripping
handler of the previous scenario, and nothing they do afterwards reaches the
new one.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import json
import logging
import math
import re
import threading
import time
import zlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any, Callable
from urllib.parse import urlencode

from pytest_httpserver import HTTPServer
from werkzeug.wrappers import Request, Response

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "github"
OWNER, REPO = "Octo-Org", "widgets"
REPOSITORY = f"{OWNER}/{REPO}"
PR_NUMBER = 7
TOKEN = "ghp_fakeTokenThatMustNeverLeak0123456789abcd"
RUN_ID = "0123456789abcdef0123456789abcdef"
OTHER_RUN_ID = "fedcba9876543210fedcba9876543210"
CODEX_BOT_ID = 199175422
logging.getLogger("werkzeug").setLevel(logging.ERROR)  # keep test output to test results
_EPOCH = datetime(2026, 10, 1, 10, 0, 0, tzinfo=timezone.utc)


def fixture(relative: str) -> Any:
    return json.loads((FIXTURES / relative).read_text(encoding="utf-8"))


USERS = fixture("codex/users.json")
BODIES = fixture("codex/bodies.json")


def sha_for(label: str) -> str:
    """A deterministic 40-hex commit sha for a label."""
    return hashlib.sha1(label.encode("utf-8")).hexdigest()


def at(seconds: int) -> str:
    """An ISO-8601 UTC timestamp ``seconds`` after the scenario epoch."""
    return (_EPOCH + timedelta(seconds=seconds)).strftime("%Y-%m-%dT%H:%M:%SZ")


def codex_body(name: str, sha: str) -> str:
    return BODIES[name].replace("{sha7}", sha[:7]).replace("{sha10}", sha[:10])


def request_body(round_number: int, sha: str, run_id: str = RUN_ID) -> str:
    return f"@codex review\n<!-- github-codex-pr-loop-request run={run_id} round={round_number} sha={sha} -->"


def graphql_author(user: dict[str, Any] | None) -> dict[str, Any] | None:
    if user is None:
        return None
    login = user["login"].removesuffix("[bot]")  # GraphQL drops the [bot] suffix
    return {"login": login, "databaseId": user["id"]}


@dataclass
class Fault:
    method: str
    pattern: re.Pattern[str]
    times: int
    kind: str  # "status", "stall", "truncate", "corrupt", "graphql-errors", "drip", "gzip-bomb", "echo", "after"
    status: int = 500
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b'{"message":"Server Error"}'
    seconds: float = 0.0
    echo_authorization: bool = False
    edit: Callable[[Any, str], None] | None = None
    action: Callable[[], None] | None = None


class FakeGitHub:
    """Scenario state plus the request handler; ``reset()`` starts a new scenario."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self.server: HTTPServer | None = None
        self._scenario = 0
        self._released = threading.Event()
        self._in_flight = 0
        self._idle = threading.Condition(self._lock)
        self.reset()

    # -- lifecycle ------------------------------------------------------

    def start(self) -> "FakeGitHub":
        self.server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
        self.server.expect_request(re.compile(r"^/.*")).respond_with_handler(self.handle)
        self.server.start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.port}"

    def reset(self) -> None:
        with self._lock:
            # A handler still stalling for the previous scenario wakes now and
            # answers nothing that touches this one (log, rate counters).
            self._scenario += 1
            self._released.set()
            self._released = threading.Event()
            self.token = TOKEN
            self.user = copy.deepcopy(fixture("rest/private-user.json"))
            self.user.update({"login": USERS["loop_owner"]["login"], "id": USERS["loop_owner"]["id"]})
            self.base_sha, head_sha = sha_for("base-1"), sha_for("head-1")
            self.refs: dict[tuple[str, str], str] = {(REPOSITORY.lower(), "main"): self.base_sha, (REPOSITORY.lower(), "feature/loop"): head_sha}
            self.pull = self._pull_payload(PR_NUMBER, "feature/loop", head_sha, "main")
            self.issue_comments: list[dict[str, Any]] = []
            self.reviews: list[dict[str, Any]] = []
            self.review_comments: list[dict[str, Any]] = []
            self.reactions: list[dict[str, Any]] = []
            self.check_runs: list[dict[str, Any]] = []
            self.statuses: list[dict[str, Any]] = []
            self.protection: dict[str, Any] | int = 404
            self.other_open_pulls: list[dict[str, Any]] = []
            self.threads: list[dict[str, Any]] = []
            self.faults: list[Fault] = []
            self.log: list[tuple[str, str, int]] = []
            self.rate_used = 0
            self.rate_reset = int(time.time()) + 3600
            self.graphql_cost = 0
            self.link_host: str | None = None  # override the host in Link headers (foreign-host test)
            self.check_runs_total_override: int | None = None
            self.thread_page_drops_cursor = False
            self._next_id = 1000

    # -- scenario builders -----------------------------------------------

    def new_id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _pull_payload(self, number: int, head_branch: str, head_sha: str, base_branch: str, head_repository: str | None = REPOSITORY) -> dict[str, Any]:
        pull = copy.deepcopy(fixture("rest/pull-request.json"))
        html = f"https://github.com/{REPOSITORY}/pull/{number}"
        pull.update({"number": number, "html_url": html, "title": "Loop: tighten retries", "body": "Makes retries bounded.",
                     "state": "open", "draft": False, "merged": False, "merged_at": None, "mergeable": True, "mergeable_state": "clean"})
        pull["head"].update({"ref": head_branch, "sha": head_sha, "label": f"{OWNER}:{head_branch}"})
        pull["base"].update({"ref": base_branch, "sha": self.base_sha, "label": f"{OWNER}:{base_branch}"})
        pull["base"]["repo"].update({"full_name": REPOSITORY, "name": REPO})
        if head_repository is None:
            pull["head"]["repo"] = None
        else:
            pull["head"]["repo"].update({"full_name": head_repository, "name": head_repository.split("/")[1]})
        return pull

    @property
    def head_sha(self) -> str:
        return self.pull["head"]["sha"]

    def add_issue_comment(self, user: dict[str, Any], body: str, created_at: str, updated_at: str | None = None) -> dict[str, Any]:
        comment = copy.deepcopy(fixture("rest/issue-comment.json"))
        comment_id = self.new_id()
        comment.update({"id": comment_id, "node_id": f"IC_{comment_id}", "body": body, "user": copy.deepcopy(user),
                        "created_at": created_at, "updated_at": updated_at or created_at,
                        "url": f"https://api.github.com/repos/{REPOSITORY}/issues/comments/{comment_id}",
                        "html_url": f"https://github.com/{REPOSITORY}/pull/{PR_NUMBER}#issuecomment-{comment_id}",
                        "issue_url": f"https://api.github.com/repos/{REPOSITORY}/issues/{PR_NUMBER}"})
        with self._lock:
            self.issue_comments.append(comment)
        return comment

    def add_request(self, round_number: int, created_at: str, sha: str | None = None, run_id: str = RUN_ID) -> dict[str, Any]:
        return self.add_issue_comment(USERS["loop_owner"], request_body(round_number, sha or self.head_sha, run_id), created_at)

    def add_review(self, user: dict[str, Any], body: str, state: str, commit_id: str, submitted_at: str) -> dict[str, Any]:
        review = copy.deepcopy(fixture("rest/pull-request-review.json"))
        review_id = self.new_id()
        review.update({"id": review_id, "node_id": f"PRR_{review_id}", "user": copy.deepcopy(user), "body": body, "state": state,
                       "commit_id": commit_id, "submitted_at": submitted_at,
                       "html_url": f"https://github.com/{REPOSITORY}/pull/{PR_NUMBER}#pullrequestreview-{review_id}"})
        with self._lock:
            self.reviews.append(review)
        return review

    def add_review_comment(self, user: dict[str, Any], body: str, original_commit_id: str, created_at: str, *, commit_id: str | None = None,
                           path: str = "src/retry.py", line: int = 12, review_id: int | None = None) -> dict[str, Any]:
        comment = copy.deepcopy(fixture("rest/pull-request-review-comment.json"))
        comment_id = self.new_id()
        comment.update({"id": comment_id, "node_id": f"PRRC_{comment_id}", "user": copy.deepcopy(user), "body": body,
                        "commit_id": commit_id or self.head_sha, "original_commit_id": original_commit_id,
                        "created_at": created_at, "updated_at": created_at, "path": path, "line": line, "original_line": line,
                        "pull_request_review_id": review_id or 0, "in_reply_to_id": None})
        with self._lock:
            self.review_comments.append(comment)
        return comment

    def add_reaction(self, user: dict[str, Any], content: str, created_at: str) -> dict[str, Any]:
        reaction = copy.deepcopy(fixture("rest/reaction.json"))
        reaction_id = self.new_id()
        reaction.update({"id": reaction_id, "node_id": f"REA_{reaction_id}", "user": copy.deepcopy(user), "content": content, "created_at": created_at})
        with self._lock:
            self.reactions.append(reaction)
        return reaction

    def add_check_run(self, name: str, status: str = "completed", conclusion: str | None = "success") -> dict[str, Any]:
        run = copy.deepcopy(fixture("rest/check-run-paginated.json")["check_runs"][0])
        run.update({"id": self.new_id(), "name": name, "status": status, "conclusion": conclusion, "head_sha": self.head_sha})
        with self._lock:
            self.check_runs.append(run)
        return run

    def add_status(self, context: str, state: str) -> dict[str, Any]:
        status = copy.deepcopy(fixture("rest/combined-commit-status.json")["statuses"][0])
        status.update({"id": self.new_id(), "context": context, "state": state})
        with self._lock:
            self.statuses.append(status)
        return status

    def add_open_pull(self, number: int, head_branch: str, head_sha: str, head_repository: str | None = REPOSITORY) -> dict[str, Any]:
        pull = self._pull_payload(number, head_branch, head_sha, "main", head_repository)
        with self._lock:
            self.other_open_pulls.append(pull)
        return pull

    def add_thread(self, root_author: dict[str, Any] | None, root_body: str, created_at: str, *, thread_id: str | None = None,
                   resolved: bool = False, outdated: bool = False, path: str = "src/retry.py", line: int | None = 12,
                   replies: list[tuple[dict[str, Any] | None, str, str]] = (), last_edited_at: str | None = None) -> dict[str, Any]:
        number = self.new_id()
        thread = {
            "id": thread_id or f"PRRT_{number:08d}",
            "isResolved": resolved,
            "isOutdated": outdated,
            "path": path,
            "line": line,
            "originalLine": line,
            "startLine": None,
            "diffSide": "RIGHT",
            "comments": [
                {"id": f"PRRC_{number:08d}_0", "body": root_body, "createdAt": created_at, "lastEditedAt": last_edited_at, "author": graphql_author(root_author)}
            ]
            + [
                {"id": f"PRRC_{number:08d}_{index}", "body": body, "createdAt": when, "lastEditedAt": None, "author": graphql_author(author)}
                for index, (author, body, when) in enumerate(replies, start=1)
            ],
        }
        with self._lock:
            self.threads.append(thread)
        return thread

    def force_push(self, new_sha: str) -> None:
        with self._lock:
            self.pull["head"]["sha"] = new_sha
            self.refs[(REPOSITORY.lower(), self.pull["head"]["ref"])] = new_sha
            self.check_runs, self.statuses = [], []

    # -- faults -------------------------------------------------------------

    def _add_fault(self, method: str, pattern: str, times: int, kind: str, **options: Any) -> None:
        with self._lock:
            self.faults.append(Fault(method, re.compile(pattern), times, kind, **options))

    def fail(self, method: str, pattern: str, status: int, *, times: int = 1, headers: dict[str, str] | None = None, body: bytes | None = None,
             echo_authorization: bool = False) -> None:
        self._add_fault(method, pattern, times, "status", status=status, headers=headers or {}, echo_authorization=echo_authorization,
                        **({"body": body} if body is not None else {}))

    def stall(self, method: str, pattern: str, seconds: float, *, times: int = 1) -> None:
        self._add_fault(method, pattern, times, "stall", seconds=seconds)

    def truncate(self, method: str, pattern: str, *, times: int = 1) -> None:
        self._add_fault(method, pattern, times, "truncate")

    def corrupt(self, method: str, pattern: str, body: bytes, *, times: int = 1) -> None:
        self._add_fault(method, pattern, times, "corrupt", body=body)

    def drip(self, method: str, pattern: str, seconds: float, *, times: int = 1) -> None:
        """Send the normal answer one byte every ``seconds`` (each read succeeds; the whole never ends in time)."""
        self._add_fault(method, pattern, times, "drip", seconds=seconds)

    def gzip_bomb(self, method: str, pattern: str, decompressed_bytes: int, *, times: int = 1) -> None:
        """A gzip body that inflates to ``decompressed_bytes`` of JSON whitespace."""
        compressor = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        block, chunks = b" " * (1 << 20), []
        for _ in range(decompressed_bytes // len(block)):
            chunks.append(compressor.compress(block))
        chunks.append(compressor.compress(b" " * (decompressed_bytes % len(block)) + b"{}"))
        chunks.append(compressor.flush())
        self._add_fault(method, pattern, times, "gzip-bomb", body=b"".join(chunks))

    def echo(self, method: str, pattern: str, edit: Callable[[Any, str], None] = lambda payload, authorization: None, *,
             headers: dict[str, str] | None = None, times: int = 1) -> None:
        """Echo the request's Authorization header into the answer: ``edit(payload, authorization)``
        changes the JSON payload in place; ``{authorization}`` in a header value is replaced by it."""
        self._add_fault(method, pattern, times, "echo", edit=edit, headers=headers or {})

    def after(self, method: str, pattern: str, action: Callable[[], None], *, times: int = 1) -> None:
        """Run ``action`` right after answering a matching request (a change between two pages)."""
        self._add_fault(method, pattern, times, "after", action=action)

    def delete_issue_comment(self, comment_id: int) -> None:
        with self._lock:
            self.issue_comments = [comment for comment in self.issue_comments if comment["id"] != comment_id]

    def graphql_errors(self, *, times: int = 1) -> None:
        self._add_fault("POST", r"^/graphql$", times, "graphql-errors")

    def _take_fault(self, method: str, target: str) -> Fault | None:
        with self._lock:
            for fault in self.faults:
                if fault.times > 0 and fault.method == method and fault.pattern.search(target):
                    fault.times -= 1
                    return fault
        return None

    # -- HTTP -------------------------------------------------------------

    def requests_to(self, pattern: str) -> list[tuple[str, str, int]]:
        return [entry for entry in self.log if re.search(pattern, entry[1])]

    def _rate_headers(self) -> dict[str, str]:
        return {"X-RateLimit-Limit": "5000", "X-RateLimit-Remaining": str(5000 - self.rate_used), "X-RateLimit-Used": str(self.rate_used),
                "X-RateLimit-Reset": str(self.rate_reset), "X-RateLimit-Resource": "core"}

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no request handler is running (a stalled one included)."""
        with self._idle:
            return self._idle.wait_for(lambda: self._in_flight == 0, timeout)

    def handle(self, request: Request) -> Response:
        with self._lock:
            self._in_flight += 1
        try:
            return self._handle(request)
        finally:
            with self._idle:
                self._in_flight -= 1
                self._idle.notify_all()

    def _handle(self, request: Request) -> Response:
        target = request.path + (f"?{request.query_string.decode()}" if request.query_string else "")
        with self._lock:
            scenario, released = self._scenario, self._released
        fault = self._take_fault(request.method, target)
        if fault is not None and fault.kind == "stall":
            released.wait(fault.seconds)  # the client has given up by now; answer normally
            fault = None
        with self._lock:
            if scenario != self._scenario:
                return Response(status=503)  # a later scenario began meanwhile: leave no trace in it
            response = self._answer(request, fault, released)
            self.log.append((request.method, target, response.status_code))
            if fault is not None and fault.kind == "after":
                fault.action()  # e.g. a comment deleted between this page and the next
        return response

    def _answer(self, request: Request, fault: Fault | None, released: threading.Event) -> Response:
        authorization = request.headers.get("Authorization") or ""
        if authorization != f"token {self.token}":
            return self._json_response(request, {"message": "Bad credentials"}, status=401)
        if fault is not None and fault.kind == "status":
            body = fault.body
            if fault.echo_authorization:  # a hostile server: the observer must not repeat what it says
                body = json.dumps({"message": f"echo {authorization}"}).encode()
            return Response(body, status=fault.status, headers={**self._rate_headers(), **fault.headers}, content_type="application/json")
        if fault is not None and fault.kind == "graphql-errors":
            payload = {"data": None, "errors": [{"type": "INTERNAL", "message": "Something went wrong while executing your query."}]}
            return Response(json.dumps(payload), status=200, content_type="application/json")
        if fault is not None and fault.kind == "gzip-bomb":
            return Response(fault.body, status=200, headers={"Content-Encoding": "gzip"}, content_type="application/json")
        response = self._route(request)
        if fault is None:
            return response
        if fault.kind == "truncate":
            response = Response(response.get_data()[: len(response.get_data()) // 2], status=200, headers=dict(response.headers))
            response.headers.pop("Content-Length", None)
        elif fault.kind == "corrupt":
            response = Response(fault.body, status=200, content_type="application/json")
        elif fault.kind == "echo":
            # A hostile server or proxy: the Authorization header comes back inside the answer.
            payload = json.loads(response.get_data())
            fault.edit(payload, authorization)
            headers = {key: value.replace("{authorization}", authorization) for key, value in fault.headers.items()}
            response = Response(json.dumps(payload), status=response.status_code, headers={**dict(response.headers), **headers})
            response.headers.pop("Content-Length", None)
        elif fault.kind == "drip":
            response = self._drip(response, fault.seconds, released)
        return response

    @staticmethod
    def _drip(response: Response, seconds: float, released: threading.Event) -> Response:
        """The same answer, one byte every ``seconds``; a new scenario cuts it short."""
        body = response.get_data()

        def trickle():
            for index in range(len(body)):
                if released.wait(seconds):
                    return
                yield body[index : index + 1]

        headers = {key: value for key, value in response.headers.items() if key.lower() != "content-length"}
        return Response(trickle(), status=response.status_code, headers=headers, direct_passthrough=True)

    def _route(self, request: Request) -> Response:
        repo_prefix = r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)"
        routes: list[tuple[str, str, Callable[..., Response]]] = [
            ("GET", r"/user", self._get_user),
            ("GET", repo_prefix + r"/pulls/(?P<number>\d+)", self._get_pull),
            ("GET", repo_prefix + r"/pulls", self._list_pulls),
            ("GET", repo_prefix + r"/git/ref/heads/(?P<branch>.+)", self._get_ref),
            ("GET", repo_prefix + r"/issues/(?P<number>\d+)/comments", lambda request, **_: self._list(request, self.issue_comments)),
            ("GET", repo_prefix + r"/pulls/(?P<number>\d+)/reviews", lambda request, **_: self._list(request, self.reviews)),
            ("GET", repo_prefix + r"/pulls/(?P<number>\d+)/comments", lambda request, **_: self._list(request, self.review_comments)),
            ("GET", repo_prefix + r"/issues/(?P<number>\d+)/reactions", lambda request, **_: self._list(request, self.reactions)),
            ("GET", repo_prefix + r"/commits/(?P<sha>[0-9a-f]{40})/check-runs", self._list_check_runs),
            ("GET", repo_prefix + r"/commits/(?P<sha>[0-9a-f]{40})/status", self._combined_status),
            ("GET", repo_prefix + r"/branches/(?P<branch>.+)/protection", self._get_protection),
            ("GET", repo_prefix + r"/branches/(?P<branch>.+)", self._get_branch),
            ("POST", r"/graphql", self._graphql),
        ]
        for method, pattern, handler in routes:
            match = re.fullmatch(pattern, request.path)
            if match and request.method == method:
                arguments = match.groupdict()
                if "owner" in arguments and f"{arguments.pop('owner')}/{arguments.pop('repo')}".lower() != REPOSITORY.lower():
                    return self._json_response(request, {"message": "Not Found"}, status=404)
                if "number" in arguments and int(arguments["number"]) != PR_NUMBER:
                    return self._json_response(request, {"message": "Not Found"}, status=404)
                return handler(request, **arguments)
        return self._json_response(request, {"message": "Not Found"}, status=404)

    def _json_response(self, request: Request, payload: Any, *, status: int = 200, link: str | None = None) -> Response:
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        headers = self._rate_headers()
        if link:
            headers["Link"] = link
        if status == 200 and request.method == "GET":
            etag = 'W/"' + hashlib.sha256(body).hexdigest()[:40] + '"'
            headers["ETag"] = etag
            if request.headers.get("If-None-Match") == etag:
                return Response(status=304, headers=headers)  # a conditional hit costs no points
        self.rate_used += 1
        headers["X-RateLimit-Used"], headers["X-RateLimit-Remaining"] = str(self.rate_used), str(5000 - self.rate_used)
        return Response(body, status=status, headers=headers, content_type="application/json; charset=utf-8")

    def _page(self, request: Request, items: list[Any]) -> tuple[list[Any], str | None]:
        per_page = min(int(request.args.get("per_page", 30)), 100)
        page = int(request.args.get("page", 1))
        last = max(1, math.ceil(len(items) / per_page))
        base = (self.link_host or request.host_url.rstrip("/")) + request.path

        def page_url(number: int) -> str:
            return base + "?" + urlencode({**request.args.to_dict(), "page": number})

        links = []
        if page < last:
            links += [f'<{page_url(page + 1)}>; rel="next"', f'<{page_url(last)}>; rel="last"']
        if page > 1:
            links += [f'<{page_url(1)}>; rel="first"', f'<{page_url(page - 1)}>; rel="prev"']
        return items[(page - 1) * per_page : page * per_page], ", ".join(links) or None

    def _list(self, request: Request, items: list[Any]) -> Response:
        chunk, link = self._page(request, items)
        return self._json_response(request, chunk, link=link)

    def _get_user(self, request: Request) -> Response:
        return self._json_response(request, self.user)

    def _get_pull(self, request: Request, number: str) -> Response:
        return self._json_response(request, self.pull)

    def _list_pulls(self, request: Request) -> Response:
        pulls = ([self.pull] if self.pull["state"] == "open" else []) + self.other_open_pulls
        if request.args.get("state") != "open":
            return self._json_response(request, {"message": "this fake only lists open pulls"}, status=422)
        return self._list(request, sorted(pulls, key=lambda pull: -pull["number"]))

    def _get_ref(self, request: Request, branch: str) -> Response:
        owner_repo = request.path.split("/git/")[0].removeprefix("/repos/").lower()
        sha = self.refs.get((owner_repo, branch))
        if sha is None:
            return self._json_response(request, {"message": "Not Found"}, status=404)
        ref = {"ref": f"refs/heads/{branch}", "node_id": "REF_x", "url": f"https://api.github.com/repos/{owner_repo}/git/refs/heads/{branch}",
               "object": {"type": "commit", "sha": sha, "url": f"https://api.github.com/repos/{owner_repo}/git/commits/{sha}"}}
        return self._json_response(request, ref)

    def _list_check_runs(self, request: Request, sha: str) -> Response:
        runs = [run for run in self.check_runs if run["head_sha"] == sha]
        chunk, link = self._page(request, runs)
        total = len(runs) if self.check_runs_total_override is None else self.check_runs_total_override
        return self._json_response(request, {"total_count": total, "check_runs": chunk}, link=link)

    def _combined_status(self, request: Request, sha: str) -> Response:
        template = copy.deepcopy(fixture("rest/combined-commit-status.json"))
        chunk, link = self._page(request, self.statuses if sha == self.head_sha else [])
        states = {status["state"] for status in self.statuses}
        state = "failure" if states & {"failure", "error"} else "pending" if "pending" in states or not states else "success"
        template.update({"state": state, "statuses": chunk, "sha": sha, "total_count": len(self.statuses) if sha == self.head_sha else 0})
        return self._json_response(request, template, link=link)

    def _get_branch(self, request: Request, branch: str) -> Response:
        sha = self.refs.get((REPOSITORY.lower(), branch))
        if sha is None:
            return self._json_response(request, {"message": "Branch not found"}, status=404)
        # Shape of GET /repos/{owner}/{repo}/branches/{branch} (branch-with-protection), trimmed to what matters.
        payload = {"name": branch, "commit": {"sha": sha, "url": f"https://api.github.com/repos/{REPOSITORY}/commits/{sha}"},
                   "_links": {"self": f"https://api.github.com/repos/{REPOSITORY}/branches/{branch}", "html": f"https://github.com/{REPOSITORY}/tree/{branch}"},
                   "protected": self.protection != 404,
                   "protection": {"enabled": self.protection != 404, "required_status_checks": {"enforcement_level": "off", "contexts": [], "checks": []}},
                   "protection_url": f"https://api.github.com/repos/{REPOSITORY}/branches/{branch}/protection"}
        return self._json_response(request, payload)

    def _get_protection(self, request: Request, branch: str) -> Response:
        if isinstance(self.protection, int):
            message = {"message": "Branch not protected"} if self.protection == 404 else {"message": "Resource not accessible by integration"}
            return self._json_response(request, message, status=self.protection)
        return self._json_response(request, self.protection)

    # -- GraphQL ------------------------------------------------------------

    @staticmethod
    def _cursor(offset: int) -> str:
        return base64.b64encode(f"cursor:v2:{offset}".encode()).decode()

    @staticmethod
    def _offset(cursor: str | None) -> int:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1]) if cursor else 0

    def _comment_connection(self, comments: list[dict[str, Any]], offset: int) -> dict[str, Any]:
        page = comments[offset : offset + 100]
        has_next = offset + 100 < len(comments)
        return {"totalCount": len(comments), "pageInfo": {"hasNextPage": has_next, "endCursor": self._cursor(offset + len(page)) if page else None},
                "nodes": copy.deepcopy(page)}

    def _graphql(self, request: Request) -> Response:
        payload = request.get_json(silent=True) or {}
        query, variables = payload.get("query", ""), payload.get("variables") or {}
        self.graphql_cost += 1
        rate_limit = {"cost": 1, "remaining": 5000 - self.graphql_cost}
        if "reviewThreads" in query:
            if (f"{variables.get('owner')}/{variables.get('name')}".lower(), variables.get("number")) != (REPOSITORY.lower(), PR_NUMBER):
                data = {"rateLimit": rate_limit, "repository": None}
                return Response(json.dumps({"data": data, "errors": [{"type": "NOT_FOUND"}]}), content_type="application/json")
            offset = self._offset(variables.get("cursor"))
            page = self.threads[offset : offset + 100]
            has_next = offset + 100 < len(self.threads)
            nodes = [{**{k: v for k, v in thread.items() if k != "comments"}, "comments": self._comment_connection(thread["comments"], 0)} for thread in page]
            end_cursor = None if self.thread_page_drops_cursor else self._cursor(offset + len(page)) if page else None
            connection = {"totalCount": len(self.threads), "pageInfo": {"hasNextPage": has_next, "endCursor": end_cursor}, "nodes": nodes}
            data = {"rateLimit": rate_limit, "repository": {"pullRequest": {"reviewThreads": connection}}}
        elif "node(id:" in query:
            thread = next((t for t in self.threads if t["id"] == variables.get("id")), None)
            node = None if thread is None else {"comments": self._comment_connection(thread["comments"], self._offset(variables.get("cursor")))}
            data = {"rateLimit": rate_limit, "node": node}
        else:
            return Response(json.dumps({"errors": [{"message": "unsupported query"}]}), status=200, content_type="application/json")
        return Response(json.dumps({"data": data}, ensure_ascii=False), status=200, content_type="application/json")
