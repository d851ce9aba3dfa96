"""Every observation the hands need, made through observe (the collector's own code).

The hands never read the world themselves: the initial snapshot is the
collector's ``initial``, the wakeup state its ``wakeup_from_checkpoint``, the
report-only state (``status`` after the loop finished) its ``report``, the
bootstrap prompt document its ``prompt``, the execution boundary its
``boundary``; path records and command digests come from the git observer.
Each observer error keeps its own code and becomes an ``ActError``, so a
failed observation is a clean stop.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from act.errors import ActError, UsageError
from observe.network import Network

if TYPE_CHECKING:
    from observe.github.client import GitHubClient
    from observe.github.connect import GitHubSession


@dataclass(frozen=True)
class World:
    """Where observations come from: the GitHub API, the credential helper, the registry, the clock.

    ``secrets`` collects every token an observation resolved, so the command
    line can redact them from anything it prints (it never should need to).
    """

    api_url: str = "https://api.github.com"
    gh: str | None = None
    registry: str | None = None
    observed_at: str | None = None  # ISO-8601 with offset; None: now
    secrets: list[str] = field(default_factory=list)
    network: Network = field(default_factory=Network)  # the route to github.com (--https-proxy, --ca-file)
    # The command's one GitHub session (observe/github/connect.py), made at first use; loop.py closes it.
    session: GitHubSession | None = None

    def github_session(self) -> GitHubSession:
        """The command's one GitHub session, made at first use (a command that never reads GitHub loads no ghapi)."""
        from observe.github.connect import GitHubSession

        if self.session is None:  # frozen: set here, once
            session = GitHubSession(api_url=self.api_url, gh_path=self.gh, network=self.network, secrets=self.secrets)
            object.__setattr__(self, "session", session)
        assert self.session is not None
        return self.session

    def settings(self) -> Any:
        """The collector's settings for one observation."""
        from evaluator.formats import parse_timestamp
        from observe.collect import Settings

        instant = datetime.now(UTC) if self.observed_at is None else parse_timestamp(self.observed_at)
        return Settings(
            api_url=self.api_url,
            gh_path=self.gh,
            observed_at=instant,
            secrets=self.secrets,
            network=self.network,
            github=lambda repository: self.github_session().client(repository),
        )

    def registry_root(self) -> Path:
        from observe.registry import default_registry_root

        return Path(self.registry) if self.registry else default_registry_root()


@contextmanager
def observing() -> Iterator[None]:
    """Observer errors become ActErrors with the observer's own code."""
    from observe.errors import ObserveError
    from observe.errors import UsageError as ObserveUsageError

    try:
        yield
    except ObserveUsageError as error:
        raise UsageError(str(error)) from None
    except ObserveError as error:
        raise ActError(error.code, error.message) from None


def initial_snapshot(world: World, intent: dict[str, Any]) -> dict[str, Any]:
    """The collector's initial snapshot for the intent's checkout, branches, paths and commands."""
    from observe import collect

    with observing():
        return collect.initial(
            world.settings(),
            checkout=intent["checkout"],
            repository=intent["repository"],
            base=intent["base_branch"],
            head=intent["head_branch"],
            paths=list(intent["paths"]),
            commands=[list(argv) for argv in intent["commands"]],
            create_branch=intent["create_branch"],
            commit=intent["commit"],
            push=intent["push"],
        )


def github_client(world: World, repository: str) -> GitHubClient:
    """The GitHub client of every hand: the command's one client for ``repository`` (it closes with the command)."""
    return world.github_session().client(repository)


def pull_request_texts(world: World, repository: str, number: int) -> tuple[str, str]:
    """The current title and body of a PR (a reused PR keeps both; the plan hashes them)."""
    with observing():
        pull = github_client(world, repository).get("pulls.get", pull_number=number).body
    title, body = (
        pull.get("title") if isinstance(pull, dict) else None,
        pull.get("body") if isinstance(pull, dict) else None,
    )
    if not isinstance(title, str) or not (body is None or isinstance(body, str)):
        raise ActError("pull-request-texts-unreadable", f"pull request #{number} has no string title or body")
    return title, body or ""  # GitHub says null for an empty body


def execution_boundary(world: World, checkout: str, repository: str) -> dict[str, Any]:
    from observe import collect

    with observing():
        return collect.boundary(world.settings(), checkout=checkout, repository=repository, risk_acceptance_sha256=None)


def path_records(checkout: str, paths: Sequence[str]) -> list[dict[str, Any]]:
    from observe.git.observer import path_records as observe_records

    with observing():
        return observe_records(str(Path(checkout).resolve()), list(paths))


def changes_outside(world: World, checkout: str, paths: Sequence[str]) -> list[dict[str, str]]:
    """Each changed file of the checkout that no planned path covers: ``{path, change}``."""
    from observe import collect

    with observing(), ExitStack() as stack:
        changed = collect.git_observer(world.settings(), stack, checkout).changed_paths()
    return [
        {"path": path, "change": change}
        for path, change in changed
        if not any(path == planned or path.startswith(planned.rstrip("/") + "/") for planned in paths)
    ]


def planned_diff(world: World, checkout: str, base_sha: str) -> bytes:
    """The change from ``base_sha`` to the work tree, as the snapshot's ``diff_sha256`` hashes it."""
    from observe import collect

    with observing(), ExitStack() as stack:
        return collect.git_observer(world.settings(), stack, checkout).diff_bytes(base_sha)


def commands(argvs: Sequence[Sequence[str]]) -> list[dict[str, Any]]:
    """``{argv, definition_sha256}`` for each command, in execution order."""
    from observe.git.observer import command_definition_sha256

    with observing():
        return [{"argv": list(argv), "definition_sha256": command_definition_sha256(list(argv))} for argv in argvs]


def wakeup_state(
    world: World, checkout: str, bootstrap_snapshot: dict[str, Any], wakeup_id: str, approved_plan_hash: str | None
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The wakeup's state, and its notes: findings and gate unknowns (observe/collect.py)."""
    from observe import collect

    with observing():
        return collect.wakeup_with_notes(
            world.settings(),
            bootstrap_snapshot=bootstrap_snapshot,
            checkout=checkout,
            wakeup_id=wakeup_id,
            registry=world.registry,
            approved_plan_hash=approved_plan_hash,
        )


def report_state(world: World, repository: str, pr_number: int, run_id: str) -> dict[str, Any]:
    """The collector's report-only state of the loop's pull request: GitHub alone."""
    from observe import collect

    with observing():
        return collect.report(world.settings(), repository=repository, pr_number=pr_number, run_id=run_id)


def prompt_document(
    world: World, initial_path: Path, pr_number: int, automation_id: str, checkout: str
) -> dict[str, Any]:
    from observe import collect

    with observing():
        return collect.prompt(
            world.settings(),
            initial_path=str(initial_path),
            pr_number=pr_number,
            automation_id=automation_id,
            checkout=checkout,
            registry=world.registry,
        )


def registry(world: World) -> list[Any]:
    """Every automation in the registry, as observed (records plus the in-memory prompt)."""
    from observe.registry import read_registry

    with observing():
        return read_registry(world.registry_root())
