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

from typing import Any

from act.core.errors import ActError, UsageError
from act.edge import sources

# The intent's key for each flag that may be inferred, in the order they are decided.
FLAGS = {"head_branch": "--head", "repository": "--repository", "base_branch": "--base"}
_FALLBACK_REMOTE = "origin"


def fill(world: sources.World, intent: dict[str, Any]) -> dict[str, str]:
    """Put the inferred values into ``intent`` (where it has None); return what was inferred, by intent key."""
    missing = [key for key in FLAGS if intent[key] is None]
    if not missing:
        return {}
    if intent["head_branch"] is None and intent["create_branch"]:
        raise UsageError("--create-branch makes a new branch: name it with --head BRANCH", path="/head_branch")
    facts = sources.checkout_defaults(world, intent["checkout"])
    inferred: dict[str, str] = {}
    if intent["head_branch"] is None:
        inferred["head_branch"] = _head(facts)
        intent["head_branch"] = inferred["head_branch"]
    if intent["repository"] is None or intent["base_branch"] is None:
        remote = _remote(facts, intent)
        if intent["repository"] is None:
            inferred["repository"] = intent["repository"] = _repository(facts, remote)
        if intent["base_branch"] is None:
            inferred["base_branch"] = intent["base_branch"] = _base(facts, remote)
    return inferred


def _head(facts: dict[str, Any]) -> str:
    head = facts["head_branch"]
    if head is None:
        raise ActError(
            "head-not-inferred",
            "the checkout's HEAD is detached, so it has no current branch to be the pull request's head; switch to "
            "the branch (git switch BRANCH) or give --head BRANCH",
            path="/head_branch",
        )
    return str(head)


def _remote(facts: dict[str, Any], intent: dict[str, Any]) -> str:
    """The remote the pull request's repository and base come from."""
    remotes: dict[str, list[str | None]] = facts["remotes"]
    if intent["repository"] is not None:  # given: the remote is the one pointing at it
        named = [name for name, repositories in remotes.items() if intent["repository"] in repositories]
        if len(named) == 1:
            return named[0]
        raise ActError(
            "base-not-inferred",
            f"{'no remote' if not named else 'remotes ' + ', '.join(sorted(named))} of the checkout "
            f"point{'s' if not named else ''} at {intent['repository']}, so its default branch is not known; give "
            "--base BRANCH",
            path="/base_branch",
        )
    upstream = facts["upstreams"].get(intent["head_branch"])
    if upstream is not None and upstream in remotes:
        return str(upstream)
    if _FALLBACK_REMOTE in remotes:
        return _FALLBACK_REMOTE
    if len(remotes) == 1:
        return next(iter(remotes))
    why = (
        "the checkout has no remote"
        if not remotes
        else f"the head branch {intent['head_branch']!r} has no upstream and no remote is named origin, so any of "
        f"{', '.join(sorted(remotes))} could be meant"
    )
    raise ActError(
        "repository-not-inferred",
        f"{why}; give --repository OWNER/REPO (and --base BRANCH), or set the branch's upstream "
        f"(git branch --set-upstream-to REMOTE/{intent['head_branch']})",
        path="/repository",
    )


def _repository(facts: dict[str, Any], remote: str) -> str:
    named = set(facts["remotes"][remote])
    if len(named) == 1 and None not in named:
        return str(named.pop())
    why = "names no repository on github.com" if named <= {None} else "names more than one place"
    raise ActError(
        "repository-not-inferred",
        f"remote {remote!r} {why} (https://github.com/OWNER/REPO, git@github.com:OWNER/REPO.git or "
        "ssh://git@github.com/OWNER/REPO); give --repository OWNER/REPO",
        path="/repository",
    )


def _base(facts: dict[str, Any], remote: str) -> str:
    base = facts["default_branches"].get(remote)
    if base is None:
        raise ActError(
            "base-not-inferred",
            f"refs/remotes/{remote}/HEAD is not set, so the default branch of remote {remote!r} is not known; give "
            f"--base BRANCH, or record it with `git remote set-head {remote} --auto`",
            path="/base_branch",
        )
    return str(base)
