"""The planned change as the approval summary shows it: a stat and a bounded unified diff.

Shown only when the bytes read are the bytes the plan binds: their SHA-256
must equal the snapshot's ``diff_sha256`` (which the plan hash covers through
``snapshot_sha256``). A diff read a moment later from a changed checkout is
not the approved change, so it is withheld and the summary says why.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from act.core.jsonedge import Output

DIFF_SHOWN_LINES = 200  # lines of the unified diff in the summary, all files together
DIFF_FILE_LINES = 80  # at most this many of them for one file, so one large file cannot hide the others
DIFF_LINE_CHARS = 200  # characters of one diff line; a longer line is cut and marked
_CUT = " [...]"


def withheld(why: str) -> tuple[Output, Output]:
    """No diff shown, and why: the summary's value and its coverage."""
    return {"shown": False, "why": why}, {"informational": why}


def shown_diff(diff: bytes, bound_sha256: str, pointer: str) -> tuple[Output, Output]:
    """The stat and the bounded diff of ``diff``, covered by ``pointer``; or withheld if it is not the bound diff."""
    observed = hashlib.sha256(diff).hexdigest()
    if observed != bound_sha256:
        return withheld(
            f"the change read now (sha256 {observed[:12]}...) is not the planned change (sha256 "
            f"{bound_sha256[:12]}...): the checkout changed after the plan was built; build the plan again"
        )
    files = _files(diff.decode("utf-8", errors="backslashreplace").split("\n"))
    shown: list[str] = []
    left, truncated = DIFF_SHOWN_LINES, False
    for file in files:
        room = min(DIFF_FILE_LINES, left)
        body = [_cut(line) for line in file.lines]
        shown += body[:room]
        left -= min(room, len(body))
        if len(body) > room:
            shown.append(f"... {len(body) - room} more lines of {file.path} not shown")
            truncated = True
    value = {
        "shown": True,
        "sha256": observed,
        "files": len(files),
        "added": sum(file.added for file in files),
        "removed": sum(file.removed for file in files),
        "stat": [
            {"path": file.path, "added": file.added, "removed": file.removed, "binary": file.binary} for file in files
        ],
        "unified": shown,
        "truncated": truncated or any(len(line) > DIFF_LINE_CHARS for file in files for line in file.lines),
        "note": "the whole change from the base commit to the work tree, untracked files included, as committed",
    }
    return value, {"covered_by": pointer, "sha256": observed, "shown": "excerpt"}


@dataclass
class _File:
    """One file of git's output, as it is read: its lines so far and its counts (a local accumulator)."""

    path: str
    added: int = 0
    removed: int = 0
    binary: bool = False
    lines: list[str] = field(default_factory=list)
    hunk: bool = False  # inside a hunk: a +/- line is a change, not a header


def _files(lines: list[str]) -> list[_File]:
    """Split git's output at each ``diff --git`` header and count each file's added and removed lines."""
    files: list[_File] = []
    for line in lines:
        if line.startswith("diff --git "):
            files.append(_File(_path(line)))
        if not files or (line == "" and not files[-1].lines):
            continue
        file = files[-1]
        if line.startswith("GIT binary patch"):
            file.binary = True
        if file.binary:
            continue  # base85 data says nothing to a person
        file.lines.append(line)
        if line.startswith("@@"):
            file.hunk = True
        elif file.hunk and line.startswith("+"):
            file.added += 1
        elif file.hunk and line.startswith("-"):
            file.removed += 1
    for file in files:
        if file.binary:
            file.lines.append("(binary content, not shown)")
        while file.lines and file.lines[-1] == "":
            file.lines.pop()
    return files


def _path(header: str) -> str:
    """The path of ``diff --git a/P b/P`` (no renames: both sides name it); a quoted header is shown as it is."""
    names = header[len("diff --git ") :]
    half = (len(names) - 5) // 2  # "a/" + P + " b/" + P
    if names.startswith("a/") and names[2 + half : 5 + half] == " b/" and names[2 : 2 + half] == names[5 + half :]:
        return names[2 : 2 + half]
    return names


def _cut(line: str) -> str:
    return line if len(line) <= DIFF_LINE_CHARS else line[: DIFF_LINE_CHARS - len(_CUT)] + _CUT
