"""What changed between two documents, as JSON Pointers with the old and the new value.

A changed hash says that something changed; this says what. Objects are
compared key by key, lists index by index, down to the first values that
differ; a key or element present on one side only is reported with only that
side's value.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from act.core.jsonedge import Document
from evaluator.errors import pointer

LIMIT = 200  # more changes than this are summarized, not listed


class Change(TypedDict):
    """One changed value, as printed: its pointer, and the old or the new value, or both (JSON values)."""

    path: str
    old: NotRequired[object]
    new: NotRequired[object]
    note: NotRequired[str]  # the last item of a list cut at ``LIMIT``: how many more there were


class Cause(TypedDict):
    """What a change means for the person, and the planned file it concerns when there is one."""

    cause: str
    file: NotRequired[str]


def changes(old: object, new: object) -> list[Change]:
    found: list[Change] = []
    _walk(old, new, (), found)
    if len(found) > LIMIT:
        return found[:LIMIT] + [{"path": "", "note": f"{len(found) - LIMIT} more changes not listed"}]
    return found


def _walk(old: object, new: object, path: tuple[str | int, ...], found: list[Change]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if key not in new:
                found.append({"path": pointer(*path, key), "old": old[key]})
            elif key not in old:
                found.append({"path": pointer(*path, key), "new": new[key]})
            else:
                _walk(old[key], new[key], path + (key,), found)
    elif isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            if index >= len(new):
                found.append({"path": pointer(*path, index), "old": old[index]})
            elif index >= len(old):
                found.append({"path": pointer(*path, index), "new": new[index]})
            else:
                _walk(old[index], new[index], path + (index,), found)
    elif old != new or type(old) is not type(new):
        found.append({"path": pointer(*path), "old": old, "new": new})


# What a changed value of the initial plan means, for the person: by the last key of its pointer.
CAUSES = {
    "diff_sha256": "the change itself differs: a planned file's content changed since the plan was built",
    "worktree_status_sha256": "the checkout's status changed: a file was changed, staged, created or removed",
    "current_head_sha": "HEAD moved (a commit, a checkout or a reset)",
    "base_sha": "the base branch moved on the remote",
    "remote_refs_sha256": "the remote-tracking refs changed (a fetch, or someone pushed)",
    "open_prs_sha256": "the repository's open pull requests changed",
    "authenticated_user_id": "GitHub answers for another account",
    "execution_boundary": "git's configuration, hooks or binary changed",
    "resolved_target_sha256": (
        "the file was replaced, not edited in place (a new inode: `sed -i`, `mv`, an editor's atomic save), or it "
        "became a symlink or was removed"
    ),
    "lstat_chain_sha256": "the type, mode or owner of the file or of a directory on its path changed",
    "pr_title": "the pull request's title changed",
    "pr_body": "the pull request's body changed",
}


def causes(found: list[Change], approved_records: list[Document]) -> list[Cause]:
    """Each change explained once: what changed, and the planned file it concerns when there is one."""
    explained: list[Cause] = []
    for change in found:
        parts = change["path"].split("/")
        key = next((part for part in reversed(parts) if part in CAUSES), None)
        if key is None and "execution_boundary" in parts:
            key = "execution_boundary"
        entry: Cause = {"cause": CAUSES.get(key or "", f"{change['path']} changed")}
        if "path_records" in parts:
            index = parts[parts.index("path_records") + 1]
            if index.isdigit() and int(index) < len(approved_records):
                entry["file"] = approved_records[int(index)]["path"]
        if entry not in explained:
            explained.append(entry)
    return explained
