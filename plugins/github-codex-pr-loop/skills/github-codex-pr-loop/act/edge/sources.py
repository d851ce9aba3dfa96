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
from typing import TYPE_CHECKING, NamedTuple, TypedDict

from act.core.errors import ActError, UsageError
from act.core.jsonedge import Document
from act.core.state_models import Finding, GateUnknown, Intent, build
from observe.network import Network

DEFAULT_API_URL = "https://api.github.com"
# The flags a state directory's setup.json fixes at init (act/core/state_models.py, ``Setup``).
ROUTE_FLAGS = ("gh", "api_url", "https_proxy", "ca_file", "registry")

if TYPE_CHECKING:
    from act.core.statedir import StateDir
    from observe.collect import Settings
    from observe.github.client import GitHubClient
    from observe.github.connect import GitHubSession
    from observe.registry import Observation


@dataclass
class World:
    """Where observations come from: the GitHub API, the credential helper, the registry, the clock.

    ``secrets`` collects every token an observation resolved, so the command
    line can redact them from anything it prints (it never should need to).
    Built from the flags and the environment; once a command opens a loop's
    state directory, ``bind`` replaces the route with the one ``init`` recorded
    there (the only time a World changes), and ``explicit`` (the flags as given)
    must agree with it.
    """

    api_url: str = DEFAULT_API_URL
    gh: str | None = None
    registry: str | None = None
    observed_at: str | None = None  # ISO-8601 with offset; None: now
    secrets: list[str] = field(default_factory=list)
    network: Network = field(default_factory=Network)  # the route to github.com (--https-proxy, --ca-file)
    gh_config_dir: str | None = None  # where gh keeps the user's login; None: resolved from the environment
    explicit: dict[str, str | None] = field(default_factory=dict)  # ROUTE_FLAGS as given on the command line
    author: tuple[str, str] | None = None  # the commit identity setup.json recorded
    bound_to: Path | None = None
    # The command's one GitHub session (observe/github/connect.py), made at first use; loop.py closes it.
    session: GitHubSession | None = None

    def bind(self, directory: StateDir) -> None:
        """Take the route and identity of the loop in ``directory`` (its setup.json), if it has one."""
        from act.core import statedir
        from act.core.state_models import Setup
        from observe.network import NetworkSettingError

        if self.bound_to == directory.path:
            return
        stored = directory.read_model_optional(statedir.SETUP, Setup)
        if stored is None:
            return  # a loop started before setup.json existed: the flags and the environment, as they were
        for name in ROUTE_FLAGS:
            given, recorded = self.explicit.get(name), getattr(stored, name)
            if given is not None and given != recorded:
                raise ActError(
                    "route-changed",
                    f"--{name.replace('_', '-')} {given!r} differs from {recorded!r}, which this loop was started "
                    "with (setup.json); nothing is done",
                    path=f"/{name}",
                )
        try:
            network = Network(https_proxy=stored.https_proxy, ca_file=stored.ca_file)
        except NetworkSettingError as error:
            raise ActError("route-changed", f"the route this loop was started with is gone: {error}") from None
        if self.session is not None:  # a client of the flags' route must not serve the loop's
            self.session.close()
            self.session = None
        self.gh, self.gh_config_dir, self.api_url = stored.gh, stored.gh_config_dir, stored.api_url
        self.registry, self.network = stored.registry, network
        if stored.author_name is not None and stored.author_email is not None:
            self.author = (stored.author_name, stored.author_email)
        self.bound_to = directory.path

    def github_session(self) -> GitHubSession:
        """The command's one GitHub session, made at first use (a command that never reads GitHub loads no ghapi)."""
        from observe.github.connect import GitHubSession

        if self.session is None:  # after ``bind``: the route is the loop's own by then
            self.session = GitHubSession(
                api_url=self.api_url,
                gh_path=self.gh,
                gh_config_dir=self.gh_config_dir,
                network=self.network,
                secrets=self.secrets,
            )
        return self.session

    def settings(self) -> Settings:
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
            gh_config_dir=self.gh_config_dir,
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


