"""The one error type of the evaluator.

A validation failure is data, not an exception: a ``Violation`` names a stable
kebab-case ``code``, a JSON Pointer ``path`` into the input document and a
``message`` for people that gives the observed and the expected value.
``Rejected`` carries violations out of code that cannot return them (the strict
JSON parser); everything else returns lists of violations.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple


class Violation(NamedTuple):
    code: str
    path: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}


class Rejected(Exception):
    """Raised with the violations that made a document unacceptable."""

    def __init__(self, violations: Iterable[Violation]):
        self.violations = sorted_violations(violations)
        super().__init__("; ".join(f"{v.code} at {v.path or '/'}" for v in self.violations))


def pointer(*parts: object) -> str:
    """JSON Pointer (RFC 6901) for a sequence of keys and list indexes."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def sorted_violations(violations: Iterable[Violation]) -> list[Violation]:
    """Sorted by path then code, with exact duplicates removed."""
    return sorted(set(violations), key=lambda v: (v.path, v.code, v.message))


def describe(value: object, limit: int = 80) -> str:
    """A short, safe rendering of an observed value for a message."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
