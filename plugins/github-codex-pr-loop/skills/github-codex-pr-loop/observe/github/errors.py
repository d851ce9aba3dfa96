"""The error of the GitHub wing: ``GitHubObservationError``.

Its codes are ``GITHUB_CODES`` in the observe catalogue (observe/errors.py);
references/github-observations.md says when each is raised. Messages are
built only from status codes, paths, counts and header numbers, never from
response text, so a token echoed by a server cannot end up in one.
"""

from __future__ import annotations

from observe.errors import GITHUB_CODES, ObserveError


class GitHubObservationError(ObserveError):
    """Raised when GitHub state cannot be observed completely and exactly."""

    codes = GITHUB_CODES
