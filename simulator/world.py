"""The simulated GitHub's state: accounts, tokens, repositories, pull requests, faults.

One ``World`` owns everything the HTTP front, the tests, the Codex reviewer and
the automation host see, and a simulated clock (``World.clock``) that stamps
every write. Payloads are kept in GitHub's own REST shapes (built from the
recorded examples under fixtures/github/rest) and mutated in place, so what a
scenario holds is what the API serves. Branch tips are never stored here: they
are read from each repository's bare git repository (``bare_repository``), and
an open pull request's ``head.sha``/``base.sha`` follow them.

See simulator/README.md for the scripting guide.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
import tempfile
import threading
import zlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

from simulator.clock import SimClock, iso
from simulator.gitrepo import BareRepository

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "github"
API = "https://api.github.com"
WEB = "https://github.com"
RATE_LIMIT = 5000
RATE_WINDOW = timedelta(hours=1)
# What the merge endpoint answers (405) for a pull request GitHub will not merge, by merge state.
_NOT_MERGEABLE = {
    "dirty": "Pull Request is not mergeable",
    "blocked": "Repository rule violations found: required status checks have not passed",
    "behind": "Head branch is out of date with the base branch",
}


# GitHub's refusal of a draft where the owner's plan has none (a private repository on Free or Pro).
DRAFTS_UNSUPPORTED = "Draft pull requests are not supported in this repository."
# Plans whose private repositories have draft pull requests.
DRAFT_PLANS = frozenset({"team", "enterprise"})


def not_accessible(token: str) -> str:
    """GitHub's refusal of what a token may not do: an app installation's wording, else a personal token's."""
    kind = "integration" if token.startswith("ghs_") else "personal access token"
    return f"Resource not accessible by {kind}"


def fixture(relative: str) -> Any:
    return json.loads((FIXTURES / relative).read_text(encoding="utf-8"))


USERS = fixture("codex/users.json")
USERS.pop("_comment", None)


class ApiError(Exception):
    """An error answer: HTTP status plus GitHub's ``{"message", "documentation_url"}`` body.

    ``errors`` is the body's ``errors`` list of a 422 (GitHub's validation detail), ``headers``
    what the answer carries besides the rate-limit headers (``X-Accepted-GitHub-Permissions``).
    """

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[dict[str, Any]] | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.headers = dict(headers or {})


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


@dataclass
class RateWindow:
    """One token's primary rate-limit window for one resource (``core`` or ``graphql``)."""

    limit: int
    used: int
    reset: int  # epoch seconds, simulated


@dataclass(frozen=True)
class SecondaryLimits:
    """GitHub's documented secondary rate limits of one token, counted on the simulated clock.

    Content-generating requests (a REST POST, PATCH, PUT or DELETE, a GraphQL
    mutation): at most ``content_per_minute`` in any 60 seconds and
    ``content_per_hour`` in any hour. Points in any 60 seconds, a read 1 and a
    content-generating request 5: at most ``rest_points_per_minute`` for REST
    and ``graphql_points_per_minute`` for GraphQL. A request over any of them
    is refused and counts toward none.
    """

    content_per_minute: int = 80
    content_per_hour: int = 500
    rest_points_per_minute: int = 900
    graphql_points_per_minute: int = 2000


@dataclass(frozen=True)
class Admitted:
    """One request counted against its token's secondary limits."""

    at: int  # epoch seconds, simulated
    resource: str  # "core" or "graphql"
    content: bool

    def points(self, resource: str) -> int:
        """What it weighs in ``resource``'s points a minute: a read 1, a content-generating request 5."""
        return (5 if self.content else 1) if self.resource == resource else 0


def _pruned(admitted: deque[Admitted], before: int) -> deque[Admitted]:
    """``admitted`` without its entries at or before ``before`` (they are the oldest)."""
    while admitted and admitted[0].at <= before:
        admitted.popleft()
    return admitted


def _seconds_until_under(
    admitted: Sequence[Admitted], new: Admitted, window: int, limit: int, measure: Callable[[Admitted], int]
) -> int:
    """0 if ``new`` fits under ``limit`` beside ``admitted``, else how long until it would.

    ``admitted`` holds the requests of the last ``window`` seconds, oldest first.
    A request heavier than the limit itself never fits: the answer is the
    whole window, as GitHub's is a wait, never a promise.
    """
    if measure(new) == 0:
        return 0  # the request weighs nothing here (a read against a content limit)
    total = sum(measure(entry) for entry in admitted) + measure(new)
    if total <= limit:
        return 0
    for entry in admitted:  # oldest first: each leaves the window at its own time
        total -= measure(entry)
        if total <= limit:
            return entry.at + window - new.at
    return window


@dataclass
class Repository:
    owner: str
    name: str
    id: int
    bare: BareRepository
    default_branch: str = "main"
    private: bool = False
    # The owner's GitHub plan: drafts exist in private repositories only on "team" and "enterprise"
    # (GitHub Free and Pro, personal or organization, have them in public repositories only).
    owner_plan: str = "free"
    pulls: dict[int, dict[str, Any]] = field(default_factory=dict)
    issue_comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    issue_reactions: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    comment_reactions: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    reviews: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    review_comments: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    threads: dict[int, list[dict[str, Any]]] = field(default_factory=dict)
    check_runs: list[dict[str, Any]] = field(default_factory=list)
    statuses: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    protection: dict[str, dict[str, Any] | int] = field(default_factory=dict)
    rulesets: dict[str, list[dict[str, Any]] | int] = field(default_factory=dict)
    # Logins with the admin role: only they (or a token granted "administration") read classic protection.
    admins: set[str] = field(default_factory=set)
    # Each collaborator's role ("read", "triage", "write", "maintain", "admin"), as GET /repos/{o}/{r}
    # reports it in ``permissions``; an account not named here has ``default_role``.
    roles: dict[str, str] = field(default_factory=dict)
    default_role: str = "write"
    # GitHub's own merge verdicts for a PR (GraphQL field -> value), over what the simulator derives.
    merge_verdicts: dict[int, dict[str, Any]] = field(default_factory=dict)
    next_number: int = 1

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    def tip(self, branch: str) -> str | None:
        return self.bare.ref(branch)

    def branch_protection(self, branch: str) -> dict[str, Any] | int:
        """The rules of ``branch``, or the status GitHub answers instead (404 unprotected, 403 unreadable)."""
        return self.protection.get(branch, 404)

    def may_read_protection(self, token: str, login: str, token_permissions: dict[str, str] | None) -> bool:
        """Whether GitHub shows this token the classic protection rules: an administrator's privilege.

        A token with a permission list (an app's, a fine-grained one) needs
        ``administration`` (read or write); any other token acts with its
        account's role, and only the admin role reads the rules.
        """
        if token_permissions is not None:
            return token_permissions.get("administration") in ("read", "write")
        return login in self.admins

    def branch_rules(self, branch: str) -> list[dict[str, Any]] | int:
        """The active ruleset rules for ``branch``, or the status GitHub answers instead (403/404)."""
        return self.rulesets.get(branch, [])


