"""Git through a hardened boundary: ``GitObserver`` and the public names of git observation.

``GitObserver`` turns a checkout into the plain values of the spec's initial
snapshot and execution boundary. Every command it runs goes through one
``GitRunner`` (observe/git/runner.py) with the ``sanitized-gh-https-v1``
profile; what ``-c`` cannot override is observed first and refused
(observe/git/config.py); path records and the other filesystem observations
use no git (observe/git/paths.py), so the action runner can recheck them before
each edit and stage without opening a repository. Every digest is defined in
references/digests.md ("Git observations") and the boundary in
references/git-execution-boundary.md.

The names in ``__all__`` are re-exported so ``from observe.git.observer import X`` keeps
working for the public surface the tests and references use.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace

from evaluator import policy
from evaluator.canonical import digest, text_digest
from evaluator.formats import REMOTE_NAME
from observe.gh import GhSetupError, find_gh, trusted_gh
from observe.git.config import (
    ConfigEntry,
    canonical_github_url,
    filter_drivers,
    github_repository_of,
    parse_config_listing,
    parse_github_https_url,
    refuse_uncontrollable_config,
    repository_entries,
    transport_url_sha256,
)
from observe.git.identity import IdentityError, IdentityField, commit_identity
from observe.git.paths import (
    command_definition_sha256,
    directory_sha256,
    file_observation,
    filesystem_scope_sha256,
    path_records,
    recheck_path_records,
    refuse_foreign_ownership,
    resolve_git_dirs,
)
from observe.git.runner import (
    _DRIVER_COMMANDS,
    CREDENTIAL_VARIABLES,
    DEFAULT_TIMEOUT_SECONDS,
    DIFF_OPTIONS,
    FIXED_PATH,
    PROFILE,
    STATUS_OPTIONS,
    GitObservationError,
    GitRunner,
    _utf8,
    credential_strategy,
    protections,
    redact_credentials,
)
from observe.network import Network

__all__ = [
    "DIFF_OPTIONS",
    "GitObservationError",
    "GitObserver",
    "command_definition_sha256",
    "parse_github_https_url",
    "path_records",
    "protections",
    "recheck_path_records",
    "transport_url_sha256",
]

_SHA = re.compile(r"[0-9a-f]{40}")
_SHA256 = re.compile(r"[0-9a-f]{64}")
_METADATA_FILES = ("info/exclude", "info/grafts", "objects/info/alternates", "shallow")
_UNSET_FILTER_VALUES = ("unspecified", "unset", "set")


class GitObserver:
    """One checkout seen through the hardened runner; a context manager because it owns an empty HOME.

    The constructor refuses uncontrollable config before any other git command,
    then neutralizes every configured filter driver by name. Each observation
    re-reads what it covers, so two calls on a changed checkout differ.
    """

    def __init__(
        self,
        worktree: str,
        *,
        git_path: str | None = None,
        gh_path: str | None = None,
        credential_env: Mapping[str, str] | None = None,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        network: Network | None = None,
    ):
        self.worktree = os.path.realpath(worktree)
        self.git_dir, self.common_dir = resolve_git_dirs(self.worktree)
        git_path = git_path or shutil.which("git", path=FIXED_PATH)
        if not git_path or not os.path.isabs(git_path):
            raise GitObservationError("git-not-executable", "git must be given as an absolute path")
        try:
            # The helper runs what was checked: the real path, never a symlink that could be swapped.
            gh_path = trusted_gh(find_gh(gh_path))
        except GhSetupError as error:
            raise GitObservationError(error.code, error.message) from None
        credential_env = dict(credential_env or {})
        if not set(credential_env) <= set(CREDENTIAL_VARIABLES):
            message = f"credential variables must be among {CREDENTIAL_VARIABLES}"
            raise GitObservationError("git-credential-env-invalid", message)
        # --git-dir skips git's own safe.directory check, so ownership is checked here.
        refuse_foreign_ownership(self.worktree, self.git_dir, self.common_dir)
        self._refuse_forged_ancestry()
        try:
            self._home = tempfile.mkdtemp(prefix="git-empty-home-")
        except OSError as error:  # Codex's read-only sandbox leaves no writable temporary directory
            raise GitObservationError(
                "git-temp-dir-unusable", f"no temporary directory for git's empty HOME ({error.strerror or error})"
            ) from None
        try:
            self.runner = GitRunner(
                git_path,
                gh_path,
                self.git_dir,
                self.worktree,
                self._home,
                credential_env=credential_env,
                timeout=timeout,
                network=network or Network(),
            )
            # First command: read and refuse. Nothing in it runs a repository program.
            entries = self._config_entries(check_drivers=False)
            self.runner = replace(self.runner, filter_drivers=tuple(sorted(filter_drivers(entries))))
            # From here on, a command that could start a driver runs only while the config is
            # exactly this listing (read again with the drivers neutralized).
            listing = self.runner.config_listing()
            if repository_entries(parse_config_listing(listing)) != entries:
                raise GitObservationError("git-config-changed", "the repository config changed while it was read")
            self.runner = replace(self.runner, config_listing_sha256=hashlib.sha256(listing).hexdigest())
            self.git_version = self._text(["version"]).strip()
        except BaseException:
            self.close()
            raise

    def close(self) -> None:
        shutil.rmtree(self._home, ignore_errors=True)

    def __enter__(self) -> GitObserver:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- snapshot fields

    def initial_snapshot_fields(
        self,
        repository: str,
        base_branch: str,
        paths: Sequence[str],
        *,
        read_scope: Sequence[str] | None = None,
        write_scope: Sequence[str] | None = None,
        risk_acceptance_sha256: str | None = None,
        explicit: bool = False,
    ) -> dict:
        """Every initial_snapshot field this checkout determines, ready to drop in."""
        remote = self.remote_name_for(repository)
        base_sha = self.base_sha(remote, base_branch)
        boundary = self.execution_boundary(
            repository,
            read_scope=read_scope,
            write_scope=write_scope,
            risk_acceptance_sha256=risk_acceptance_sha256,
            explicit=explicit,
        )
        return {
            "base_sha": base_sha,
            "current_head_sha": self.current_head_sha(),
            "diff_sha256": self.diff_sha256(base_sha),
            "execution_boundary": boundary,
            "path_records": self.path_records(paths),
            "paths": sorted(paths),
            "remote_name": remote,
            "remote_refs_sha256": self.remote_refs_sha256(remote),
            "worktree_status_sha256": self.worktree_status_sha256(),
        }

    def remote_name_for(self, repository: str) -> str:
        """The one remote whose URLs all name ``repository`` on github.com, in any accepted spelling.

        Which spellings name a repository: ``github_repository_of``. The remote
        is found by what it points to; git's network traffic still goes to the
        canonical https URL (``canonical_github_url``), never to the remote's URL.
        """
        canonical = canonical_github_url(repository)
        remotes: dict[str, list[str]] = {}
        for entry in self._config_entries():
            section, _, rest = entry.key.partition(".")
            name, _, variable = rest.rpartition(".")
            if section.lower() == "remote" and name and variable.lower() in ("url", "pushurl"):
                remotes.setdefault(name, []).append(entry.value or "")
        matches = sorted(
            name for name, urls in remotes.items() if any(github_repository_of(url) == repository for url in urls)
        )
        if not matches:
            others = redact_credentials(", ".join(sorted(remotes)) or "none")
            message = (
                f"no remote points at {canonical} (as https://github.com/{repository}[.git], "
                f"git@github.com:{repository}.git or ssh://git@github.com/{repository}; github.com only, "
                f"GitHub Enterprise Server hosts are not supported); remotes: {others}"
            )
            raise GitObservationError("git-remote-not-found", message)
        if len(matches) > 1:
            named = redact_credentials(", ".join(matches))
            raise GitObservationError("git-remote-ambiguous", f"remotes {named} all point at {canonical}")
        name = self._remote(matches[0])
        if any(github_repository_of(url) != repository for url in remotes[name]):
            message = f"remote {name} also has a URL that does not point at {canonical}"
            raise GitObservationError("git-remote-url-not-canonical", message)
        return name

    def checkout_defaults(self) -> dict:
        """What the checkout itself says about a pull request, for the flags a person leaves out.

        ``head_branch``: the current branch (None when HEAD is detached);
        ``upstreams``: each local branch's ``branch.<name>.remote``;
        ``remotes``: each remote's github.com repository per URL (None for a
        URL that names none, ``github_repository_of``); ``default_branches``:
        each remote's default branch, the target of ``refs/remotes/<remote>/HEAD``.
        Plain facts: which of them a command takes is its own decision.
        """
        code, out = self.runner.run(["symbolic-ref", "--quiet", "HEAD"], ok_codes=(0, 1))
        symbolic = _utf8(out, "HEAD").strip() if code == 0 else ""
        head = symbolic.removeprefix("refs/heads/") if symbolic.startswith("refs/heads/") else None
        upstreams: dict[str, str] = {}
        remotes: dict[str, list[str | None]] = {}
        for entry in self._config_entries():
            section, _, rest = entry.key.partition(".")
            name, _, variable = rest.rpartition(".")
            if section.lower() == "branch" and name and variable.lower() == "remote" and entry.value:
                upstreams[name] = entry.value
            if section.lower() == "remote" and name and variable.lower() == "url":
                remotes.setdefault(name, []).append(github_repository_of(entry.value or ""))
        default_branches = {}
        for record in self._ref_records("refs/remotes/"):
            remote, _, last = record["name"].removeprefix("refs/remotes/").rpartition("/")
            target_prefix = f"refs/remotes/{remote}/"
            if last == "HEAD" and remote in remotes and record["symref"].startswith(target_prefix):
                default_branches[remote] = record["symref"].removeprefix(target_prefix)
        return {"head_branch": head, "upstreams": upstreams, "remotes": remotes, "default_branches": default_branches}

    def base_sha(self, remote: str, base_branch: str) -> str:
        """The commit at refs/remotes/<remote>/<base_branch> (an exact ref, never a symbolic one)."""
        refname = self._remote_ref(remote, base_branch)
        for record in self._ref_records(f"refs/remotes/{remote}/"):
            if record["name"] == refname and record["type"] == "commit" and not record["symref"]:
                return record["object"]
        raise GitObservationError("git-base-ref-missing", f"{refname} is not a direct ref to a commit")

    def current_head_sha(self) -> str:
        code, out = self.runner.run(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], ok_codes=(0, 1))
        if code != 0:
            raise GitObservationError("git-head-unborn", "HEAD does not name a commit")
        return _utf8(out, "HEAD").strip()

    def diff_sha256(self, base_sha: str) -> str:
        """SHA-256 of the complete change from base_sha to the work tree, untracked files included."""
        return hashlib.sha256(self.diff_bytes(base_sha)).hexdigest()

    def diff_bytes(self, base_sha: str) -> bytes:
        """The complete change from base_sha to the work tree, untracked files included: what diff_sha256 hashes.

        Untracked, non-ignored files are added intent-to-add to a scratch copy of
        the index, so they appear as new files exactly as they will after commit;
        the real index is never written.
        """
        _require_sha(base_sha)
        untracked = self._listed_paths(others_only=True)
        with tempfile.TemporaryDirectory(prefix="git-diff-index-") as scratch:
            index = os.path.join(scratch, "index")
            if os.path.exists(os.path.join(self.git_dir, "index")):
                shutil.copyfile(os.path.join(self.git_dir, "index"), index)
            if untracked:
                # splitIndex off: a split index would write its shared part into the real git dir.
                add = ["-c", "core.splitIndex=false", "add", "--intent-to-add"]
                add += ["--pathspec-from-file=-", "--pathspec-file-nul"]
                self.runner.run(add, stdin=b"\0".join(untracked) + b"\0", index_file=index)
            return self.runner.run(["diff", *DIFF_OPTIONS, "--end-of-options", base_sha, "--"], index_file=index)[1]

    def tree_diff_sha256(self, base_sha: str, head_sha: str) -> str:
        """The same diff bytes between two commits: what a push of head_sha carries over base_sha."""
        _require_sha(base_sha)
        _require_sha(head_sha)
        out = self.runner.run(["diff", *DIFF_OPTIONS, "--end-of-options", base_sha, head_sha, "--"])[1]
        return hashlib.sha256(out).hexdigest()

    def is_ancestor(self, ancestor_sha: str, descendant_sha: str) -> bool:
        """Whether descendant_sha contains ancestor_sha (a commit contains itself)."""
        _require_sha(ancestor_sha)
        _require_sha(descendant_sha)
        self._refuse_forged_ancestry()
        args = ["merge-base", "--is-ancestor", "--end-of-options", ancestor_sha, descendant_sha]
        code, _ = self.runner.run(args, ok_codes=(0, 1))
        return code == 0

    def worktree_clean(self) -> bool:
        """No staged, unstaged or untracked (non-ignored) change at all."""
        return self.runner.run(["status", *STATUS_OPTIONS])[1] == b""

    def worktree_status_sha256(self) -> str:
        out = self.runner.run(["status", *STATUS_OPTIONS])[1]
        records = sorted(out.split(b"\0")[:-1])
        return hashlib.sha256(b"".join(record + b"\0" for record in records)).hexdigest()

    def changed_paths(self) -> list[tuple[str, str]]:
        """Every changed path as (path, what changed): staged, modified, unmerged or untracked."""
        changed = []
        for record in self.runner.run(["status", *STATUS_OPTIONS])[1].split(b"\0")[:-1]:
            text = _utf8(record, "status record")
            kind, _, rest = text.partition(" ")
            if kind == "?":
                changed.append((rest, "untracked"))
            elif kind in ("1", "u"):
                fields = rest.split(" ", 7 if kind == "1" else 9)
                state = fields[0]
                what = "unmerged" if kind == "u" else "staged" if state[0] != "." else "modified"
                changed.append((fields[-1], what))
        return sorted(changed)

    def commit_identity(self, explicit: Mapping[str, str | None]) -> dict[str, IdentityField | None]:
        """``user.name``/``user.email`` the commit will carry, each with its source (observe/git/identity.py)."""
        try:
            return commit_identity(self.runner.git_path, self._config_entries(), explicit)
        except IdentityError as error:
            raise GitObservationError("git-identity-unreadable", str(error)) from None

    def remote_refs_sha256(self, remote: str) -> str:
        return digest(self._ref_records(f"refs/remotes/{self._remote(remote)}/"))

    def path_records(self, paths: Iterable[str]) -> list[dict]:
        return path_records(self.worktree, paths)

    # -- execution boundary

    def execution_boundary(
        self,
        repository: str,
        *,
        read_scope: Sequence[str] | None = None,
        write_scope: Sequence[str] | None = None,
        risk_acceptance_sha256: str | None = None,
        explicit: bool = False,
    ) -> dict:
        """The isolated form when nothing is missing; the explicit form when an acceptance digest is given.

        ``explicit`` with no digest: the explicit form not yet bound (its digest ``None``), from which the
        hands build the acceptance record whose digest then binds it (act/risk.py).
        """
        isolated = risk_acceptance_sha256 is None and not explicit
        if risk_acceptance_sha256 is not None and not (
            isinstance(risk_acceptance_sha256, str) and _SHA256.fullmatch(risk_acceptance_sha256)
        ):
            raise GitObservationError("git-risk-acceptance-invalid", "risk_acceptance_sha256 must be 64 lowercase hex")
        git = self.git_object(repository, isolated=isolated)
        if isolated:
            missing = [name for name in policy.GIT_PROTECTIONS if git[name] is not True]
            if missing or git["active_clean_filters"] or git["credential_strategy"] != policy.CREDENTIAL_STRATEGY:
                raise GitObservationError(
                    "git-isolation-unavailable",
                    f"protections off: {missing}; active clean filters: {git['active_clean_filters']}; "
                    f"credential strategy: {git['credential_strategy']}; only explicit risk acceptance can proceed",
                )
        checkout = [self.worktree, self.git_dir, self.common_dir]
        return {
            "filesystem_read_scope_sha256": filesystem_scope_sha256(read_scope or checkout),
            "filesystem_write_scope_sha256": filesystem_scope_sha256(write_scope or checkout),
            "git": git,
            "isolation": policy.ISOLATED if isolated else policy.EXPLICIT_RISK,
            "risk_acceptance_sha256": risk_acceptance_sha256,
        }

    def git_object(self, repository: str, *, isolated: bool = True) -> dict:
        """The spec's 16-key git object; booleans derived from the runner's own argv and environment."""
        self.remote_name_for(repository)  # the transport URL must belong to exactly one remote
        argv_prefix = self.runner.argv_prefix()
        return {
            "active_clean_filters": self.active_clean_filters(),
            "attributes_snapshot_sha256": self.attributes_snapshot_sha256(),
            "config_snapshot_sha256": self.config_snapshot_sha256(),
            "credential_strategy": credential_strategy(argv_prefix, self.runner.gh_path),
            **protections(argv_prefix, DIFF_OPTIONS, self.runner.environment(network=True)),
            "git_metadata_snapshot_sha256": self.git_metadata_snapshot_sha256(),
            "invocation_sha256": self.invocation_sha256(),
            "profile": PROFILE if isolated else policy.EXPLICIT_RISK_PROFILE,
            "transport_url_sha256": transport_url_sha256(canonical_github_url(repository)),
        }

    def active_clean_filters(self) -> list[str]:
        """Filter attribute values on tracked and untracked paths whose driver has a command."""
        drivers = filter_drivers(self._config_entries())
        paths = self._listed_paths()
        if not paths:
            return []
        out = self.runner.run(["check-attr", "--stdin", "-z", "filter"], stdin=b"\0".join(paths) + b"\0")[1]
        values = {_utf8(value, "filter attribute") for value in out.split(b"\0")[2::3]}
        return sorted(
            v
            for v in values
            if v not in _UNSET_FILTER_VALUES and any(drivers.get(v, {}).get(c) for c in _DRIVER_COMMANDS)
        )

    def config_snapshot_sha256(self) -> str:
        """SHA-256 of the repository's config listing records as git printed them, in git's order."""
        records = [
            f"{e.scope}\0{e.origin}\0{e.key}" + ("" if e.value is None else f"\n{e.value}") + "\0"
            for e in self._config_entries()
        ]
        return text_digest("".join(records))

    def attributes_snapshot_sha256(self) -> str:
        info = file_observation(os.path.join(self.common_dir, "info", "attributes"))
        records = [{"path": "info/attributes", "source": "info", **info}]
        for mode, object_id, stage, path in self._index_entries():
            if path.rsplit("/", 1)[-1] == ".gitattributes":
                records.append({"mode": mode, "object": object_id, "path": path, "source": "index", "stage": stage})
        # Every directory git consults for a listed path, ignored .gitattributes included.
        directories = {""}
        for listed in self._listed_paths():
            parts = _utf8(listed, "path").rstrip("/").split("/")
            directories.update("/".join(parts[:depth]) for depth in range(1, len(parts)))
        for directory in sorted(directories):
            relative = f"{directory}/.gitattributes" if directory else ".gitattributes"
            observed = file_observation(os.path.join(self.worktree, relative))
            if observed["type"] != "absent":
                records.append({"path": relative, "source": "worktree", **observed})
        return digest(sorted(records, key=lambda r: (r["source"], r["path"], r.get("stage", ""))))

    def git_metadata_snapshot_sha256(self) -> str:
        code, symbolic = self.runner.run(["symbolic-ref", "--quiet", "HEAD"], ok_codes=(0, 1))
        head_code, head = self.runner.run(["rev-parse", "--verify", "--quiet", "HEAD"], ok_codes=(0, 1))
        return digest(
            {
                "files": {name: file_observation(os.path.join(self.common_dir, name)) for name in _METADATA_FILES},
                "head": {
                    "object": _utf8(head, "HEAD").strip() if head_code == 0 else None,
                    "symbolic_ref": _utf8(symbolic, "HEAD").strip() if code == 0 else None,
                },
                "hooks_sha256": directory_sha256(os.path.join(self.common_dir, "hooks")),
                "index_sha256": hashlib.sha256(self.runner.run(["ls-files", "--stage", "-z"])[1]).hexdigest(),
                "refs": self._ref_records(None),
            }
        )

    def invocation_sha256(self) -> str:
        return digest(self.runner.invocation_document(self.git_version))

    # -- helpers

    def _refuse_forged_ancestry(self) -> None:
        """Refuse a graft file: it rewrites parents, so an unrelated history could look like a descendant.

        The runner already points GIT_GRAFT_FILE at an empty file and turns the
        commit-graph off; refusing the file as well keeps a checkout that relies on
        grafts from being observed as if its history were what git shows elsewhere.
        """
        if file_observation(os.path.join(self.common_dir, "info", "grafts"))["type"] != "absent":
            raise GitObservationError("git-grafts-present", "info/grafts rewrites commit parents; remove it")

    def _config_entries(self, *, check_drivers: bool = True) -> list[ConfigEntry]:
        entries = repository_entries(parse_config_listing(self.runner.config_listing()))
        refuse_uncontrollable_config(entries)
        unneutralized = set(filter_drivers(entries)) - set(self.runner.filter_drivers)
        if check_drivers and unneutralized:
            message = f"filter drivers {sorted(unneutralized)} appeared after the runner was built"
            raise GitObservationError("git-config-changed", message)
        return entries

    def _text(self, args: Sequence[str]) -> str:
        return _utf8(self.runner.run(args)[1], f"git {args[0]} output")

    def _listed_paths(self, *, others_only: bool = False) -> list[bytes]:
        which = ["--others"] if others_only else ["--cached", "--others"]
        out = self.runner.run(["ls-files", "-z", *which, "--exclude-standard"])[1]
        return list(dict.fromkeys(out.split(b"\0")[:-1]))

    def _index_entries(self) -> list[tuple[str, str, str, str]]:
        entries = []
        for record in self.runner.run(["ls-files", "--stage", "-z"])[1].split(b"\0")[:-1]:
            info, _, path = _utf8(record, "index entry").partition("\t")
            mode, object_id, stage = info.split(" ")
            entries.append((mode, object_id, stage, path))
        return entries

    def _ref_records(self, prefix: str | None) -> list[dict]:
        args = ["for-each-ref", "--format=%(refname)%00%(objectname)%00%(objecttype)%00%(symref)"]
        if prefix is not None:
            args += ["--end-of-options", prefix]
        records = []
        for line in self._text(args).split("\n"):
            if line:
                name, object_id, object_type, symref = line.split("\0")
                records.append({"name": name, "object": object_id, "symref": symref, "type": object_type})
        return sorted(records, key=lambda record: record["name"])

    def _remote(self, remote: str) -> str:
        """A remote name we can put in argv and that git accepts inside a ref name (``a..b`` is neither)."""
        plain = REMOTE_NAME.matches(remote)
        probe = f"refs/remotes/{remote}/HEAD"
        if not plain or self.runner.run(["check-ref-format", probe], ok_codes=(0, 1))[0] != 0:
            shown = redact_credentials(repr(remote))
            raise GitObservationError("git-remote-name-invalid", f"remote {shown} is not a valid remote name")
        return remote

    def _remote_ref(self, remote: str, branch: str) -> str:
        """refs/remotes/<remote>/<branch>, after git's own ref-name rules accept it."""
        valid = isinstance(branch, str) and bool(branch) and not branch.startswith("-")
        refname = f"refs/remotes/{self._remote(remote)}/{branch}"
        if not valid or self.runner.run(["check-ref-format", refname], ok_codes=(0, 1))[0] != 0:
            raise GitObservationError("git-branch-invalid", f"{branch!r} is not a valid branch name")
        return refname


def _require_sha(value: str) -> None:
    if not isinstance(value, str) or not _SHA.fullmatch(value):
        raise GitObservationError("git-sha-invalid", f"{value!r} is not a 40-hex commit id")
