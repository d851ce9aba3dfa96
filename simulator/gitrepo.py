"""A bare git repository the simulator owns: the truth about branches and commits.

Branch tips are read from the repository itself (loose ref files, then
packed-refs), so a push made by real git through the HTTPS front moves them
exactly as it would on GitHub. Commits made by the simulator use plumbing with
a fixed identity and the simulated clock, so their SHAs are reproducible.
"""

from __future__ import annotations

import os
import subprocess
from datetime import datetime
from pathlib import Path

_IDENTITY = {
    "GIT_AUTHOR_NAME": "Simulated Author",
    "GIT_AUTHOR_EMAIL": "author@example.invalid",
    "GIT_COMMITTER_NAME": "GitHub",
    "GIT_COMMITTER_EMAIL": "noreply@example.invalid",
}


class GitError(RuntimeError):
    pass


class BareRepository:
    def __init__(self, path: Path):
        self.path = Path(path)

    @classmethod
    def create(cls, path: Path, default_branch: str = "main") -> BareRepository:
        path.mkdir(parents=True, exist_ok=True)
        repository = cls(path)
        # --template= copies no sample hooks: every reset of a fake copies this repository.
        repository.git(
            "init", "-q", "--bare", "--template=", f"--initial-branch={default_branch}", str(path), cwd_repo=False
        )
        # Served over smart HTTP by git http-backend: pushes must be accepted.
        repository.git("config", "http.receivepack", "true")
        repository.git("config", "gc.auto", "0")
        return repository

    def git(
        self,
        *args: str,
        input: bytes | None = None,
        when: datetime | None = None,
        cwd_repo: bool = True,
        extra_env: dict[str, str] | None = None,
    ) -> str:
        completed = self._run(args, input=input, when=when, cwd_repo=cwd_repo, extra_env=extra_env)
        if completed.returncode != 0:
            raise GitError(f"git {args[0]} failed: {completed.stderr.decode('utf-8', 'replace').strip()}")
        return completed.stdout.decode("utf-8").strip()

    def _run(
        self,
        args: tuple[str, ...],
        *,
        input: bytes | None = None,
        when: datetime | None = None,
        cwd_repo: bool = True,
        extra_env: dict[str, str] | None = None,
    ) -> subprocess.CompletedProcess[bytes]:
        environment = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.path),
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": os.devnull,
            "LC_ALL": "C",
            **_IDENTITY,
        }
        environment.update(extra_env or {})
        if when is not None:
            stamp = f"{int(when.timestamp())} +0000"
            environment.update({"GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp})
        command = ["git", *(["--git-dir", str(self.path)] if cwd_repo else []), *args]
        return subprocess.run(command, input=input, capture_output=True, env=environment)

    # -- refs: read straight from the files git writes ---------------------

    def ref(self, branch: str) -> str | None:
        """The tip of ``refs/heads/<branch>``, or None when the branch does not exist."""
        name = f"refs/heads/{branch}"
        try:
            value = (self.path / name).read_text(encoding="ascii").strip()
            return value if len(value) == 40 else None
        except (OSError, UnicodeDecodeError):
            pass
        return self._packed_refs().get(name)

    def branches(self) -> dict[str, str]:
        found = {
            name.removeprefix("refs/heads/"): sha
            for name, sha in self._packed_refs().items()
            if name.startswith("refs/heads/")
        }
        heads = self.path / "refs" / "heads"
        for file in heads.rglob("*") if heads.is_dir() else ():
            if file.is_file():
                branch = file.relative_to(heads).as_posix()
                sha = self.ref(branch)
                if sha:
                    found[branch] = sha
        return dict(sorted(found.items()))

    def _packed_refs(self) -> dict[str, str]:
        try:
            lines = (self.path / "packed-refs").read_text(encoding="ascii").splitlines()
        except OSError:
            return {}
        refs = {}
        for line in lines:
            parts = line.split(" ", 1)
            if len(parts) == 2 and len(parts[0]) == 40 and not line.startswith(("#", "^")):
                refs[parts[1]] = parts[0]
        return refs

    def set_ref(self, branch: str, sha: str) -> None:
        """Point a branch at a commit this repository holds."""
        self.git("update-ref", f"refs/heads/{branch}", sha)

    def pin_ref(self, branch: str, sha: str) -> None:
        """Point a branch at any 40-hex name, held or not.

        For API-only scenarios that name commits they never created: the REST
        and GraphQL views read it like any tip; a git client fetching it fails.
        """
        if self.has_commit(sha):
            self.set_ref(branch, sha)
            return
        target = self.path / "refs" / "heads" / branch
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(sha + "\n", encoding="ascii")

    def delete_ref(self, branch: str) -> None:
        name = f"refs/heads/{branch}"
        loose = self.path / name
        if loose.is_file() and not self.has_commit(loose.read_text(encoding="ascii").strip()):
            loose.unlink()  # a pinned name git would refuse to look at
        if self.ref(branch) is not None:  # held by git: loose, or in packed-refs (perhaps under the pinned name)
            self.git("update-ref", "-d", name)

    def has_commit(self, sha: str) -> bool:
        try:
            return self.git("cat-file", "-t", sha) == "commit"
        except GitError:
            return False

    def path_changed(self, old: str, new: str, path: str) -> bool:
        """Whether ``path`` differs between two commits (False when either is not held)."""
        if not (self.has_commit(old) and self.has_commit(new)):
            return False
        return bool(self.git("diff", "--name-only", old, new, "--", path))

    def merge_facts(self, base: str, head: str) -> tuple[bool, bool] | None:
        """(conflicts, behind) of merging ``head`` into ``base``; None when either commit is not held.

        ``behind``: the base tip is not in the head's history (the head is out of date).
        """
        if not (self.has_commit(base) and self.has_commit(head)):
            return None
        merged = self._run(("merge-tree", "--write-tree", "--name-only", "--no-messages", base, head))
        if merged.returncode not in (0, 1):  # 1 means conflicts; anything else is git failing
            raise GitError(f"git merge-tree failed: {merged.stderr.decode('utf-8', 'replace').strip()}")
        ancestor = self._run(("merge-base", "--is-ancestor", base, head))
        if ancestor.returncode not in (0, 1):
            raise GitError(f"git merge-base failed: {ancestor.stderr.decode('utf-8', 'replace').strip()}")
        return merged.returncode == 1, ancestor.returncode == 1

    # -- commits ----------------------------------------------------------

    def commit(
        self, branch: str, files: dict[str, str], message: str, when: datetime, *, parents: list[str] | None = None
    ) -> str:
        """Commit ``files`` (path -> text) on top of ``branch`` (or ``parents``) and move the branch."""
        if parents is None:
            tip = self.ref(branch)
            parents = [tip] if tip and self.has_commit(tip) else []
        tree = self._tree(parents[0] if parents else None, files)
        sha = self.commit_tree(tree, parents, message, when)
        self.set_ref(branch, sha)
        return sha

    def commit_tree(self, tree: str, parents: list[str], message: str, when: datetime) -> str:
        arguments = ["commit-tree", tree]
        for parent in parents:
            arguments += ["-p", parent]
        return self.git(*arguments, input=message.encode("utf-8"), when=when)

    def _tree(self, base: str | None, files: dict[str, str]) -> str:
        index = self.path / "simulator-index"
        private = {"GIT_INDEX_FILE": str(index)}
        try:
            self.git("read-tree", *([base] if base else ["--empty"]), extra_env=private)
            for path, text in sorted(files.items()):
                blob = self.git("hash-object", "-w", "--stdin", input=text.encode("utf-8"))
                self.git("update-index", "--add", "--cacheinfo", f"100644,{blob},{path}", extra_env=private)
            return self.git("write-tree", extra_env=private)
        finally:
            index.unlink(missing_ok=True)

    def merge(self, base_branch: str, head_sha: str, message: str, when: datetime, method: str = "merge") -> str:
        """Merge ``head_sha`` into ``base_branch`` the way GitHub's merge button does; return the new tip."""
        base = self.ref(base_branch)
        if base is None or not self.has_commit(head_sha):
            raise GitError("base branch or head commit missing")
        tree = self.git("merge-tree", "--write-tree", base, head_sha).splitlines()[0]
        parents = [base, head_sha] if method == "merge" else [base]
        sha = self.commit_tree(tree, parents, message, when)
        self.set_ref(base_branch, sha)
        return sha