class World:
    """All state of one simulated GitHub, plus its clock and fault queue."""

    def __init__(self, root: Path | None = None, clock: SimClock | None = None):
        self.root = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="github-simulator-"))
        self._owns_root = root is None
        self.clock = clock or SimClock()
        self.lock = threading.RLock()
        self.users: dict[str, dict[str, Any]] = {}
        self.tokens: dict[str, str] = {}  # token -> login
        # token -> {fine-grained permission: "read" | "write"}; a token absent here may write anything
        # (simulator/app.py answers a write the token may not make as GitHub does).
        self.token_permissions: dict[str, dict[str, str]] = {}
        # token -> its classic OAuth scopes ("repo", "public_repo", ...), sent back as X-OAuth-Scopes.
        self.token_scopes: dict[str, list[str]] = {}
        self.repositories: dict[str, Repository] = {}
        self.rate_windows: dict[tuple[str, str], RateWindow] = {}
        # Points charged since the World began, across window resets: per (token, resource), and per
        # (repository full name, resource) for the requests that name a repository.
        self.rate_spent: dict[tuple[str, str], int] = {}
        self.rate_spent_on: dict[tuple[str, str], int] = {}
        # GitHub's secondary limits, on unless a scenario sets None; ``secondary_refusals`` keeps
        # (token, method, path) of every request they refused.
        self.secondary_limits: SecondaryLimits | None = SecondaryLimits()
        # Per token: every request admitted in the last minute, and the content-generating ones of the
        # last hour, oldest first (each pruned from the left as it leaves its window).
        self._last_minute: dict[str, deque[Admitted]] = {}
        self._content_last_hour: dict[str, deque[Admitted]] = {}
        self.secondary_refusals: list[tuple[str, str, str]] = []
        self.content_generated: dict[str, int] = {}  # token -> content-generating requests admitted
        self.faults: list[Fault] = []
        self.log: list[tuple[str, str, int]] = []
        # Knobs for answers GitHub should never give (observer fail-closed tests).
        self.link_host: str | None = None
        self.check_runs_total_override: int | None = None
        self.rollup_total_override: int | None = None
        self.thread_page_drops_cursor = False
        # GitHub computes a pull request's merge state in the background: after each change of its
        # head or base, the next ``merge_computing_reads`` API reads of it (REST or GraphQL) answer
        # that it is not computed yet (mergeable null, UNKNOWN). ``compute_merge_state_again`` does
        # the same for one pull request at any moment.
        self.merge_computing_reads = 0
        self._merge_basis: dict[tuple[str, int], tuple[str, str, str]] = {}
        self._merge_computing: dict[tuple[str, int], int] = {}
        self._merge_facts: dict[tuple[str, str, str], tuple[bool, bool] | None] = {}
        self._listeners: list[Callable[[str, dict[str, Any]], None]] = []
        # Set when this World is retired: stalled or dripping answers end at
        # once and leave no trace (see GitHubApp).
        self.released = threading.Event()
        # A test's window on every write a client sends (a REST write, a GraphQL mutation, a git push), at each
        # of its phases (WRITE_PHASES): ``write_hook(kind, phase, applied)``. True at "before" drops the request
        # unapplied (the crash tests stop the client there: tests/crash_points.py).
        self.write_hook: Callable[[str, str, bool | None], bool] | None = None
        self._next_id = 1000
        for account in USERS.values():
            self.add_user(account)

    def close(self) -> None:
        self.released.set()
        if self._owns_root:
            shutil.rmtree(self.root, ignore_errors=True)

    def writing(self, kind: str, phase: str, applied: bool | None = None) -> bool:
        """Tell the test's ``write_hook`` a write reached ``phase``; True: drop it unapplied (phase "before")."""
        hook = self.write_hook
        return bool(hook(kind, phase, applied)) if hook is not None else False

    # -- identities -----------------------------------------------------

    def new_id(self) -> int:
        with self.lock:
            self._next_id += 1
            return self._next_id

    def add_user(self, account: dict[str, Any]) -> dict[str, Any]:
        """Register an account in the simple-user shape; the first one registered under a login wins."""
        self.users.setdefault(account["login"], copy.deepcopy(account))
        return self.users[account["login"]]

    def user(self, login: str) -> dict[str, Any]:
        if login not in self.users:
            template = fixture("rest/simple-user.json")
            template.update(
                {
                    "login": login,
                    "id": self.new_id(),
                    "node_id": f"U_sim{login}",
                    "type": "User",
                    "url": f"{API}/users/{login}",
                    "html_url": f"{WEB}/{login}",
                }
            )
            self.users[login] = template
        return self.users[login]

    def add_token(
        self,
        token: str,
        login: str,
        *,
        permissions: dict[str, str] | None = None,
        scopes: list[str] | None = None,
    ) -> None:
        """A token of ``login``: fine-grained (``permissions``, e.g. ``{"pull_requests": "read"}``), classic
        (``scopes``, e.g. ``["repo"]``), or neither (a token that may do anything, the scenarios' default)."""
        if permissions is not None and scopes is not None:
            raise ValueError("a token is fine-grained (permissions) or classic (scopes), not both")
        self.user(login)
        self.tokens[token] = login
        if permissions is not None:
            self.token_permissions[token] = dict(permissions)
        if scopes is not None:
            self.token_scopes[token] = list(scopes)

    def token_user(self, token: str | None) -> dict[str, Any] | None:
        login = self.tokens.get(token or "")
        return None if login is None else self.users[login]

    # -- rate limits (primary, per token, in simulated time) --------------

    def rate_window(self, token: str, resource: str = "core") -> RateWindow:
        now = self.clock.epoch_seconds()
        window = self.rate_windows.get((token, resource))
        if window is None or now >= window.reset:
            window = RateWindow(RATE_LIMIT, 0, now + int(RATE_WINDOW.total_seconds()))
            self.rate_windows[(token, resource)] = window
        return window

    def charge(self, token: str, resource: str, points: int, repository: str | None = None) -> RateWindow:
        """Spend ``points`` of ``token``'s current window for ``resource``; count them in ``rate_spent(_on)``."""
        window = self.rate_window(token, resource)
        window.used += points
        self.rate_spent[(token, resource)] = self.rate_spent.get((token, resource), 0) + points
        if repository is not None:
            key = (repository.lower(), resource)
            self.rate_spent_on[key] = self.rate_spent_on.get(key, 0) + points
        return window

    def admit(self, token: str, resource: str, *, content: bool) -> int:
        """Count one request against ``token``'s secondary limits: 0, or the seconds to wait (then not counted)."""
        limits = self.secondary_limits
        if limits is None:
            self.content_generated[token] = self.content_generated.get(token, 0) + int(content)
            return 0
        request = Admitted(self.clock.epoch_seconds(), resource, content)
        minute = _pruned(self._last_minute.setdefault(token, deque()), request.at - 60)
        hour = _pruned(self._content_last_hour.setdefault(token, deque()), request.at - 3600)
        windows: list[tuple[deque[Admitted], int, int, Callable[[Admitted], int]]] = [
            (minute, 60, limits.content_per_minute, lambda entry: int(entry.content)),
            (hour, 3600, limits.content_per_hour, lambda entry: int(entry.content)),
            (minute, 60, limits.rest_points_per_minute, lambda entry: entry.points("core")),
            (minute, 60, limits.graphql_points_per_minute, lambda entry: entry.points("graphql")),
        ]
        wait = max(
            _seconds_until_under(admitted, request, window, limit, measure)
            for admitted, window, limit, measure in windows
        )
        if wait == 0:
            minute.append(request)
            if content:
                hour.append(request)
                self.content_generated[token] = self.content_generated.get(token, 0) + 1
        return wait

    # -- events -----------------------------------------------------------

    def subscribe(self, listener: Callable[[str, dict[str, Any]], None]) -> None:
        """``listener(kind, event)`` after each write; kinds are listed in simulator/README.md."""
        self._listeners.append(listener)

    def emit(self, kind: str, **event: Any) -> None:
        for listener in list(self._listeners):
            listener(kind, event)

    # -- repositories -----------------------------------------------------

    def create_repository(
        self,
        owner: str,
        name: str,
        *,
        default_branch: str = "main",
        files: dict[str, str] | None = None,
        copy_of: Path | None = None,
    ) -> Repository:
        """A repository with a bare git repository: one initial commit, or a copy of the bare repository ``copy_of``."""
        key = f"{owner}/{name}".lower()
        with self.lock:
            if key in self.repositories:
                raise ValueError(f"repository {owner}/{name} exists")
            self.user(owner)
            path = self.root / "git" / owner / f"{name}.git"
            if copy_of is not None:
                shutil.copytree(copy_of, path)
                bare = BareRepository(path)
            else:
                bare = BareRepository.create(path, default_branch)
                bare.commit(default_branch, files or {"README.md": f"# {name}\n"}, "Initial commit", self.clock.now)
            repository = Repository(owner, name, self.new_id(), bare, default_branch)
            self.repositories[key] = repository
            return repository

    def repository(self, owner: str, name: str) -> Repository:
        found = self.repositories.get(f"{owner}/{name}".lower())
        if found is None:
            raise ApiError(404, "Not Found")
        return found

    def role(self, repository: Repository, login: str) -> str:
        """``login``'s role on ``repository``: named, else admin for its owner and admins, else the default."""
        if login in repository.roles:
            return repository.roles[login]
        return "admin" if login == repository.owner or login in repository.admins else repository.default_role

    @staticmethod
    def drafts_possible(repository: Repository) -> bool:
        """GitHub has drafts in every public repository, and in private ones on Team and Enterprise plans."""
        return not repository.private or repository.owner_plan in DRAFT_PLANS

    def bare_repository(self, owner: str, name: str) -> Path:
        """The bare git repository behind ``owner/name`` (what git smart-HTTP serves)."""
        return self.repository(owner, name).bare.path

    def commit(self, owner: str, name: str, branch: str, files: dict[str, str], message: str = "Change") -> str:
        """Commit files on a branch (creating it from the default branch if new); return the SHA."""
        repository = self.repository(owner, name)
        with self.lock:
            parents = None
            if repository.tip(branch) is None:
                start = repository.tip(repository.default_branch)
                parents = [start] if start else []
            return repository.bare.commit(branch, files, message, self.clock.now, parents=parents)

    # -- payload builders (GitHub's shapes from the recorded examples) -------

    def repository_payload(self, repository: Repository) -> dict[str, Any]:
        template = fixture("rest/pull-request.json")["base"]["repo"]
        full = repository.full_name
        replacements = {"octocat/Hello-World": full, "octocat": repository.owner, "Hello-World": repository.name}
        text = json.dumps(template)
        for old, new in replacements.items():
            text = text.replace(old, new)
        payload = json.loads(text)
        payload.update(
            {
                "id": repository.id,
                "node_id": f"R_sim{repository.id}",
                "name": repository.name,
                "full_name": full,
                "owner": copy.deepcopy(self.user(repository.owner)),
                "private": repository.private,
                "default_branch": repository.default_branch,
            }
        )
        return payload

    def _pull_side(self, repository: Repository, branch: str, sha: str) -> dict[str, Any]:
        side = copy.deepcopy(fixture("rest/pull-request.json")["head"])
        side.update(
            {
                "label": f"{repository.owner}:{branch}",
                "ref": branch,
                "sha": sha,
                "user": copy.deepcopy(self.user(repository.owner)),
                "repo": self.repository_payload(repository),
            }
        )
        return side

    def open_pull_request(
        self,
        owner: str,
        name: str,
        *,
        head: str,
        base: str | None = None,
        title: str = "Change",
        body: str | None = None,
        draft: bool = False,
        author: str | None = None,
        number: int | None = None,
        unique: bool = True,
    ) -> dict[str, Any]:
        """Open a pull request from branch ``head`` (same repository) into ``base``; emits ``pull_request.opened``.

        ``unique=False`` allows a second open pull request for the same head and
        base, which GitHub refuses: a state only recorded history can hold.
        """
        repository = self.repository(owner, name)
        with self.lock:
            base = base or repository.default_branch
            head_sha, base_sha = repository.tip(head), repository.tip(base)
            if head_sha is None or base_sha is None:
                raise ApiError(422, "Validation Failed")
            if unique and any(
                p["state"] == "open" and p["head"]["ref"] == head and p["base"]["ref"] == base
                for p in repository.pulls.values()
            ):
                raise ApiError(422, f"A pull request already exists for {owner}:{head}.")
            if number is None:
                number = repository.next_number
            repository.next_number = max(repository.next_number, number + 1)
            now = self.clock.iso()
            pull = copy.deepcopy(fixture("rest/pull-request.json"))
            api, html = f"{API}/repos/{repository.full_name}", f"{WEB}/{repository.full_name}"
            pull_id = self.new_id()
            pull.update(
                {
                    "url": f"{api}/pulls/{number}",
                    "id": pull_id,
                    "node_id": f"PR_sim{pull_id}",
                    "html_url": f"{html}/pull/{number}",
                    "diff_url": f"{html}/pull/{number}.diff",
                    "patch_url": f"{html}/pull/{number}.patch",
                    "issue_url": f"{api}/issues/{number}",
                    "commits_url": f"{api}/pulls/{number}/commits",
                    "review_comments_url": f"{api}/pulls/{number}/comments",
                    "review_comment_url": f"{api}/pulls/comments{{/number}}",
                    "comments_url": f"{api}/issues/{number}/comments",
                    "statuses_url": f"{api}/statuses/{head_sha}",
                    "number": number,
                    "state": "open",
                    "locked": False,
                    "title": title,
                    "body": body,
                    "user": copy.deepcopy(self.user(author or repository.owner)),
                    "labels": [],
                    "milestone": None,
                    "active_lock_reason": None,
                    "created_at": now,
                    "updated_at": now,
                    "closed_at": None,
                    "merged_at": None,
                    "merge_commit_sha": None,
                    "assignee": None,
                    "assignees": [],
                    "requested_reviewers": [],
                    "requested_teams": [],
                    "head": self._pull_side(repository, head, head_sha),
                    "base": self._pull_side(repository, base, base_sha),
                    "author_association": "OWNER",
                    "auto_merge": None,
                    "draft": draft,
                    "merged": False,
                    "mergeable": True,
                    "rebaseable": True,
                    "mergeable_state": "draft" if draft else "clean",
                    "merged_by": None,
                    "comments": 0,
                    "review_comments": 0,
                    "maintainer_can_modify": False,
                    "commits": 1,
                    "additions": 1,
                    "deletions": 0,
                    "changed_files": 1,
                }
            )
            pull["_links"] = {
                key: {"href": value}
                for key, value in {
                    "self": pull["url"],
                    "html": pull["html_url"],
                    "issue": pull["issue_url"],
                    "comments": pull["comments_url"],
                    "review_comments": pull["review_comments_url"],
                    "review_comment": pull["review_comment_url"],
                    "commits": pull["commits_url"],
                    "statuses": pull["statuses_url"],
                }.items()
            }
            repository.pulls[number] = pull
            for collection in (
                repository.issue_comments,
                repository.issue_reactions,
                repository.reviews,
                repository.review_comments,
                repository.threads,
            ):
                collection.setdefault(number, [])
        self.emit("pull_request.opened", repository=repository, number=number, pull=pull)
        return pull

    def pull_request(self, owner: str, name: str, number: int) -> dict[str, Any]:
        """The pull request payload, its SHAs refreshed from the bare repository."""
        repository = self.repository(owner, name)
        pull = repository.pulls.get(number)
        if pull is None:
            raise ApiError(404, "Not Found")
        self.refresh_pull(repository, pull)
        # GitHub states both counts in the pull request; they move with every comment.
        pull["comments"] = len(repository.issue_comments.get(number, []))
        pull["review_comments"] = len(repository.review_comments.get(number, []))
        return pull

    def refresh_pull(self, repository: Repository, pull: dict[str, Any]) -> None:
        """An open pull request's head and base follow their branch tips (a closed one keeps the last)."""
        if pull["state"] != "open":
            return
        head_repo = pull["head"].get("repo")
        if head_repo is not None and head_repo.get("full_name", "").lower() == repository.full_name.lower():
            tip = repository.tip(pull["head"]["ref"])
            if tip is not None and tip != pull["head"]["sha"]:
                pull["head"]["sha"] = tip
                pull["statuses_url"] = f"{API}/repos/{repository.full_name}/statuses/{tip}"
                pull["_links"]["statuses"] = {"href": pull["statuses_url"]}
                self._follow_head(repository, pull["number"], tip)
                self.emit("pull_request.synchronize", repository=repository, number=pull["number"], pull=pull)
        base_tip = repository.tip(pull["base"]["ref"])
        if base_tip is not None:
            pull["base"]["sha"] = base_tip

    def _follow_head(self, repository: Repository, number: int, tip: str) -> None:
        """After a push: review comments name the new head (``original_commit_id`` keeps the reviewed one),
        and a thread whose file changed since the commit it was written on becomes outdated."""
        for comment in repository.review_comments.get(number, []):
            comment["commit_id"] = tip
        for thread in repository.threads.get(number, []):
            commit = thread.get("commit")
            if commit and not thread["isOutdated"] and repository.bare.path_changed(commit, tip, thread["path"]):
                thread["isOutdated"] = True

    # -- merge state (GitHub's own verdict, judged from the repository's facts) ----

    def read_pull_request(self, owner: str, name: str, number: int) -> dict[str, Any]:
        """``pull_request`` as an API read answers it: with the merge state GitHub shows now."""
        pull = self.pull_request(owner, name, number)
        self.read_merge_state(self.repository(owner, name), pull)
        return pull

    def read_merge_state(self, repository: Repository, pull: dict[str, Any]) -> None:
        """One API read of ``pull``'s merge state: "not computed yet" while GitHub computes, else the verdict."""
        if pull["state"] != "open":
            return  # closing or merging already set mergeable null and "unknown"
        key = (repository.full_name.lower(), pull["number"])
        with self.lock:
            basis = (pull["head"]["sha"], pull["base"]["ref"], pull["base"]["sha"])
            if self._merge_basis.get(key) != basis:  # opened, pushed, retargeted or the base moved
                self._merge_basis[key] = basis
                self._merge_computing[key] = self.merge_computing_reads
            if self._merge_computing.get(key, 0) > 0:
                self._merge_computing[key] -= 1
                pull.update({"mergeable": None, "rebaseable": None, "mergeable_state": "unknown"})
                return
            pull.update(self.judge_merge(repository, pull))

    def compute_merge_state_again(self, owner: str, name: str, number: int, reads: int = 1) -> None:
        """GitHub starts computing PR ``number``'s merge state again: its next ``reads`` reads say so."""
        repository = self.repository(owner, name)
        pull = self.pull_request(owner, name, number)
        with self.lock:
            key = (repository.full_name.lower(), number)
            self._merge_basis[key] = (pull["head"]["sha"], pull["base"]["ref"], pull["base"]["sha"])
            self._merge_computing[key] = reads

    def judge_merge(self, repository: Repository, pull: dict[str, Any]) -> dict[str, Any]:
        """GitHub's computed verdict on an open pull request: ``mergeable``, ``rebaseable``, ``mergeable_state``.

        In this order: conflicts with the base (``dirty``), a draft (``draft``),
        a required check failing, pending or not reported on the head
        (``blocked``), a head that does not contain the base tip while the
        required checks are strict (``behind``), any other check not passing
        (``unstable``), else ``clean``. Commits a scenario only names (not held
        by the repository) have no conflicts and are never behind. Reviews are
        not judged here: a scenario states ``reviewDecision`` in
        ``Repository.merge_verdicts``.
        """
        head, base = pull["head"]["sha"], pull["base"]["sha"]
        facts_key = (str(repository.bare.path), base, head)
        if facts_key not in self._merge_facts:
            self._merge_facts[facts_key] = repository.bare.merge_facts(base, head)
        conflicts, behind = self._merge_facts[facts_key] or (False, False)
        required, others = head_check_outcomes(repository, head, required_checks(repository, pull["base"]["ref"]))
        if conflicts:
            state = "dirty"
        elif pull["draft"]:
            state = "draft"
        elif any(outcome != "pass" for outcome in required):
            state = "blocked"
        elif behind and strict_required_checks(repository, pull["base"]["ref"]):
            state = "behind"
        elif any(outcome != "pass" for outcome in others):
            state = "unstable"
        else:
            state = "clean"
        return {"mergeable": not conflicts, "rebaseable": not conflicts, "mergeable_state": state}

    def notice_push(self, owner: str, name: str) -> None:
        """Bring every open pull request of a repository up to its branch tips (call after a git push)."""
        repository = self.repository(owner, name)
        with self.lock:
            for pull in list(repository.pulls.values()):
                self.refresh_pull(repository, pull)

    def git_repository_path(self, owner: str, name: str) -> Path | None:
        """``bare_repository`` for git smart-HTTP resolvers: None for an unknown repository."""
        found = self.repositories.get(f"{owner}/{name}".lower())
        return None if found is None else found.bare.path

    def _touch_pull(self, pull: dict[str, Any]) -> None:
        pull["updated_at"] = self.clock.iso()

    def update_pull_request(self, owner: str, name: str, number: int, changes: dict[str, Any]) -> dict[str, Any]:
        repository = self.repository(owner, name)
        with self.lock:
            pull = self.pull_request(owner, name, number)
            if "base" in changes and repository.tip(changes["base"]) is None:
                raise ApiError(422, "Validation Failed")
            for key in ("title", "body"):
                if key in changes:
                    pull[key] = changes[key]
            if "base" in changes:
                pull["base"] = self._pull_side(repository, changes["base"], repository.tip(changes["base"]) or "")
            state = changes.get("state")
            if state == "closed" and pull["state"] == "open":
                pull.update(
                    {"state": "closed", "closed_at": self.clock.iso(), "mergeable": None, "mergeable_state": "unknown"}
                )
            elif state == "open" and pull["state"] == "closed" and not pull["merged"]:
                pull.update({"state": "open", "closed_at": None, "mergeable": True, "mergeable_state": "clean"})
                self.refresh_pull(repository, pull)
            self._touch_pull(pull)
        self.emit("pull_request.edited", repository=repository, number=number, pull=pull)
        return pull

    def mark_ready_for_review(self, owner: str, name: str, number: int) -> dict[str, Any]:
        repository = self.repository(owner, name)
        with self.lock:
            pull = self.pull_request(owner, name, number)
            was_draft = pull["draft"]
            if was_draft:
                pull.update({"draft": False, "mergeable_state": "clean"})
                self._touch_pull(pull)
        # Every call is reported (a second mark is a write to count); ``was_draft`` tells whether a draft
        # really became ready, which is when GitHub sends the event and Codex's auto-review starts.
        self.emit("pull_request.ready_for_review", repository=repository, number=number, pull=pull, was_draft=was_draft)
        return pull

    def merge_pull_request(
        self,
        owner: str,
        name: str,
        number: int,
        *,
        sha: str | None = None,
        method: str = "merge",
        title: str | None = None,
        message: str | None = None,
    ) -> dict[str, Any]:
        """Merge like the merge button: 405 unless open and mergeable, 409 when ``sha`` is not the head."""
        repository = self.repository(owner, name)
        with self.lock:
            pull = self.pull_request(owner, name, number)
            if pull["state"] != "open" or pull["draft"]:
                raise ApiError(405, "Pull Request is not mergeable")
            if sha is not None and sha != pull["head"]["sha"]:
                raise ApiError(409, "Head branch was modified. Review and try the merge again.")
            verdict = self.judge_merge(repository, pull)["mergeable_state"]
            if verdict in _NOT_MERGEABLE:
                raise ApiError(405, _NOT_MERGEABLE[verdict])
            headline = title or (
                f"Merge pull request #{number} from {pull['head']['label'].replace(':', '/')}"
                if method == "merge"
                else f"{pull['title']} (#{number})"
            )
            merged_sha = repository.bare.merge(
                pull["base"]["ref"],
                pull["head"]["sha"],
                f"{headline}\n\n{message or ''}".rstrip() + "\n",
                self.clock.now,
                method,
            )
            now = self.clock.iso()
            pull.update(
                {
                    "state": "closed",
                    "merged": True,
                    "merged_at": now,
                    "closed_at": now,
                    "merge_commit_sha": merged_sha,
                    "merged_by": copy.deepcopy(self.user(repository.owner)),
                    "mergeable": None,
                    "mergeable_state": "unknown",
                }
            )
            pull["base"]["sha"] = merged_sha
            self._touch_pull(pull)
        self.emit("pull_request.merged", repository=repository, number=number, pull=pull)
        return {"sha": merged_sha, "merged": True, "message": "Pull Request successfully merged"}

    # -- issue comments and reactions --------------------------------------

    def _issue(self, repository: Repository, number: int) -> list[dict[str, Any]]:
        if number not in repository.pulls:
            raise ApiError(404, "Not Found")
        return repository.issue_comments.setdefault(number, [])

    def add_issue_comment(
        self,
        owner: str,
        name: str,
        number: int,
        user: dict[str, Any] | str,
        body: str,
        *,
        created_at: str | None = None,
        updated_at: str | None = None,
    ) -> dict[str, Any]:
        """Post an issue comment as ``user`` (login or simple-user dict); emits ``issue_comment.created``."""
        repository = self.repository(owner, name)
        account = self.user(user) if isinstance(user, str) else user
        with self.lock:
            comments = self._issue(repository, number)
            comment = copy.deepcopy(fixture("rest/issue-comment.json"))
            comment_id = self.new_id()
            created = created_at or self.clock.iso()
            comment.update(
                {
                    "id": comment_id,
                    "node_id": f"IC_sim{comment_id}",
                    "body": body,
                    "user": copy.deepcopy(account),
                    "created_at": created,
                    "updated_at": updated_at or created,
                    "url": f"{API}/repos/{repository.full_name}/issues/comments/{comment_id}",
                    "html_url": f"{WEB}/{repository.full_name}/pull/{number}#issuecomment-{comment_id}",
                    "issue_url": f"{API}/repos/{repository.full_name}/issues/{number}",
                    "author_association": "OWNER" if account["login"] == repository.owner else "NONE",
                }
            )
            comments.append(comment)
            repository.pulls[number]["comments"] = len(comments)
        self.emit("issue_comment.created", repository=repository, number=number, comment=comment)
        return comment

    def find_issue_comment(self, repository: Repository, comment_id: int) -> tuple[int, dict[str, Any]]:
        for number, comments in repository.issue_comments.items():
            for comment in comments:
                if comment["id"] == comment_id:
                    return number, comment
        raise ApiError(404, "Not Found")

    def edit_issue_comment(self, owner: str, name: str, comment_id: int, body: str) -> dict[str, Any]:
        repository = self.repository(owner, name)
        with self.lock:
            number, comment = self.find_issue_comment(repository, comment_id)
            comment.update({"body": body, "updated_at": self.clock.iso()})
        self.emit("issue_comment.edited", repository=repository, number=number, comment=comment)
        return comment

    def delete_issue_comment(self, owner: str, name: str, comment_id: int) -> None:
        repository = self.repository(owner, name)
        with self.lock:
            number, comment = self.find_issue_comment(repository, comment_id)
            repository.issue_comments[number].remove(comment)
            repository.comment_reactions.pop(comment_id, None)
            repository.pulls[number]["comments"] = len(repository.issue_comments[number])
        self.emit("issue_comment.deleted", repository=repository, number=number, comment=comment)

    def _reaction(self, user: dict[str, Any], content: str, created_at: str | None) -> dict[str, Any]:
        reaction = copy.deepcopy(fixture("rest/reaction.json"))
        reaction_id = self.new_id()
        reaction.update(
            {
                "id": reaction_id,
                "node_id": f"REA_sim{reaction_id}",
                "user": copy.deepcopy(user),
                "content": content,
                "created_at": created_at or self.clock.iso(),
            }
        )
        return reaction

    def add_reaction(
        self,
        owner: str,
        name: str,
        number: int,
        user: dict[str, Any] | str,
        content: str,
        *,
        created_at: str | None = None,
        comment_id: int | None = None,
    ) -> tuple[dict[str, Any], bool]:
        """React on the pull request (or on one of its issue comments); returns (reaction, created).

        Like GitHub, a second identical reaction by the same account returns the first.
        """
        repository = self.repository(owner, name)
        account = self.user(user) if isinstance(user, str) else user
        with self.lock:
            if comment_id is None:
                self._issue(repository, number)
                reactions = repository.issue_reactions.setdefault(number, [])
            else:
                self.find_issue_comment(repository, comment_id)
                reactions = repository.comment_reactions.setdefault(comment_id, [])
            for existing in reactions:
                if existing["user"]["id"] == account["id"] and existing["content"] == content:
                    return existing, False
            reaction = self._reaction(account, content, created_at)
            reactions.append(reaction)
        self.emit("reaction.created", repository=repository, number=number, reaction=reaction, comment_id=comment_id)
        return reaction, True

    def remove_reactions(self, owner: str, name: str, number: int, user_id: int, content: str | None = None) -> int:
        repository = self.repository(owner, name)
        with self.lock:
            reactions = repository.issue_reactions.setdefault(number, [])
            keep = [r for r in reactions if not (r["user"]["id"] == user_id and content in (None, r["content"]))]
            removed = len(reactions) - len(keep)
            reactions[:] = keep
            return removed

    # -- reviews, review comments and threads -------------------------------

    def add_review(
        self,
        owner: str,
        name: str,
        number: int,
        user: dict[str, Any] | str,
        body: str,
        state: str,
        *,
        commit_id: str | None = None,
        submitted_at: str | None = None,
        comments: Sequence[dict[str, Any]] = (),
    ) -> dict[str, Any]:
        """Submit a review; each of ``comments`` ({path, line, body}) opens a review thread."""
        repository = self.repository(owner, name)
        account = self.user(user) if isinstance(user, str) else user
        with self.lock:
            pull = self.pull_request(owner, name, number)
            commit_id = commit_id or pull["head"]["sha"]
            review = copy.deepcopy(fixture("rest/pull-request-review.json"))
            review_id = self.new_id()
            review.update(
                {
                    "id": review_id,
                    "node_id": f"PRR_sim{review_id}",
                    "user": copy.deepcopy(account),
                    "body": body,
                    "state": state,
                    "commit_id": commit_id,
                    "submitted_at": submitted_at or self.clock.iso(),
                    "html_url": f"{WEB}/{repository.full_name}/pull/{number}#pullrequestreview-{review_id}",
                    "pull_request_url": pull["url"],
                    "author_association": "OWNER" if account["login"] == repository.owner else "NONE",
                }
            )
            review["_links"] = {"html": {"href": review["html_url"]}, "pull_request": {"href": pull["url"]}}
            repository.reviews.setdefault(number, []).append(review)
            for item in comments:
                self.add_review_thread(
                    owner,
                    name,
                    number,
                    account,
                    item["body"],
                    path=item.get("path", "README.md"),
                    line=item.get("line", 1),
                    commit_id=commit_id,
                    review_id=review_id,
                    created_at=review["submitted_at"],
                )
        self.emit("review.submitted", repository=repository, number=number, review=review)
        return review

    def _review_comment(
        self,
        repository: Repository,
        number: int,
        account: dict[str, Any],
        body: str,
        *,
        path: str,
        line: int | None,
        commit_id: str,
        original_commit_id: str,
        created_at: str | None,
        review_id: int | None,
        in_reply_to: int | None,
    ) -> dict[str, Any]:
        comment = copy.deepcopy(fixture("rest/pull-request-review-comment.json"))
        comment_id = self.new_id()
        created = created_at or self.clock.iso()
        api = f"{API}/repos/{repository.full_name}"
        comment.update(
            {
                "id": comment_id,
                "node_id": f"PRRC_sim{comment_id}",
                "user": copy.deepcopy(account),
                "body": body,
                "commit_id": commit_id,
                "original_commit_id": original_commit_id,
                "created_at": created,
                "updated_at": created,
                "path": path,
                "line": line,
                "original_line": line,
                "position": line,
                "original_position": line,
                "start_line": None,
                "original_start_line": None,
                "start_side": None,
                "side": "RIGHT",
                "pull_request_review_id": review_id or 0,
                "in_reply_to_id": in_reply_to,
                "url": f"{api}/pulls/comments/{comment_id}",
                "pull_request_url": f"{api}/pulls/{number}",
                "html_url": f"{WEB}/{repository.full_name}/pull/{number}#discussion_r{comment_id}",
                "author_association": "OWNER" if account["login"] == repository.owner else "NONE",
            }
        )
        if in_reply_to is None:
            comment.pop("in_reply_to_id")
        comment["_links"] = {
            "self": {"href": comment["url"]},
            "html": {"href": comment["html_url"]},
            "pull_request": {"href": comment["pull_request_url"]},
        }
        return comment

    def add_review_thread(
        self,
        owner: str,
        name: str,
        number: int,
        user: dict[str, Any] | str,
        body: str,
        *,
        path: str = "README.md",
        line: int | None = 1,
        commit_id: str | None = None,
        review_id: int | None = None,
        created_at: str | None = None,
    ) -> dict[str, Any]:
        """A review comment (REST) that roots a review thread (GraphQL); returns the thread."""
        repository = self.repository(owner, name)
        account = self.user(user) if isinstance(user, str) else user
        with self.lock:
            pull = self.pull_request(owner, name, number)
            commit = commit_id or pull["head"]["sha"]
            comment = self._review_comment(
                repository,
                number,
                account,
                body,
                path=path,
                line=line,
                commit_id=commit,
                original_commit_id=commit,
                created_at=created_at,
                review_id=review_id,
                in_reply_to=None,
            )
            repository.review_comments.setdefault(number, []).append(comment)
            thread = {
                "id": f"PRRT_sim{comment['id']}",
                "isResolved": False,
                "isOutdated": False,
                "path": path,
                "line": line,
                "originalLine": line,
                "startLine": None,
                "diffSide": "RIGHT",
                "commit": commit,
                "resolvedBy": None,
                "comments": [{"rest": comment}],
            }
            repository.threads.setdefault(number, []).append(thread)
        self.emit("review_thread.created", repository=repository, number=number, thread=thread)
        return thread

    def reply_to_review_comment(
        self, owner: str, name: str, number: int, comment_id: int, user: dict[str, Any] | str, body: str
    ) -> dict[str, Any]:
        """Reply in the thread of review comment ``comment_id`` (GitHub replies to the thread's root)."""
        repository = self.repository(owner, name)
        account = self.user(user) if isinstance(user, str) else user
        with self.lock:
            thread = self.thread_of_comment(repository, number, comment_id)
            root = thread["comments"][0]["rest"]
            pull = self.pull_request(owner, name, number)
            comment = self._review_comment(
                repository,
                number,
                account,
                body,
                path=root["path"],
                line=root["line"],
                commit_id=pull["head"]["sha"],
                original_commit_id=root["original_commit_id"],
                created_at=None,
                review_id=None,
                in_reply_to=root["id"],
            )
            repository.review_comments[number].append(comment)
            thread["comments"].append({"rest": comment})
        self.emit("review_comment.replied", repository=repository, number=number, comment=comment, thread=thread)
        return comment

    def thread_of_comment(self, repository: Repository, number: int, comment_id: int) -> dict[str, Any]:
        for thread in repository.threads.get(number, []):
            if any(entry.get("rest", {}).get("id") == comment_id for entry in thread["comments"]):
                return thread
        raise ApiError(404, "Not Found")

    def find_thread(self, thread_id: str) -> tuple[Repository, int, dict[str, Any]] | None:
        for repository in self.repositories.values():
            for number, threads in repository.threads.items():
                for thread in threads:
                    if thread["id"] == thread_id:
                        return repository, number, thread
        return None

    def resolve_thread(self, thread_id: str, user: dict[str, Any], resolved: bool = True) -> dict[str, Any]:
        found = self.find_thread(thread_id)
        if found is None:
            raise ApiError(404, f"Could not resolve to a node with the global id of '{thread_id}'")
        repository, number, thread = found
        with self.lock:
            thread["isResolved"] = resolved
            thread["resolvedBy"] = copy.deepcopy(user) if resolved else None
        self.emit(
            "review_thread.resolved" if resolved else "review_thread.unresolved",
            repository=repository,
            number=number,
            thread=thread,
        )
        return thread

    # -- checks and statuses ---------------------------------------------

    def add_check_run(
        self,
        owner: str,
        name: str,
        head_sha: str,
        check_name: str,
        *,
        status: str = "completed",
        conclusion: str | None = "success",
        app_id: int | None = None,
    ) -> dict[str, Any]:
        repository = self.repository(owner, name)
        with self.lock:
            run, run_id, now = self._recorded("rest/check-run-paginated.json", "check_runs", "CR")
            run.update(
                {
                    "name": check_name,
                    "status": status,
                    "conclusion": conclusion if status == "completed" else None,
                    "head_sha": head_sha,
                    "started_at": now,
                    "completed_at": now if status == "completed" else None,
                    "url": f"{API}/repos/{repository.full_name}/check-runs/{run_id}",
                    "html_url": f"{WEB}/{repository.full_name}/runs/{run_id}",
                    "pull_requests": [],
                }
            )
            if app_id is not None:
                run["app"]["id"] = app_id  # the app the run comes from (15368 is GitHub Actions)
            repository.check_runs.append(run)
            return run

    def add_status(
        self,
        owner: str,
        name: str,
        sha: str,
        context: str,
        state: str,
        *,
        description: str | None = None,
        target_url: str | None = None,
    ) -> dict[str, Any]:
        repository = self.repository(owner, name)
        with self.lock:
            status, _, now = self._recorded("rest/combined-commit-status.json", "statuses", "SC")
            status.update(
                {
                    "context": context,
                    "state": state,
                    "description": description,
                    "target_url": target_url,
                    "created_at": now,
                    "updated_at": now,
                    "url": f"{API}/repos/{repository.full_name}/statuses/{sha}",
                }
            )
            statuses = repository.statuses.setdefault(sha, [])
            # The combined status keeps the latest status per context.
            statuses[:] = [s for s in statuses if s["context"] != context] + [status]
            return status

    def _recorded(self, example: str, items_key: str, node_prefix: str) -> tuple[dict[str, Any], int, str]:
        """The first item of a recorded list example with a new id and node id, its id, and the time to stamp."""
        record = copy.deepcopy(fixture(example)[items_key][0])
        record_id = self.new_id()
        record.update({"id": record_id, "node_id": f"{node_prefix}_sim{record_id}"})
        return record, record_id, self.clock.iso()

    def set_protection(self, owner: str, name: str, branch: str, rules: dict[str, Any] | int) -> None:
        """Branch protection rules (the GET .../protection shape), or 404 (unprotected) / 403 (unreadable)."""
        repository = self.repository(owner, name)
        repository.protection[branch] = rules if isinstance(rules, int) else conform_protection(rules)

    def set_rulesets(self, owner: str, name: str, branch: str, rules: list[dict[str, Any]] | int) -> None:
        """Active ruleset rules (the GET .../rules/branches/{branch} items), or 403/404 (unreadable)."""
        self.repository(owner, name).rulesets[branch] = rules

    # -- faults -------------------------------------------------------------

    def add_fault(self, method: str, pattern: str, times: int, kind: str, **options: Any) -> None:
        with self.lock:
            self.faults.append(Fault(method, re.compile(pattern), times, kind, **options))

    def fail(
        self,
        method: str,
        pattern: str,
        status: int,
        *,
        times: int = 1,
        headers: dict[str, str] | None = None,
        body: bytes | None = None,
        echo_authorization: bool = False,
    ) -> None:
        self.add_fault(
            method,
            pattern,
            times,
            "status",
            status=status,
            headers=headers or {},
            echo_authorization=echo_authorization,
            **({"body": body} if body is not None else {}),
        )

    def stall(self, method: str, pattern: str, seconds: float, *, times: int = 1) -> None:
        """Hold the answer for ``seconds`` of wall time: the one fault about a real client timeout."""
        self.add_fault(method, pattern, times, "stall", seconds=seconds)

    def truncate(self, method: str, pattern: str, *, times: int = 1) -> None:
        self.add_fault(method, pattern, times, "truncate")

    def corrupt(self, method: str, pattern: str, body: bytes, *, times: int = 1) -> None:
        self.add_fault(method, pattern, times, "corrupt", body=body)

    def graphql_errors(self, *, times: int = 1) -> None:
        self.add_fault("POST", r"^/graphql$", times, "graphql-errors")

    def drip(self, method: str, pattern: str, seconds: float, *, times: int = 1) -> None:
        """Send the normal answer one byte every ``seconds`` of wall time.

        Each read succeeds; the whole answer never ends in time.
        """
        self.add_fault(method, pattern, times, "drip", seconds=seconds)

    def gzip_bomb(self, method: str, pattern: str, decompressed_bytes: int, *, times: int = 1) -> None:
        """A gzip body that inflates to ``decompressed_bytes`` of JSON whitespace."""
        compressor = zlib.compressobj(
            1, zlib.DEFLATED, 16 + zlib.MAX_WBITS
        )  # fast: the point is the ratio, not the size
        block, chunks = b" " * (1 << 20), []
        for _ in range(decompressed_bytes // len(block)):
            chunks.append(compressor.compress(block))
        chunks.append(compressor.compress(b" " * (decompressed_bytes % len(block)) + b"{}"))
        chunks.append(compressor.flush())
        self.add_fault(method, pattern, times, "gzip-bomb", body=b"".join(chunks))

    def echo(
        self,
        method: str,
        pattern: str,
        edit: Callable[[Any, str], None] = lambda payload, authorization: None,
        *,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        """Echo the request's Authorization header into the answer: ``edit(payload, authorization)``
        changes the JSON payload in place; ``{authorization}`` in a header value is replaced by it."""
        self.add_fault(method, pattern, times, "echo", edit=edit, headers=headers or {})

    def after(self, method: str, pattern: str, action: Callable[[], None], *, times: int = 1) -> None:
        """Run ``action`` right after answering a matching request (a change between two pages)."""
        self.add_fault(method, pattern, times, "after", action=action)

    def take_fault(self, method: str, target: str) -> Fault | None:
        with self.lock:
            for fault in self.faults:
                if fault.times > 0 and fault.method == method and fault.pattern.search(target):
                    fault.times -= 1
                    return fault
        return None

    def requests_to(self, pattern: str) -> list[tuple[str, str, int]]:
        return [entry for entry in self.log if re.search(pattern, entry[1])]


def required_checks(repository: Repository, branch: str) -> list[tuple[str, int | None]]:
    """(context, app id or None for any source) that protection and rulesets require."""
    required: list[tuple[str, int | None]] = []
    rules = repository.branch_protection(branch)
    checks = rules.get("required_status_checks") if isinstance(rules, dict) else None
    if isinstance(checks, dict):
        # "checks" names the app that must provide each context; "contexts" only repeats the names.
        for check in checks.get("checks") or []:
            required.append((check["context"], None if check.get("app_id") in (None, -1) else check["app_id"]))
    ruleset_rules = repository.branch_rules(branch)
    for rule in ruleset_rules if isinstance(ruleset_rules, list) else []:
        if rule.get("type") == "required_status_checks":
            required += [(c["context"], c.get("integration_id")) for c in rule["parameters"]["required_status_checks"]]
    return required


def strict_required_checks(repository: Repository, branch: str) -> bool:
    """Whether a pull request must contain the base tip before it merges ("require branches to be up to date")."""
    rules = repository.branch_protection(branch)
    checks = rules.get("required_status_checks") if isinstance(rules, dict) else None
    if isinstance(checks, dict) and checks.get("strict") is True:
        return True
    ruleset_rules = repository.branch_rules(branch)
    return any(
        rule.get("type") == "required_status_checks"
        and rule.get("parameters", {}).get("strict_required_status_checks_policy") is True
        for rule in (ruleset_rules if isinstance(ruleset_rules, list) else [])
    )


def head_check_outcomes(
    repository: Repository, sha: str, required: list[tuple[str, int | None]]
) -> tuple[list[str], list[str]]:
    """("pass" | "pending" | "fail" | "missing" for each requirement, the outcome of every other check on ``sha``).

    The latest check run per name and app and the latest status per context count, as on GitHub.
    """
    runs: dict[tuple[str, int], dict[str, Any]] = {}
    for run in repository.check_runs:
        if run["head_sha"] == sha:
            runs[(run["name"], run["app"]["id"])] = run
    statuses = repository.statuses.get(sha, [])

    def run_outcome(run: dict[str, Any]) -> str:
        if run["status"] != "completed":
            return "pending"
        return "pass" if run["conclusion"] in ("success", "neutral", "skipped") else "fail"

    def status_outcome(status: dict[str, Any]) -> str:
        return {"success": "pass", "pending": "pending"}.get(status["state"], "fail")

    def meets(requirement: tuple[str, int | None], name: str, app_id: int | None) -> bool:
        return requirement[0] == name and requirement[1] in (None, app_id)

    worst = ("fail", "pending", "pass")
    required_outcomes = []
    for requirement in required:
        seen = [run_outcome(r) for (name, app), r in runs.items() if meets(requirement, name, app)]
        seen += [status_outcome(s) for s in statuses if meets(requirement, s["context"], None)]
        required_outcomes.append(min(seen, key=worst.index) if seen else "missing")
    others = [run_outcome(r) for (name, app), r in runs.items() if not any(meets(q, name, app) for q in required)]
    others += [status_outcome(s) for s in statuses if not any(meets(q, s["context"], None) for q in required)]
    return required_outcomes, others


def conform_protection(rules: dict[str, Any]) -> dict[str, Any]:
    """Branch protection as GitHub answers it today, from rules in the older documented example shape.

    The published example predates three required parts of the published
    schema: ``required_status_checks.checks`` (GitHub lists each context there
    too), a team's ``type``, and an app owner in the full simple-user shape.
    """
    rules = copy.deepcopy(rules)
    checks = rules.get("required_status_checks")
    if isinstance(checks, dict) and "checks" not in checks:
        checks["checks"] = [{"context": context, "app_id": None} for context in checks.get("contexts", [])]
    user_template = fixture("rest/simple-user.json")
    for holder_name in ("restrictions", "dismissal_restrictions", "bypass_pull_request_allowances"):
        for holder in (rules.get(holder_name), (rules.get("required_pull_request_reviews") or {}).get(holder_name)):
            if not isinstance(holder, dict):
                continue
            for team in holder.get("teams") or []:
                team.setdefault("type", "organization")
            for app in holder.get("apps") or []:
                owner = app.get("owner")
                if isinstance(owner, dict):
                    login = owner.get("login", "")
                    for key, value in user_template.items():
                        owner.setdefault(key, value.replace("octocat", login) if isinstance(value, str) else value)
    return rules


def sha_for(label: str) -> str:
    """A deterministic 40-hex name for a label (for commits a scenario only names)."""
    return hashlib.sha1(label.encode("utf-8")).hexdigest()


__all__ = [
    "ApiError",
    "Fault",
    "Repository",
    "World",
    "USERS",
    "fixture",
    "head_check_outcomes",
    "iso",
    "not_accessible",
    "required_checks",
    "sha_for",
    "strict_required_checks",
]
