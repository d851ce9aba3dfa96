"""The observer tests' scenario on the simulated GitHub: one repository, pull request #7.

``FakeGitHub`` is a thin layer over ``simulator.world.World`` served by
``simulator.app``: ``reset()`` builds a fresh World holding ``Octo-Org/widgets``
(a real bare git repository with ``main`` and ``feature/loop``) and PR #7 from
``feature/loop`` into ``main``, and the ``add_*`` helpers place comments,
reviews, threads, reactions, checks and statuses with explicit timestamps, as
recorded payload shapes (fixtures/github). The objects they return are the
stored payloads: changing one changes what the API serves.

Faults (``fail``, ``stall``, ``truncate``, ``corrupt``, ``graphql_errors``, and
the hostile ``drip``, ``gzip_bomb``, ``echo``, ``after``) are the World's, and
``secondary_rate_limit`` queues GitHub's secondary-limit answer (simulator/app.py);
``reset()`` retires the previous World, which ends every answer still stalled
or dripping for it without a trace in the new scenario.

Scenarios that only name commits (``force_push(sha_for("x"))``,
``refs[...] = sha``) pin the branch to that name in the bare repository; the
API reads it like any tip. For the full model (pull requests opened and
merged through the API, real pushes, the Codex reviewer) use the World
directly; see simulator/README.md.
"""

from __future__ import annotations

import atexit
import copy
import shutil
import tempfile
import threading
from collections.abc import Callable, Iterator, MutableMapping, Sequence
from datetime import timedelta
from pathlib import Path
from typing import Any

from simulator.app import Server, secondary_rate_limit
from simulator.clock import DEFAULT_EPOCH, SimClock, iso
from simulator.world import FIXTURES, USERS, Repository, World, fixture, sha_for

OWNER, REPO = "Octo-Org", "widgets"
REPOSITORY = f"{OWNER}/{REPO}"
PR_NUMBER = 7
TOKEN = "ghp_fakeTokenThatMustNeverLeak0123456789abcd"
RUN_ID = "0123456789abcdef0123456789abcdef"
OTHER_RUN_ID = "fedcba9876543210fedcba9876543210"
CODEX_BOT_ID = 199175422
_EPOCH = DEFAULT_EPOCH
BODIES = fixture("codex/bodies.json")

__all__ = [
    "BODIES",
    "CODEX_BOT_ID",
    "FIXTURES",
    "OTHER_RUN_ID",
    "PR_NUMBER",
    "REPOSITORY",
    "RUN_ID",
    "TOKEN",
    "USERS",
    "FakeGitHub",
    "at",
    "codex_body",
    "fixture",
    "graphql_author",
    "request_body",
    "sha_for",
]


def at(seconds: int) -> str:
    """An ISO-8601 UTC timestamp ``seconds`` after the scenario epoch."""
    return iso(_EPOCH + timedelta(seconds=seconds))


def codex_body(name: str, sha: str) -> str:
    return BODIES[name].replace("{sha7}", sha[:7]).replace("{sha10}", sha[:10])


def request_body(round_number: int, sha: str, run_id: str = RUN_ID) -> str:
    return f"@codex review\n<!-- github-codex-pr-loop-request run={run_id} round={round_number} sha={sha} -->"


def graphql_author(user: dict[str, Any] | None) -> dict[str, Any] | None:
    if user is None:
        return None
    login = user["login"].removesuffix("[bot]")  # GraphQL drops the [bot] suffix
    return {"login": login, "databaseId": user["id"]}


class _Refs(MutableMapping[tuple[str, str], str]):
    """``refs[(repository, branch)]``: branch tips of the bare repositories, keyed case-insensitively."""

    def __init__(self, world: World):
        self._world = world

    def _repository(self, key: tuple[str, str]) -> Repository:
        owner, _, name = key[0].partition("/")
        return self._world.repository(owner, name)

    def __getitem__(self, key: tuple[str, str]) -> str:
        tip = self._repository(key).tip(key[1])
        if tip is None:
            raise KeyError(key)
        return tip

    def __setitem__(self, key: tuple[str, str], sha: str) -> None:
        self._repository(key).bare.pin_ref(key[1], sha)

    def __delitem__(self, key: tuple[str, str]) -> None:
        repository = self._repository(key)
        if repository.tip(key[1]) is None:
            raise KeyError(key)
        repository.bare.delete_ref(key[1])

    def __iter__(self) -> Iterator[tuple[str, str]]:
        for name, repository in self._world.repositories.items():
            for branch in repository.bare.branches():
                yield (name, branch)

    def __len__(self) -> int:
        return sum(1 for _ in self)


