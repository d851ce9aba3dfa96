"""What ``init`` takes from the checkout when the person leaves out ``--repository``, ``--base`` or ``--head``.

As the GitHub CLI does: the head is the current branch; the remote is the
one the head branch's upstream names (``branch.<head>.remote``), else
``origin``, else the only remote; the repository is the github.com
repository that remote's URLs name; the base is that remote's default
branch (``refs/remotes/<remote>/HEAD``, which ``git clone`` sets and
``git remote set-head <remote> --auto`` restores). Anything that leaves a
choice open is refused: nothing is guessed. The facts come from the
hardened git observer (``GitObserver.checkout_defaults``); the values
inferred are bound by the plan like given ones, and the approval summary
says which were inferred.
"""

from __future__ import annotations

from typing import NamedTuple

from act.core.errors import ActError, UsageError
from act.edge import sources
from act.edge.sources import CheckoutFacts

# The intent's key for each flag that may be inferred, in the order they are decided.
FLAGS = {"head_branch": "--head", "repository": "--repository", "base_branch": "--base"}
_FALLBACK_REMOTE = "origin"


class Given(NamedTuple):
    """The repository and branches as the person gave them: None where a flag was left out."""

    repository: str | None
    base_branch: str | None
    head_branch: str | None


class Branches(NamedTuple):
    """The pull request's repository, base and head branch: given or inferred."""

    repository: str
    base_branch: str
    head_branch: str


def fill(world: sources.World, checkout: str, given: Given, *, create_branch: bool) -> tuple[Branches, dict[str, str]]:
    """The branches, with what was left out taken from the checkout; and what was inferred, by intent key."""
    if given.repository is not None and given.base_branch is not None and given.head_branch is not None:
        return Branches(given.repository, given.base_branch, given.head_branch), {}
    if given.head_branch is None and create_branch:
        raise UsageError("--create-branch makes a new branch: name it with --head BRANCH", path="/head_branch")
    facts = sources.checkout_defaults(world, checkout)
    inferred: dict[str, str] = {}
    head = given.head_branch
    if head is None:
        head = inferred["head_branch"] = _head(facts)
    repository, base = given.repository, given.base_branch
    if repository is None or base is None:
        remote = _remote(facts, repository, head)
        if repository is None:
            repository = inferred["repository"] = _repository(facts, remote)
        if base is None:
            base = inferred["base_branch"] = _base(facts, remote)
    return Branches(repository, base, head), inferred


def _head(facts: CheckoutFacts) -> str:
    head = facts.head_branch
    if head is None:
        raise ActError(
            "head-not-inferred",
            "the checkout's HEAD is detached, so it has no current branch to be the pull request's head; switch to "
            "the branch (git switch BRANCH) or give --head BRANCH",
            path="/head_branch",
        )
    return str(head)


def _remote(facts: CheckoutFacts, repository: str | None, head_branch: str) -> str:
    """The remote the pull request's repository and base come from."""
    remotes = facts.remotes
    if repository is not None:  # given: the remote is the one pointing at it
        named = [name for name, repositories in remotes.items() if repository in repositories]
        if len(named) == 1:
            return named[0]
        raise ActError(
            "base-not-inferred",
            f"{'no remote' if not named else 'remotes ' + ', '.join(sorted(named))} of the checkout "
            f"point{'s' if not named else ''} at {repository}, so its default branch is not known; give "
            "--base BRANCH",
            path="/base_branch",
        )
    upstream = facts.upstreams.get(head_branch)
    if upstream is not None and upstream in remotes:
        return str(upstream)
    if _FALLBACK_REMOTE in remotes:
        return _FALLBACK_REMOTE
    if len(remotes) == 1:
        return next(iter(remotes))
    why = (
        "the checkout has no remote"
        if not remotes
        else f"the head branch {head_branch!r} has no upstream and no remote is named origin, so any of "
        f"{', '.join(sorted(remotes))} could be meant"
    )
    raise ActError(
        "repository-not-inferred",
        f"{why}; give --repository OWNER/REPO (and --base BRANCH), or set the branch's upstream "
        f"(git branch --set-upstream-to REMOTE/{head_branch})",
        path="/repository",
    )


def _repository(facts: CheckoutFacts, remote: str) -> str:
    named = set(facts.remotes[remote])
    if len(named) == 1 and None not in named:
        return str(named.pop())
    why = "names no repository on github.com" if named <= {None} else "names more than one place"
    raise ActError(
        "repository-not-inferred",
        f"remote {remote!r} {why} (https://github.com/OWNER/REPO, git@github.com:OWNER/REPO.git or "
        "ssh://git@github.com/OWNER/REPO); give --repository OWNER/REPO",
        path="/repository",
    )


def _base(facts: CheckoutFacts, remote: str) -> str:
    base = facts.default_branches.get(remote)
    if base is None:
        raise ActError(
            "base-not-inferred",
            f"refs/remotes/{remote}/HEAD is not set, so the default branch of remote {remote!r} is not known; give "
            f"--base BRANCH, or record it with `git remote set-head {remote} --auto`",
            path="/base_branch",
        )
    return str(base)
