"""Every text format the loop reads or writes, defined once for the core and the observers.

A ``Grammar`` is one format: its full-match Python regex, which is also the
JSON Schema pattern that tools/build_schemas.py publishes in
references/schemas/ (anchored with ``^...$``), so the schema and the code
cannot drift apart. Formats a regex cannot express alone (calendar-valid
timestamps, branch names, repository paths) are functions here too; the
models (evaluator/models/common.py) and the observers (observe/) both call
them. Every rule is described in references/recurring-state.md and
references/manifest-schema.md; the timestamp rule in references/canonical-json.md.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Literal


@dataclass(frozen=True)
class Grammar:
    """One text format: a full-match regex and what it means, for messages."""

    regex: str
    what: str
    length: int | None = None  # fixed-length formats also publish minLength/maxLength
    compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "compiled", re.compile(self.regex))

    def matches(self, text: object) -> bool:
        return isinstance(text, str) and self.compiled.fullmatch(text) is not None

    @property
    def json_pattern(self) -> str:
        """The same grammar as an anchored JSON Schema (ECMA-262) pattern."""
        return f"^{self.regex}$"

    def json_schema(self) -> dict[str, Any]:
        # A fixed length keeps the schema exact even where a validator's `$`
        # matches before a final newline (Python's re.search does).
        keywords: dict[str, Any] = {"pattern": self.json_pattern}
        if self.length is not None:
            keywords.update(minLength=self.length, maxLength=self.length)
        return keywords


SHA = Grammar(r"[0-9a-f]{40}", "a 40-digit lowercase hex commit SHA", 40)
DIGEST = Grammar(r"[0-9a-f]{64}", "a 64-digit lowercase hex SHA-256", 64)
RUN_ID = Grammar(r"[0-9a-f]{32}", "a 32-digit lowercase hex run id", 32)
DECIMAL_ID = Grammar(r"[1-9][0-9]{0,15}", "a positive decimal id string")
NODE_ID = Grammar(r"[A-Za-z0-9_=-]{1,128}", "a GitHub node id")
# A remote name we can put in argv and in refs/remotes/<name>/ unquoted.
REMOTE_NAME = Grammar(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}", "a single safe remote name ([A-Za-z0-9][A-Za-z0-9_-]*)")
# GitHub's owner rule (letters, digits, single inner hyphens, at most 39) and
# repository rule (no "." or "..", no name ending in ".git"), in lower case:
# the loop names a repository one way only.
_OWNER = r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}"
_REPO = r"(?!\.{1,2}/?$)(?!.*\.git$)[a-z0-9._-]{1,100}"
REPOSITORY = Grammar(rf"{_OWNER}/{_REPO}", "a lowercase GitHub owner/repo")
# A git clean-filter driver name as the boundary records it.
FILTER_NAME = Grammar(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}", "a filter driver name")
# One command-line argument: anything but NUL, which no argv can carry.
ARGUMENT = Grammar(r"[^\u0000]*", "an argument without a NUL byte")
# <request comment id>:<requested head>, the key of one review request.
REQUEST_KEY = Grammar(rf"(?P<comment>{DECIMAL_ID.regex}):(?P<head>{SHA.regex})", "<comment-id>:<40-hex-sha>")


def request_key(comment_id: int, head_sha: str) -> str:
    return f"{comment_id}:{head_sha}"


def parse_request_key(text: str) -> tuple[int, str] | None:
    """(comment id, head sha) of a well-formed request key, else None."""
    match = REQUEST_KEY.compiled.fullmatch(text)
    return None if match is None else (int(match["comment"]), match["head"])


# --- timestamps --------------------------------------------------------------

# ISO-8601 with an explicit offset. At most six fraction digits: a datetime
# holds microseconds, so every accepted timestamp is an exact instant and two
# timestamps compare as the instants they name. The observers refuse what the
# evaluator would reject, on the same grammar.
TIMESTAMP = Grammar(
    r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,6})?(Z|[+-][0-9]{2}:[0-9]{2})",
    "ISO-8601 with an explicit offset",
)


class TimestampError(ValueError):
    """A text that is not a timestamp: ``reason`` says whether the shape or the calendar is wrong."""

    def __init__(self, text: str, reason: Literal["shape", "calendar"]):
        super().__init__(f"{text[:60]!r} is not a timestamp ({reason})")
        self.reason = reason


def parse_timestamp(text: str) -> datetime:
    """The aware instant a timestamp names; ``TimestampError`` for any other text.

    The instant must be a real date and time at least a day from either end of
    the calendar, so deadline and timeout arithmetic can never overflow.
    """
    if not TIMESTAMP.matches(text):
        raise TimestampError(str(text), "shape")
    try:
        instant = datetime.fromisoformat(text.replace("Z", "+00:00"))
        _ = (instant - timedelta(days=1), instant + timedelta(days=1))
    except (ValueError, OverflowError):
        raise TimestampError(text, "calendar") from None
    return instant


def is_timestamp(text: object) -> bool:
    """Whether text is a timestamp ``parse_timestamp`` accepts."""
    if not isinstance(text, str):
        return False
    try:
        parse_timestamp(text)
    except TimestampError:
        return False
    return True


# --- branch names --------------------------------------------------------------

_BRANCH_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|//")


def branch_name_problem(name: str) -> str | None:
    """Why ``git check-ref-format --branch`` (or our stricter rule) refuses a name."""
    if not name:
        return "is empty"
    if not name.isascii():
        return "is not ASCII"
    if len(name) > 255:
        return "is longer than 255 characters"
    if name.startswith("-"):
        return "starts with '-'"
    if name in ("@", "HEAD"):
        return "is reserved"
    if _BRANCH_FORBIDDEN.search(name):
        return "contains a character or sequence git forbids in ref names"
    if name.startswith("/") or name.endswith("/") or name.endswith("."):
        return "starts or ends with '/' or ends with '.'"
    for component in name.split("/"):
        if component.startswith(".") or component.endswith(".lock"):
            return "has a component starting with '.' or ending with '.lock'"
    return None


# --- repository paths ------------------------------------------------------------

# Code points HFS+ ignores when comparing names (git's is_hfs_dotgit list).
_HFS_IGNORABLE = dict.fromkeys([*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF])
# .git and its NTFS 8.3 short name, with the trailing dots, spaces or
# alternate-data-stream suffix that NTFS ignores.
_DOTGIT = re.compile(r"(\.git|git~1)[. ]*(:.*)?", re.DOTALL)
# Files git itself reads from the work tree: a plan that edits them could turn
# on a clean filter or a submodule after the boundary was observed.
_GIT_CONTROL_FILE = re.compile(r"(\.gitattributes|\.gitmodules)[. ]*(:.*)?", re.DOTALL)
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _folded(component: str) -> str:
    return component.translate(_HFS_IGNORABLE).lower()


def names_git_metadata(component: str) -> bool:
    """Whether a path component is ``.git`` as git's protectNTFS and protectHFS see it."""
    return _DOTGIT.fullmatch(_folded(component)) is not None


def path_problem(path: str) -> str | None:
    """Why a repository-relative POSIX path is not canonical, or None."""
    if not path:
        return "is empty"
    if len(path) > 4096:
        return "is longer than 4096 characters"
    if path.startswith("/") or path.endswith("/"):
        return "has a leading or trailing '/'"
    if "\\" in path:
        return "contains a backslash"
    if _CONTROL.search(path):
        return "contains a control character"
    if unicodedata.normalize("NFC", path) != path:
        return "is not in Unicode normalization form C"
    for component in path.split("/"):
        if component in ("", ".", ".."):
            return "has an empty, '.' or '..' component"
        if names_git_metadata(component):
            return "has a component that names git metadata (.git under NTFS/HFS rules)"
        if _GIT_CONTROL_FILE.fullmatch(_folded(component)):
            return "names a file git reads for attributes or submodules (.gitattributes, .gitmodules)"
    return None