def initial_snapshot(world: World, intent: Intent, *, explicit: bool = False) -> Document:
    """The collector's initial snapshot for the intent's checkout, branches, paths and commands.

    ``explicit``: its execution boundary in the explicit-risk-acceptance form, not yet bound (act/risk.py).
    """
    from observe import collect

    with observing():
        return collect.initial(
            world.settings(),
            checkout=intent.checkout,
            repository=intent.repository,
            base=intent.base_branch,
            head=intent.head_branch,
            paths=list(intent.paths),
            commands=[list(argv) for argv in intent.commands],
            create_branch=intent.create_branch,
            commit=intent.commit,
            push=intent.push,
            explicit=explicit,
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


def execution_boundary(
    world: World, checkout: str, repository: str, *, risk_acceptance_sha256: str | None = None, explicit: bool = False
) -> Document:
    """The isolated form; with a digest the explicit form bound to it; ``explicit`` alone: not yet bound."""
    from observe import collect

    with observing():
        return collect.boundary(
            world.settings(),
            checkout=checkout,
            repository=repository,
            risk_acceptance_sha256=risk_acceptance_sha256,
            explicit=explicit,
        )


def path_records(checkout: str, paths: Sequence[str]) -> list[Document]:
    """Each planned path's record, as the snapshot or manifest binds it."""
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


def checkout_defaults(world: World, checkout: str) -> CheckoutFacts:
    """The checkout's current branch, upstreams, remotes and their default branches (act/edge/inference.py decides)."""
    from observe import collect

    with observing(), ExitStack() as stack:
        found = collect.git_observer(world.settings(), stack, checkout).checkout_defaults()
    return CheckoutFacts(found["head_branch"], found["upstreams"], found["remotes"], found["default_branches"])


class CheckoutFacts(NamedTuple):
    """What the checkout says (``GitObserver.checkout_defaults``): current branch, upstreams, remotes, defaults."""

    head_branch: str | None
    upstreams: dict[str, str]
    remotes: dict[str, list[str | None]]  # each remote's github.com repository per URL (None: names none)
    default_branches: dict[str, str]


def planned_diff(world: World, checkout: str, base_sha: str) -> bytes:
    """The change from ``base_sha`` to the work tree, as the snapshot's ``diff_sha256`` hashes it."""
    from observe import collect

    with observing(), ExitStack() as stack:
        return collect.git_observer(world.settings(), stack, checkout).diff_bytes(base_sha)


def commands(argvs: Sequence[Sequence[str]]) -> list[Document]:
    """``{argv, definition_sha256}`` for each command, in execution order."""
    from observe.git.observer import command_definition_sha256

    with observing():
        return [{"argv": list(argv), "definition_sha256": command_definition_sha256(list(argv))} for argv in argvs]


class Notes(TypedDict):
    """What is read beside a wakeup state (no plan binds it): wakeup-notes.json's lists."""

    findings: list[Finding]
    gate_unknowns: list[GateUnknown]


def wakeup_state(
    world: World, checkout: str, bootstrap_snapshot: Document, wakeup_id: str, approved_plan_hash: str | None
) -> tuple[Document, Notes]:
    """The wakeup's state, and its notes: findings and gate unknowns (observe/collect.py)."""
    from observe import collect

    with observing():
        state, notes = collect.wakeup_with_notes(
            world.settings(),
            bootstrap_snapshot=bootstrap_snapshot,
            checkout=checkout,
            wakeup_id=wakeup_id,
            registry=world.registry,
            approved_plan_hash=approved_plan_hash,
        )
    findings = [build(Finding, finding) for finding in notes["findings"]]
    return state, {"findings": findings, "gate_unknowns": [build(GateUnknown, u) for u in notes["gate_unknowns"]]}


def report_state(world: World, repository: str, pr_number: int, run_id: str) -> Document:
    """The collector's report-only state of the loop's pull request: GitHub alone."""
    from observe import collect

    with observing():
        return collect.report(world.settings(), repository=repository, pr_number=pr_number, run_id=run_id)


def prompt_document(world: World, initial_path: Path, pr_number: int, automation_id: str, checkout: str) -> Document:
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


def registry(world: World) -> list[Observation]:
    """Every automation in the registry, as observed (records plus the in-memory prompt)."""
    from observe.registry import read_registry

    with observing():
        return read_registry(world.registry_root())
