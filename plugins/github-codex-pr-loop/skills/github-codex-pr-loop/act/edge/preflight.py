"""Setup checks that run before any approval is asked for, and again before ``fetch-base``.

A setup problem (no gh, no login, no route to github.com, no commit
identity) must show up at ``init``, before the person is asked to approve a
plan that cannot run, and must leave nothing behind: every check here only
reads (``git credential fill`` asks gh, ``git ls-remote`` reads refs), and
``init`` creates its state directory only after all of them passed. The
same checks run again in ``execute`` before its first write.

Each check is one function taking what it needs and returning the
``ActError`` it found, or None; ``run`` runs them in order and raises every
failure at once (``PreflightError``). The checks, in order:

1. ``check_gh``: a gh on PATH (or ``--gh``) that is a trusted executable;
2. ``check_identity``: the commit identity (``user.name``/``user.email``);
3. ``check_login``: git's credential helper (that gh, with the user's
   ``GH_CONFIG_DIR``) answers for github.com;
4. ``check_route``: a credentialed ``git ls-remote`` of the repository over
   the route (proxy, CA) the push will take.

GitHub-side checks (the token's permissions, drafts) belong here too, as
further functions in ``run``'s list. References: references/prerequisites.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from act.core.errors import ActError, PreflightError
from act.edge.gitops import GitWriter
from act.edge.sources import World
from observe.errors import ObserveError
from observe.gh import GhSetupError, gh_config_dir, trusted_gh

_IDENTITY_FIX = {
    "user.name": 'git config --global user.name "Your Name"',
    "user.email": "git config --global user.email you@example.com",
}


@dataclass(frozen=True)
class CommitIdentity:
    name: str
    email: str
    source: str  # for the approval summary: where each came from

    def shown(self) -> str:
        return f"{self.name} <{self.email}> (from {self.source})"


def check_gh(world: World) -> ActError | None:
    try:
        trusted_gh(world.gh)
    except GhSetupError as error:
        return ActError(error.code, error.message, path="/gh")
    return None


def check_identity(git: GitWriter, explicit: Mapping[str, str | None]) -> tuple[CommitIdentity | None, ActError | None]:
    """The identity every commit of the loop carries, or the error naming the missing key and its fix."""
    try:
        found = git.observer.commit_identity(explicit)
    except ObserveError as error:
        return None, ActError(error.code, error.message, path="/author")
    missing = [key for key, value in found.items() if value is None]
    if missing:
        fixes = " and ".join(f"`{_IDENTITY_FIX[key]}`" for key in missing)
        return None, ActError(
            "commit-identity-missing",
            f"no {' or '.join(missing)} for the commit in the repository's, your global or the system git "
            f"configuration; run {fixes} (or pass --author-name and --author-email to init)",
            path="/author",
        )
    name, email = found["user.name"], found["user.email"]
    assert name is not None and email is not None  # checked just above
    source = name.source if name.source == email.source else f"{name.source} and {email.source}"
    return CommitIdentity(name.value, email.value, source), None


def check_login(git: GitWriter) -> ActError | None:
    if git.credential_available():
        return None
    return ActError(
        "gh-login-missing",
        f"git's credential helper ({git.observer.runner.gh_path} auth git-credential, with GH_CONFIG_DIR="
        f"{git.observer.runner.credential_env.get('GH_CONFIG_DIR')}) has no login for github.com; run "
        "`gh auth login --hostname github.com` (or set GH_TOKEN)",
        path="/gh",
    )


def check_route(git: GitWriter, base_branch: str) -> ActError | None:
    try:
        git.remote_tip(base_branch)
    except ObserveError as error:
        return ActError(
            "push-route-unreachable",
            f"`git ls-remote {git.url}` over the route the push takes failed ({error.message}); check the network, "
            "the proxy and CA (--https-proxy/--ca-file, or HTTPS_PROXY/SSL_CERT_FILE) and the login's access to "
            "the repository",
            path="/repository",
        )
    return None


def run_before_first_write(world: World, checkout: str, repository: str, base_branch: str) -> None:
    """``execute``'s repeat of the checks before fetch-base: gh, its login, the route, the recorded identity."""
    gh_error = check_gh(world)
    if gh_error is not None:
        raise PreflightError([gh_error])
    errors: list[ActError] = []
    if world.bound_to is not None and world.author is None:
        errors.append(ActError("commit-identity-missing", "setup.json records no commit identity", path="/author"))
    try:
        with _writer(world, checkout, repository) as git:
            login_error = check_login(git)
            route_error = check_route(git, base_branch) if login_error is None else None
    except ObserveError as error:
        raise PreflightError([ActError(error.code, error.message)]) from None
    errors += [error for error in (login_error, route_error) if error is not None]
    if errors:
        raise PreflightError(errors)


def _writer(world: World, checkout: str, repository: str) -> GitWriter:
    return GitWriter(
        checkout,
        repository,
        gh_path=world.gh,
        gh_config_dir=world.gh_config_dir or gh_config_dir(),
        network=world.network,
    )


def run(
    world: World,
    checkout: str,
    repository: str,
    base_branch: str,
    explicit_identity: Mapping[str, str | None],
    *,
    network: bool = True,
) -> CommitIdentity:
    """Every check, in order; the commit identity when all passed, else one ``PreflightError`` with each failure.

    ``network=False`` (``init --no-network-preflight``, for planning offline) leaves out the login and
    route checks; ``execute`` still runs them before its first write.
    """
    gh_error = check_gh(world)
    if gh_error is not None:
        raise PreflightError([gh_error])  # the git runner needs a trusted gh for everything after
    errors: list[ActError] = []
    try:
        with _writer(world, checkout, repository) as git:
            identity, identity_error = check_identity(git, explicit_identity)
            login_error = check_login(git) if network else None
            route_error = check_route(git, base_branch) if network and login_error is None else None
    except ObserveError as error:
        raise PreflightError([ActError(error.code, error.message)]) from None
    errors += [error for error in (identity_error, login_error, route_error) if error is not None]
    if errors:
        raise PreflightError(errors)
    assert identity is not None
    return identity
