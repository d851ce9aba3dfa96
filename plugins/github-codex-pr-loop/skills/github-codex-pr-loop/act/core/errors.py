"""The hands' one error type: a stable kebab-case code, a JSON Pointer and a message for people.

Codes are catalogued in references/errors.md ("Hands"). ``details`` carries
structured context a person needs to act on the error (for example the list
of what changed in a rebuilt plan); it never carries a secret.
"""

from __future__ import annotations

from act.core.jsonedge import Output


class ActError(Exception):
    """Any failure that permits no write (exit 1)."""

    def __init__(self, code: str, message: str, *, path: str = "", details: Output | None = None):
        from act.core.next_steps import NEXT_STEPS

        if code in NEXT_STEPS and "; next: " not in message:  # an observer's error carries its own
            message = f"{message}; next: {NEXT_STEPS[code]}"
        super().__init__(message)
        self.code, self.path, self.message = code, path, message
        self.details = details or {}

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "path": self.path, "message": self.message}

    def all_errors(self) -> list[dict[str, str]]:
        """Every error this refusal carries (one, but for the preflight's list)."""
        return [self.as_dict()]


class PreflightError(ActError):
    """Every setup check that failed at once (act/edge/preflight.py); the first names the code."""

    def __init__(self, errors: list[ActError]):
        first = errors[0]
        super().__init__(first.code, first.message, path=first.path, details=first.details)
        self.errors = errors

    def all_errors(self) -> list[dict[str, str]]:
        return [error.as_dict() for error in self.errors]


class UsageError(ActError):
    """A command line that cannot be run as given (exit 2)."""

    def __init__(self, message: str, *, path: str = ""):
        super().__init__("usage-error", message, path=path)
