"""The one error type of the GitHub observer.

An observation either completes or raises ``GitHubObservationError``: a
partial document is never returned. ``code`` is a stable kebab-case name from
``ERROR_CODES``; ``message`` is for people and is built only from values we
control (status codes, paths, counts, header numbers), never from response
text, so a token echoed by a server cannot end up in it.
"""

from __future__ import annotations

ERROR_CODES = (
    "github-token-missing",  # no explicit token, no GH_TOKEN/GITHUB_TOKEN, `gh auth token` failed
    "github-unauthorized",  # HTTP 401
    "github-forbidden",  # HTTP 403 that is not a rate limit, where the endpoint has no meaning for it
    "github-not-found",  # HTTP 404 for something that must exist (the PR, the base branch)
    "github-unexpected-status",  # any other non-2xx, a redirect, or a 304 we never asked for
    "github-server-error",  # HTTP 5xx after every retry
    "github-rate-limited",  # 403 primary limit, 403/429 secondary limit, after retries or beyond the wait cap
    "github-timeout",  # connect/read/write timeout after every retry
    "github-connection-failed",  # other transport failure after every retry
    "github-malformed-json",  # a body that is not strict UTF-8 JSON (truncated, garbage, wrong content type)
    "github-unexpected-shape",  # valid JSON without the fields and types we rely on
    "github-graphql-errors",  # GraphQL answered HTTP 200 with an `errors` member
    "github-incomplete-pagination",  # a page missing, a loop, a count that does not add up
    "github-unrecognised-codex-summary",  # a Codex summary comment or table row we cannot read exactly
    "github-ambiguous-codex-comment",  # a trusted Codex comment that matches two classifications
    "github-ambiguous-short-sha",  # a short sha that expands to two different requested heads
    "github-ambiguous-pull-request",  # two open pull requests of this repository share the head branch
    "github-credential-echoed",  # an answer (body or header) repeats the token in any encoding: nothing of it is used
)


class GitHubObservationError(Exception):
    """Raised when GitHub state cannot be observed completely and exactly."""

    def __init__(self, code: str, message: str):
        if code not in ERROR_CODES:
            raise ValueError(f"unknown observer error code {code!r}")
        self.code = code
        self.message = message
        super().__init__(f"{code}: {message}")

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}
