"""The executor's git writes, through the hardened runner only (references/executor.md).

Every write re-observes what it depends on immediately before it runs and
first looks for its own evidence, so a crash and a rerun never write twice:
``fetch_base`` checks the remote base tip, ``create_branch`` the branch and
HEAD, ``stage`` the path records, ``commit`` the parent and message of HEAD,
``push`` the remote tip (and never forces: only a fast-forward of exactly the
expected old tip is pushed). Fetch and push name the canonical URL, never a
remote, and take the route (proxy, CA) of ``observe/network.py``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from types import TracebackType

from act.core.errors import ActError
from act.edge.diff import CAUSES
from evaluator.models.plan import PathRecord
from observe.git.config import canonical_github_url
from observe.git.observer import GitObserver
from observe.git.paths import recheck_path_records
from observe.network import Network

ZERO_SHA = "0" * 40
# Tokens gh reads before its stored login; handed over by name, recorded as "<present>".
TOKEN_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN")


def credential_environment(gh_config_dir: str, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """What git's gh helper runs with: a token variable if set, and always where gh keeps the user's login.

    The runner's HOME is empty, so without GH_CONFIG_DIR gh would look for hosts.yml there and
    find no `gh auth login`.
    """
    found = {name: environ[name] for name in TOKEN_VARIABLES if environ.get(name)}
    return {**found, "GH_CONFIG_DIR": gh_config_dir}


def identity_environment(name: str, email: str) -> dict[str, str]:
    """The commit identity for git, as author and committer alike."""
    return {
        "GIT_AUTHOR_NAME": name,
        "GIT_AUTHOR_EMAIL": email,
        "GIT_COMMITTER_NAME": name,
        "GIT_COMMITTER_EMAIL": email,
    }


class GitWriter:
    """One checkout, written through the observer's hardened runner (a context manager: it owns an empty HOME).

    ``identity`` (``user.name``, ``user.email``), when given, is what every commit carries; without it
    git falls back to the repository's own config.
    """

    def __init__(
        self,
        checkout: str,
        repository: str,
        *,
        gh_path: str | None,
        gh_config_dir: str,
        network: Network,
        identity: tuple[str, str] | None = None,
    ):
        self.repository = repository
        self.url = canonical_github_url(repository)
        self.observer = GitObserver(
            checkout, gh_path=gh_path, network=network, credential_env=credential_environment(gh_config_dir)
        )
        self.worktree = self.observer.worktree
        self.identity = identity_environment(*identity) if identity is not None else None

    def __enter__(self) -> GitWriter:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.observer.close()

    # -- observations ------------------------------------------------------

    def _text(
        self, args: Sequence[str], *, ok_codes: Sequence[int] = (0,), network: bool = False, stdin: bytes = b""
    ) -> tuple[int, str]:
        code, out = self.observer.runner.run(list(args), ok_codes=ok_codes, network=network, stdin=stdin)
        return code, out.decode("utf-8", "replace")

    def head(self) -> str:
        return self.observer.current_head_sha()

    def head_branch_ref(self) -> str | None:
        code, out = self._text(["symbolic-ref", "--quiet", "HEAD"], ok_codes=(0, 1))
        return out.strip() if code == 0 else None

    def branch_tip(self, branch: str) -> str | None:
        code, out = self._text(
            ["rev-parse", "--verify", "--quiet", "--end-of-options", f"refs/heads/{branch}^{{commit}}"], ok_codes=(0, 1)
        )
        return out.strip() if code == 0 else None

    def parent(self, sha: str) -> str | None:
        code, out = self._text(["rev-parse", "--verify", "--quiet", "--end-of-options", f"{sha}^1"], ok_codes=(0, 1))
        return out.strip() if code == 0 else None

    def message(self, sha: str) -> str:
        return self._text(["cat-file", "commit", sha])[1].split("\n\n", 1)[1]

    def credential_available(self) -> bool:
        """Whether git's one credential helper (gh) answers for github.com: ``git credential fill``, no network.

        The answer (it holds the token) is read and dropped here, never returned.
        """
        request = b"protocol=https\nhost=github.com\n\n"
        code, out = self.observer.runner.run(["credential", "fill"], stdin=request, ok_codes=range(256), network=True)
        return code == 0 and any(line.startswith(b"password=") and len(line) > 9 for line in out.splitlines())

    def remote_tip(self, branch: str) -> str | None:
        """The branch tip on GitHub now (``ls-remote`` of the canonical URL), None when it does not exist."""
        ref = f"refs/heads/{branch}"
        _, out = self._text(["ls-remote", "--end-of-options", self.url, ref], network=True)
        tips = [line.split("\t")[0] for line in out.splitlines() if line.split("\t")[1:] == [ref]]
        if len(tips) > 1:
            raise ActError("remote-tip-ambiguous", f"GitHub lists {ref} {len(tips)} times", path="/head_branch")
        return tips[0] if tips else None

    def changed_names(self) -> dict[str, list[str]]:
        """Staged, unstaged and untracked paths (repository-relative)."""

        def names(args: list[str]) -> list[str]:
            return sorted(name for name in self._text(args)[1].split("\0") if name)

        return {
            "staged": names(
                ["diff", "--cached", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv"]
            ),
            "unstaged": names(["diff", "--name-only", "-z", "--no-renames", "--no-ext-diff", "--no-textconv"]),
            "untracked": names(["ls-files", "-z", "--others", "--exclude-standard"]),
        }

    def require_paths_unchanged(self, records: Sequence[PathRecord], when: str) -> None:
        """The path records of the plan, recomputed now, must be identical (before each edit and stage)."""
        differences = recheck_path_records(self.worktree, [record.as_dict() for record in records])
        if differences:
            named = "; ".join(f"{path}: {CAUSES.get(field, field + ' changed')}" for path, field in differences)
            raise ActError(
                "path-records-changed",
                f"{when}: a planned file is not as the plan bound it ({named}); nothing is written; restore it, or "
                "let this plan lapse and have a new one built (edit in place: see `edit_safely`)",
                path="/path_records",
                details={"causes": [{"file": path, "field": field} for path, field in differences]},
            )

    # -- writes --------------------------------------------------------------

    def fetch_base(self, remote: str, base_branch: str, base_sha: str) -> str:
        """Fetch the base into its tracking ref, only when GitHub's tip is still the approved base."""
        tip = self.remote_tip(base_branch)
        if tip != base_sha:
            raise ActError(
                "base-moved",
                f"the base branch on GitHub is at {tip}, the plan was approved at {base_sha}; nothing is fetched",
                path="/base_sha",
            )
        # No '+': the tracking ref only moves by fast-forward, and it already names base_sha.
        refspec = f"refs/heads/{base_branch}:refs/remotes/{remote}/{base_branch}"
        self._text(
            [
                "fetch",
                "--no-tags",
                "--no-write-fetch-head",
                "--no-recurse-submodules",
                "--end-of-options",
                self.url,
                refspec,
            ],
            network=True,
        )
        tracking = self._text(
            ["rev-parse", "--verify", "--end-of-options", f"refs/remotes/{remote}/{base_branch}^{{commit}}"]
        )[1].strip()
        if tracking != base_sha:
            raise ActError(
                "base-moved", f"after the fetch the base is {tracking}, not the approved {base_sha}", path="/base_sha"
            )
        return "written"

    def create_branch(self, head_branch: str, head_sha: str) -> str:
        """A new branch at HEAD, and HEAD on it; index and work tree are untouched (same commit)."""
        ref = f"refs/heads/{head_branch}"
        if self.head_branch_ref() == ref and self.branch_tip(head_branch) == head_sha:
            return "already-done"
        if self.head() != head_sha:
            raise ActError(
                "head-moved", f"HEAD is not the approved head {head_sha}; nothing is created", path="/current_head_sha"
            )
        if self.branch_tip(head_branch) is not None:
            raise ActError("branch-exists", f"{ref} already exists; the plan creates it", path="/head_branch")
        self._text(["update-ref", "--no-deref", ref, head_sha, ""])  # "" as old value: create, never overwrite
        self._text(["symbolic-ref", "HEAD", ref])
        return "written"

    def stage(self, paths: Sequence[str], records: Sequence[PathRecord]) -> str:
        self.require_paths_unchanged(records, "before staging")
        stdin = b"".join(path.encode("utf-8") + b"\0" for path in paths)
        self._text(["add", "--all", "--pathspec-from-file=-", "--pathspec-file-nul"], stdin=stdin)
        return "written"

    def commit(self, parent_sha: str, message: str, paths: Sequence[str]) -> tuple[str, str]:
        """Commit the staged planned paths on top of ``parent_sha``; (outcome, new head)."""
        head = self.head()
        if head != parent_sha:
            if self.parent(head) == parent_sha and self.message(head) == message:
                return "already-done", head
            raise ActError(
                "head-moved",
                f"HEAD is neither the approved head {parent_sha} nor its planned commit; nothing is committed",
                path="/current_head_sha",
            )
        changed = self.changed_names()
        outside = sorted(set(changed["staged"]) - set(paths))
        if outside or changed["unstaged"] or changed["untracked"] or not changed["staged"]:
            raise ActError(
                "worktree-outside-plan",
                "the commit must hold exactly the planned paths, staged, with nothing else changed "
                f"(staged outside the plan: {outside}, "
                f"unstaged: {changed['unstaged']}, untracked: {changed['untracked']}); nothing is committed. Commit, "
                "stash or remove the other files (or, for a new plan, name them with --path), then run `loop.py "
                "execute` again",
                path="/paths",
            )
        self.observer.runner.run(
            ["commit", "--no-verify", "--cleanup=verbatim", "--file=-"],
            stdin=message.encode("utf-8"),
            identity=self.identity,
        )
        new_head = self.head()
        if self.parent(new_head) != parent_sha:
            raise ActError(
                "commit-not-verified", "the new commit does not sit on the approved head", path="/current_head_sha"
            )
        return "written", new_head

    def tree_diff_sha256(self, base_sha: str, head_sha: str) -> str:
        return self.observer.tree_diff_sha256(base_sha, head_sha)

    def push(
        self, head_branch: str, new_head: str, expected_old: Sequence[str | None], base_branch: str, base_sha: str
    ) -> str:
        """Push ``new_head`` to the head branch: a fast-forward from an expected old tip, never forced."""
        tip = self.remote_tip(head_branch)
        if tip == new_head:
            return "already-done"
        if self.head() != new_head:
            raise ActError(
                "head-moved",
                f"HEAD is not the commit to push ({new_head}); nothing is pushed",
                path="/current_head_sha",
            )
        if tip not in expected_old:
            raise ActError(
                "remote-head-moved",
                f"the head branch on GitHub is at {tip}, expected one of {list(expected_old)}; nothing is pushed",
                path="/head_branch",
            )
        base_tip = self.remote_tip(base_branch)
        if base_tip != base_sha:
            raise ActError(
                "base-moved",
                f"the base branch on GitHub is at {base_tip}, the plan binds {base_sha}; nothing is pushed",
                path="/base_sha",
            )
        self._text(
            [
                "push",
                "--porcelain",
                "--no-recurse-submodules",
                "--end-of-options",
                self.url,
                f"{new_head}:refs/heads/{head_branch}",
            ],
            network=True,
        )
        after = self.remote_tip(head_branch)
        if after != new_head:
            raise ActError(
                "push-not-verified",
                f"after the push GitHub's head branch is at {after}, not {new_head}",
                path="/head_branch",
            )
        return "written"
