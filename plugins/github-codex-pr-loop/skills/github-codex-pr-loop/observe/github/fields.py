"""Field checks for GitHub payloads: take what we rely on, or fail closed.

Every accessor names where the value came from, so a shape error says which
answer and which field was not what the observer relies on. Messages never
quote a value GitHub sent: a proxy or server that echoes the Authorization
header into a field would otherwise put the token on standard error. They say
what was expected and what kind of value came (``kind_of``) instead
(references/github-observations.md, "Token handling").
"""

from __future__ import annotations

from typing import Any

from evaluator.formats import SHA, TimestampError, parse_timestamp
from observe.github.errors import GitHubObservationError


def kind_of(value: Any) -> str:
    """What kind of value was seen, never the value itself."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return f"a string of {len(value)} characters"
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) else type(value).__name__


def shape_error(message: str) -> GitHubObservationError:
    return GitHubObservationError("github-unexpected-shape", message)


def field(obj: Any, key: str, kind: type, where: str) -> Any:
    value = obj.get(key) if isinstance(obj, dict) else None
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise shape_error(f"{where}: {key} is {kind_of(value)}, expected {kind.__name__}")
    return value


def positive_id(obj: Any, where: str) -> int:
    value = field(obj, "id", int, where)
    if value < 1:
        raise shape_error(f"{where}: id {value} is not positive")
    return value


def sha40(value: Any, where: str) -> str:
    if not SHA.matches(value):
        raise shape_error(f"{where}: expected a 40-hex sha, got {kind_of(value)}")
    return value


def timestamp(value: Any, where: str) -> str:
    # The evaluator's own grammar: the observer never passes on a timestamp
    # the evaluator would reject.
    try:
        parse_timestamp(value)
    except TimestampError as error:
        if error.reason == "shape":
            raise shape_error(
                f"{where}: expected an ISO-8601 timestamp with a time zone, got {kind_of(value)}"
            ) from None
        raise shape_error(f"{where}: the timestamp names no real instant (a day or time out of range)") from error
    return value


def body_text(obj: Any, where: str) -> str:
    body = obj.get("body") if isinstance(obj, dict) else None
    if body is None:
        return ""  # GitHub sends null for an empty review body
    if not isinstance(body, str):
        raise shape_error(f"{where}: body is {type(body).__name__}, expected string")
    return body


def author_id(obj: dict[str, Any]) -> Any:
    user = obj.get("user")
    return user.get("id") if isinstance(user, dict) else None


def objects(items: list[Any], where: str) -> list[dict[str, Any]]:
    for item in items:
        if not isinstance(item, dict):
            raise shape_error(f"{where}: an item is a {type(item).__name__}, not an object")
    return items
