"""Shared field types and the pydantic-to-violation bridge.

Every model is strict (``true`` is not ``1``, ``1`` is not ``"1"``) and forbids
extra keys. Field formats raise ``PydanticCustomError`` whose type *is* our
stable error code, so a pydantic error maps to a violation without guessing.
"""

from __future__ import annotations

import re
import unicodedata
from datetime import datetime, timedelta
from typing import Annotated, Any, Iterable

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from ..errors import Violation, describe, pointer


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, revalidate_instances="never")


def _format(code: str, pattern: str, what: str):
    compiled = re.compile(pattern)

    def check(value: str) -> str:
        if not compiled.fullmatch(value):
            raise PydanticCustomError(code, "{observed} is not " + what, {"observed": describe(value)})
        return value

    return AfterValidator(check)


Sha = Annotated[str, _format("invalid-sha", r"[0-9a-f]{40}", "a 40-digit lowercase hex commit SHA")]
Digest = Annotated[str, _format("invalid-digest", r"[0-9a-f]{64}", "a 64-digit lowercase hex SHA-256")]
RunId = Annotated[str, _format("invalid-run-id", r"[0-9a-f]{32}", "a 32-digit lowercase hex run id")]
DecimalId = Annotated[str, _format("invalid-id", r"[1-9][0-9]{0,15}", "a positive decimal id string")]
NodeId = Annotated[str, _format("invalid-node-id", r"[A-Za-z0-9_=-]{1,128}", "a GitHub node id")]

_TIMESTAMP = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?(Z|[+-]\d{2}:\d{2})")


def parse_timestamp(value: str) -> datetime:
    """An aware datetime from an ISO-8601 string that has an explicit offset."""
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def is_timestamp(text: str) -> bool:
    """Whether text is an ISO-8601 instant with an explicit offset, and a real one."""
    if not _TIMESTAMP.fullmatch(text):
        return False
    try:
        _within_range(parse_timestamp(text))
    except (ValueError, OverflowError):
        return False
    return True


def _within_range(instant: datetime) -> None:
    # Deadlines and timeouts are added to timestamps: leave a day of room at
    # both ends of the calendar so no arithmetic can overflow.
    instant - timedelta(days=1), instant + timedelta(days=1)


def _timestamp(value: str) -> str:
    if not _TIMESTAMP.fullmatch(value):
        raise PydanticCustomError("invalid-timestamp", "{observed} is not ISO-8601 with an explicit offset", {"observed": describe(value)})
    try:
        _within_range(parse_timestamp(value))
    except (ValueError, OverflowError):
        raise PydanticCustomError("invalid-timestamp", "{observed} is not a real date and time (a day from either end of the calendar)", {"observed": describe(value)}) from None
    return value


Timestamp = Annotated[str, AfterValidator(_timestamp)]


def _positive(value: int) -> int:
    if value < 1:
        raise PydanticCustomError("not-positive", "{observed} is not a positive integer", {"observed": value})
    return value


PositiveInt = Annotated[int, AfterValidator(_positive)]


def _non_negative(value: int) -> int:
    if value < 0:
        raise PydanticCustomError("negative-integer", "{observed} is negative", {"observed": value})
    return value


NonNegativeInt = Annotated[int, AfterValidator(_non_negative)]


# --- names, as strict as git and GitHub, then stricter where cheap -----------

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


def _branch(value: str) -> str:
    problem = branch_name_problem(value)
    if problem:
        raise PydanticCustomError("invalid-branch-name", "branch name {observed} " + problem, {"observed": describe(value)})
    return value


BranchName = Annotated[str, AfterValidator(_branch)]

_REMOTE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,62}")
RemoteName = Annotated[str, _format("invalid-remote-name", _REMOTE.pattern, "a single safe remote name ([A-Za-z0-9][A-Za-z0-9_-]*)")]

_OWNER = r"[a-z0-9](?:[a-z0-9]|-(?=[a-z0-9])){0,38}"
_REPO = r"(?!\.{1,2}/?$)(?!.*\.git$)[a-z0-9._-]{1,100}"
Repository = Annotated[str, _format("invalid-repository", rf"{_OWNER}/{_REPO}", "a lowercase GitHub owner/repo")]

# Code points HFS+ ignores when comparing names (git's is_hfs_dotgit list).
_HFS_IGNORABLE = dict.fromkeys(
    [*range(0x200C, 0x2010), *range(0x202A, 0x202F), *range(0x206A, 0x2070), 0xFEFF]
)
# .git and its NTFS 8.3 short name, with the trailing dots, spaces or
# alternate-data-stream suffix that NTFS ignores.
_DOTGIT = re.compile(r"(\.git|git~1)[. ]*(:.*)?")
# Files git itself reads from the work tree: a plan that edits them could turn
# on a clean filter or a submodule after the boundary was observed.
_GIT_CONTROL_FILE = re.compile(r"(\.gitattributes|\.gitmodules)[. ]*(:.*)?")


_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


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
        folded = component.translate(_HFS_IGNORABLE).lower()
        if _DOTGIT.fullmatch(folded):
            return "has a component that names git metadata (.git under NTFS/HFS rules)"
        if _GIT_CONTROL_FILE.fullmatch(folded):
            return "names a file git reads for attributes or submodules (.gitattributes, .gitmodules)"
    return None


def _path(value: str) -> str:
    problem = path_problem(value)
    if problem:
        raise PydanticCustomError("invalid-path", "path {observed} " + problem, {"observed": describe(value)})
    return value


RepoPath = Annotated[str, AfterValidator(_path)]


# --- pydantic errors -> violations -------------------------------------------

_TYPE_ERRORS = {"missing": "missing-key", "extra_forbidden": "unknown-key", "literal_error": "invalid-value", "too_short": "too-short", "too_long": "too-long"}


def _code(error_type: str) -> str:
    if error_type in _TYPE_ERRORS:
        return _TYPE_ERRORS[error_type]
    if error_type.endswith("_type") or error_type in ("model_attributes_type", "dict_type", "list_type"):
        return "wrong-type"
    if "-" in error_type:  # our own PydanticCustomError codes are kebab-case
        return error_type
    return "invalid-value"


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "integer", str: "string", list: "array", dict: "object"}.get(type(value), type(value).__name__)


def violations_from(error: ValidationError, base: Iterable[object] = ()) -> list[Violation]:
    result = []
    for item in error.errors(include_url=False):
        code = _code(item["type"])
        path = pointer(*base, *item["loc"])
        if code == "missing-key":
            message = f"required key {item['loc'][-1]!r} is missing"
        elif code == "unknown-key":
            message = f"key {item['loc'][-1]!r} is not part of the schema"
        elif code == "wrong-type":
            message = f"{item['msg']}; observed {_json_type(item['input'])}"
        else:
            message = item["msg"]
        result.append(Violation(code, path, message))
    return result


def validate(model: type[Strict], value: Any, base: Iterable[object] = ()) -> tuple[Any, list[Violation]]:
    """(instance, []) or (None, violations): an invalid object is never half-built."""
    try:
        return model.model_validate(value), []
    except ValidationError as error:
        return None, violations_from(error, tuple(base))