def _world_attribute(name: str) -> property:
    """A FakeGitHub attribute that reads and writes the current World's."""
    return property(lambda self: getattr(self.world, name), lambda self, value: setattr(self.world, name, value))


class FakeGitHub:
    """The PR #7 scenario plus its server; ``reset()`` starts a new scenario."""

    _template: Path | None = None
    _template_lock = threading.Lock()

    def __init__(self) -> None:
        self.server: Server | None = None
        self._scratch = tempfile.TemporaryDirectory(prefix="fakegithub-")
        self._generation = 0
        self.reset()

    # -- lifecycle ------------------------------------------------------

    def start(self) -> FakeGitHub:
        self.server = Server(self.world).start()
        return self

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop()
            self.server = None
        self._scratch.cleanup()

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    @classmethod
    def _template_repository(cls) -> Path:
        """The scenario's bare repository, built once per process and copied by every reset."""
        with cls._template_lock:
            if cls._template is None:
                folder = Path(tempfile.mkdtemp(prefix="fakegithub-template-"))
                atexit.register(shutil.rmtree, folder, True)
                world = World(folder / "world", SimClock(_EPOCH - timedelta(days=1)))
                files = {"README.md": "# widgets\n", "src/retry.py": "RETRIES = None\n"}
                world.create_repository(OWNER, REPO, files=files)
                world.commit(OWNER, REPO, "feature/loop", {"src/retry.py": "RETRIES = 3\n"}, "Bound the retries")
                # One pack instead of a directory per object: far fewer files for every reset to copy.
                bare = world.repository(OWNER, REPO).bare
                bare.git("repack", "-a", "-d", "-q")
                cls._template = bare.path
            return cls._template

    world: World

    def reset(self) -> None:
        old: World | None = getattr(self, "world", None)
        self._generation += 1
        world = World(Path(self._scratch.name) / f"world-{self._generation}", SimClock(_EPOCH))
        world.add_token(TOKEN, USERS["loop_owner"]["login"])
        repository = world.create_repository(OWNER, REPO, copy_of=self._template_repository())
        # The token's account administers the repository, so protection rules are readable; a test of a
        # token without admin rights takes the role away (``repository.admins``).
        repository.admins.add(USERS["loop_owner"]["login"])
        world.open_pull_request(
            OWNER,
            REPO,
            head="feature/loop",
            base="main",
            title="Loop: tighten retries",
            body="Makes retries bounded.",
            number=PR_NUMBER,
            author=USERS["loop_owner"]["login"],
        )
        self.repository: Repository = repository
        self.world = world
        if self.server is not None:
            self.server.app.use(world)
        if old is not None:
            old.close()  # releases every handler still stalling or dripping for the previous scenario
            shutil.rmtree(old.root, ignore_errors=True)

    # -- scenario state, as the observer tests address it ----------------

    def new_id(self) -> int:
        return self.world.new_id()

    @property
    def token(self) -> str:
        return next(iter(self.world.tokens))

    @token.setter
    def token(self, value: str) -> None:
        self.world.tokens.clear()
        self.world.add_token(value, USERS["loop_owner"]["login"])

    @property
    def refs(self) -> _Refs:
        return _Refs(self.world)

    @property
    def pull(self) -> dict[str, Any]:
        return self.repository.pulls[PR_NUMBER]

    @property
    def head_sha(self) -> str:
        return self.world.pull_request(OWNER, REPO, PR_NUMBER)["head"]["sha"]

    @property
    def base_sha(self) -> str:
        return self.repository.tip("main") or ""

    @property
    def issue_comments(self) -> list[dict[str, Any]]:
        return self.repository.issue_comments[PR_NUMBER]

    @property
    def reviews(self) -> list[dict[str, Any]]:
        return self.repository.reviews[PR_NUMBER]

    @property
    def review_comments(self) -> list[dict[str, Any]]:
        return self.repository.review_comments[PR_NUMBER]

    @property
    def reactions(self) -> list[dict[str, Any]]:
        return self.repository.issue_reactions[PR_NUMBER]

    @property
    def threads(self) -> list[dict[str, Any]]:
        return self.repository.threads[PR_NUMBER]

    @property
    def check_runs(self) -> list[dict[str, Any]]:
        return self.repository.check_runs

    @property
    def protection(self) -> dict[str, Any] | int:
        return self.repository.branch_protection("main")

    @protection.setter
    def protection(self, rules: dict[str, Any] | int) -> None:
        self.world.set_protection(OWNER, REPO, "main", rules)

    @property
    def rulesets(self) -> list[dict[str, Any]] | int:
        """Active ruleset rules on ``main`` (GET .../rules/branches/main), or 403/404."""
        return self.repository.branch_rules("main")

    @rulesets.setter
    def rulesets(self, rules: list[dict[str, Any]] | int) -> None:
        self.world.set_rulesets(OWNER, REPO, "main", rules)

    @property
    def merge_state(self) -> dict[str, Any]:
        """GitHub's verdicts on PR #7 as GraphQL fields (``reviewDecision``, ``mergeStateStatus`` ...)."""
        return self.repository.merge_verdicts.setdefault(PR_NUMBER, {})

    @property
    def log(self) -> list[tuple[str, str, int]]:
        return self.world.log

    @property
    def rate_used(self) -> int:
        return self.world.rate_window(self.token).used

    @property
    def rate_reset(self) -> int:
        return self.world.rate_window(self.token).reset

    link_host = _world_attribute("link_host")
    check_runs_total_override = _world_attribute("check_runs_total_override")
    rollup_total_override = _world_attribute("rollup_total_override")
    thread_page_drops_cursor = _world_attribute("thread_page_drops_cursor")

    # -- scenario builders ---------------------------------------------------

    def add_issue_comment(
        self, user: dict[str, Any], body: str, created_at: str, updated_at: str | None = None
    ) -> dict[str, Any]:
        return self.world.add_issue_comment(
            OWNER, REPO, PR_NUMBER, user, body, created_at=created_at, updated_at=updated_at
        )

    def add_request(
        self, round_number: int, created_at: str, sha: str | None = None, run_id: str = RUN_ID
    ) -> dict[str, Any]:
        return self.add_issue_comment(
            USERS["loop_owner"], request_body(round_number, sha or self.head_sha, run_id), created_at
        )

    def add_review(
        self, user: dict[str, Any], body: str, state: str, commit_id: str, submitted_at: str
    ) -> dict[str, Any]:
        return self.world.add_review(
            OWNER, REPO, PR_NUMBER, user, body, state, commit_id=commit_id, submitted_at=submitted_at
        )

    def add_review_comment(
        self,
        user: dict[str, Any],
        body: str,
        original_commit_id: str,
        created_at: str,
        *,
        commit_id: str | None = None,
        path: str = "src/retry.py",
        line: int = 12,
        review_id: int | None = None,
    ) -> dict[str, Any]:
        """A review comment on the REST list only (no GraphQL thread), as some recordings show."""
        comment = self.world._review_comment(
            self.repository,
            PR_NUMBER,
            user,
            body,
            path=path,
            line=line,
            commit_id=commit_id or self.head_sha,
            original_commit_id=original_commit_id,
            created_at=created_at,
            review_id=review_id,
            in_reply_to=None,
        )
        self.review_comments.append(comment)
        return comment

    def add_reaction(self, user: dict[str, Any], content: str, created_at: str) -> dict[str, Any]:
        reaction = self.world._reaction(user, content, created_at)
        self.reactions.append(reaction)  # recorded history may hold what the API would refuse now
        return reaction

    def add_check_run(
        self, name: str, status: str = "completed", conclusion: str | None = "success", app_id: int = 15368
    ) -> dict[str, Any]:
        """A check run on the head commit, by default from GitHub Actions (app 15368)."""
        return self.world.add_check_run(
            OWNER, REPO, self.head_sha, name, status=status, conclusion=conclusion, app_id=app_id
        )

    def add_status(self, context: str, state: str) -> dict[str, Any]:
        return self.world.add_status(OWNER, REPO, self.head_sha, context, state)

    def add_open_pull(
        self, number: int, head_branch: str, head_sha: str, head_repository: str | None = REPOSITORY
    ) -> dict[str, Any]:
        self.repository.bare.pin_ref(head_branch, head_sha)
        pull = self.world.open_pull_request(
            OWNER, REPO, head=head_branch, base="main", number=number, title="Another change", unique=False
        )
        if head_repository is None:
            pull["head"]["repo"] = None
        elif head_repository != REPOSITORY:
            pull["head"]["repo"].update({"full_name": head_repository, "name": head_repository.split("/")[1]})
        return pull

    def add_thread(
        self,
        root_author: dict[str, Any] | None,
        root_body: str,
        created_at: str,
        *,
        thread_id: str | None = None,
        resolved: bool = False,
        outdated: bool = False,
        path: str = "src/retry.py",
        line: int | None = 12,
        replies: Sequence[tuple[dict[str, Any] | None, str, str]] = (),
        last_edited_at: str | None = None,
    ) -> dict[str, Any]:
        """A review thread seen through GraphQL only (no REST review comment behind it)."""
        number = self.new_id()
        comments = [
            {
                "id": f"PRRC_{number:08d}_0",
                "databaseId": number,
                "body": root_body,
                "createdAt": created_at,
                "lastEditedAt": last_edited_at,
                "user": copy.deepcopy(root_author),
            }
        ]
        comments += [
            {
                "id": f"PRRC_{number:08d}_{index}",
                "databaseId": number * 1000 + index,
                "body": body,
                "createdAt": when,
                "lastEditedAt": None,
                "user": copy.deepcopy(author),
            }
            for index, (author, body, when) in enumerate(replies, start=1)
        ]
        thread = {
            "id": thread_id or f"PRRT_{number:08d}",
            "isResolved": resolved,
            "isOutdated": outdated,
            "path": path,
            "line": line,
            "originalLine": line,
            "startLine": None,
            "diffSide": "RIGHT",
            "resolvedBy": None,
            "comments": comments,
        }
        self.threads.append(thread)
        return thread

    def force_push(self, new_sha: str) -> None:
        """Move feature/loop to ``new_sha`` (pinned when the repository does not hold it)."""
        self.repository.bare.pin_ref(self.pull["head"]["ref"], new_sha)

    # -- faults -------------------------------------------------------------

    def fail(self, method: str, pattern: str, status: int, **options: Any) -> None:
        self.world.fail(method, pattern, status, **options)

    def secondary_rate_limit(
        self, method: str, pattern: str, *, retry_after: int = 60, status: int = 403, times: int = 1
    ) -> None:
        secondary_rate_limit(self.world, method, pattern, retry_after=retry_after, status=status, times=times)

    def stall(self, method: str, pattern: str, seconds: float, *, times: int = 1) -> None:
        self.world.stall(method, pattern, seconds, times=times)

    def truncate(self, method: str, pattern: str, *, times: int = 1) -> None:
        self.world.truncate(method, pattern, times=times)

    def corrupt(self, method: str, pattern: str, body: bytes, *, times: int = 1) -> None:
        self.world.corrupt(method, pattern, body, times=times)

    def graphql_errors(self, *, times: int = 1) -> None:
        self.world.graphql_errors(times=times)

    def drip(self, method: str, pattern: str, seconds: float, *, times: int = 1) -> None:
        self.world.drip(method, pattern, seconds, times=times)

    def gzip_bomb(self, method: str, pattern: str, decompressed_bytes: int, *, times: int = 1) -> None:
        self.world.gzip_bomb(method, pattern, decompressed_bytes, times=times)

    def echo(
        self,
        method: str,
        pattern: str,
        edit: Callable[[Any, str], None] = lambda payload, authorization: None,
        *,
        headers: dict[str, str] | None = None,
        times: int = 1,
    ) -> None:
        self.world.echo(method, pattern, edit, headers=headers, times=times)

    def after(self, method: str, pattern: str, action: Callable[[], None], *, times: int = 1) -> None:
        self.world.after(method, pattern, action, times=times)

    def delete_issue_comment(self, comment_id: int) -> None:
        self.world.delete_issue_comment(OWNER, REPO, comment_id)

    def wait_idle(self, timeout: float) -> bool:
        """Wait until no request handler is running (a stalled one included)."""
        return self.server is None or self.server.app.wait_idle(timeout)

    def requests_to(self, pattern: str) -> list[tuple[str, str, int]]:
        return self.world.requests_to(pattern)
