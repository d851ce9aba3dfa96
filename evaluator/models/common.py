"""Shared field types and the pydantic-to-violation bridge.

Every model is strict (``true`` is not ``1``, ``1`` is not ``"1"``) and forbids
extra keys. The formats themselves are defined once in evaluator/formats.py;
the field types here bind each to its stable error code. Field formats raise ``PydanticCustomError`` whose type *is* our
stable error code, so a pydantic error maps to a violation without guessing.
"""

from collections.abc import Iterable
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, ConfigDict, ValidationError
from pydantic_core import PydanticCustomError

from .. import formats
from ..errors import Violation, describe, pointer
from ..formats import Grammar, TimestampError, parse_timestamp


class Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="forbid", frozen=True, revalidate_instances="never")


def _format(code: str, grammar: Grammar) -> AfterValidator:
    def check(value: str) -> str:
        if not grammar.matches(value):
            raise PydanticCustomError(code, "{observed} is not " + grammar.what, {"observed": describe(value)})
        return value

    return AfterValidator(check)


Sha = Annotated[str, _format("invalid-sha", formats.SHA)]
Digest = Annotated[str, _format("invalid-digest", formats.DIGEST)]
RunId = Annotated[str, _format("invalid-run-id", formats.RUN_ID)]
DecimalId = Annotated[str, _format("invalid-id", formats.DECIMAL_ID)]
NodeId = Annotated[str, _format("invalid-node-id", formats.NODE_ID)]
RemoteName = Annotated[str, _format("invalid-remote-name", formats.REMOTE_NAME)]
Repository = Annotated[str, _format("invalid-repository", formats.REPOSITORY)]


def _timestamp(value: str) -> str:
    try:
        parse_timestamp(value)
    except TimestampError as error:
        if error.reason == "shape":
            message = "{observed} is not ISO-8601 with an explicit offset"
        else:
            message = "{observed} is not a real date and time (a day from either end of the calendar)"
        raise PydanticCustomError("invalid-timestamp", message, {"observed": describe(value)}) from None
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


def _branch(value: str) -> str:
    problem = formats.branch_name_problem(value)
    if problem:
        raise PydanticCustomError(
            "invalid-branch-name", "branch name {observed} " + problem, {"observed": describe(value)}
        )
    return value


BranchName = Annotated[str, AfterValidator(_branch)]


def _path(value: str) -> str:
    problem = formats.path_problem(value)
    if problem:
        raise PydanticCustomError("invalid-path", "path {observed} " + problem, {"observed": describe(value)})
    return value


RepoPath = Annotated[str, AfterValidator(_path)]


# --- pydantic errors -> violations -------------------------------------------

_TYPE_ERRORS = {
    "missing": "missing-key",
    "extra_forbidden": "unknown-key",
    "literal_error": "invalid-value",
    "too_short": "too-short",
    "too_long": "too-long",
}


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
    return {bool: "boolean", int: "integer", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


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
