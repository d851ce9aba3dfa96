"""What the token may do on the repository, observed before any write (the preflight's GitHub half).

Three sources, none of which changes anything on GitHub:

- ``GET /repos/{o}/{r}``: the repository's ``private`` flag, its owner's
  ``type``, and ``permissions``, the role of the token's *account* (not what
  the token itself may do); a classic token's answer also carries
  ``X-OAuth-Scopes``, the token's own scopes;
- for a token without ``X-OAuth-Scopes`` (fine-grained, or an app's), one
  probe per permission the loop writes with: a write with an empty body
  (``POST .../pulls`` for ``pull_requests``, ``POST .../git/refs`` for
  ``contents``). GitHub checks the token's permission before the body, so a
  token that lacks it gets 403 with ``X-Accepted-GitHub-Permissions``, and
  one that holds it gets 422 (nothing to create): neither creates anything.

The owner's plan is not readable here (``GET /users/{u}`` shows a plan only
to its own account, an organization's only to its owners); what that leaves
unknown is said in references/prerequisites.md, "Drafts".
"""

from __future__ import annotations

import re
from typing import Any

import httpx2

from observe.github.client import is_rate_limited
from observe.github.errors import GitHubObservationError

# The probe of each fine-grained permission the loop writes with: (method, path under the repository).
PROBES: dict[str, tuple[str, str]] = {
    "contents": ("POST", "/git/refs"),
    "pull_requests": ("POST", "/pulls"),
}
# One set of X-Accepted-GitHub-Permissions: ``name=level`` pairs joined by commas. Anything else in the header
# is ignored: it is server text, and only names we can check against our own vocabulary are repeated.
_PERMISSION = re.compile(r"([a-z_]{1,64})=(read|write|admin)")


def repository_access(client: Any) -> dict[str, Any]:
    """The facts above: ``private``, ``owner_type``, ``account_push``, ``scopes`` (None: not a classic token)
    and ``probes`` (each probed permission: ``"granted"``, or the permission sets GitHub named as missing)."""
    base = f"{client.host}/repos/{client.owner}/{client.name}"
    where = f"GET /repos/{client.owner}/{client.name}"
    response = _exchange(client, "GET", base, where)
    if response.status_code != 200:
        code = {401: "github-unauthorized", 403: "github-forbidden", 404: "github-not-found"}.get(
            response.status_code, "github-unexpected-status"
        )
        raise GitHubObservationError(code, f"{where}: HTTP {response.status_code}")
    body = client.channel.parse(response, where)
    permissions = body.get("permissions") if isinstance(body, dict) else None
    owner = body.get("owner") if isinstance(body, dict) else None
    if (
        not isinstance(permissions, dict)
        or not isinstance(permissions.get("push"), bool)
        or not isinstance(body.get("private"), bool)
        or not isinstance(owner, dict)
        or not isinstance(owner.get("type"), str)
    ):
        raise GitHubObservationError("github-unexpected-shape", f"{where}: no private, owner.type or permissions.push")
    scopes_header = response.headers.get("x-oauth-scopes")
    facts: dict[str, Any] = {
        "private": body["private"],
        "owner_type": owner["type"],
        "account_push": permissions["push"],
        "scopes": None if scopes_header is None else sorted(s.strip() for s in scopes_header.split(",") if s.strip()),
        "probes": {},
    }
    if facts["scopes"] is None:
        for permission, (method, path) in PROBES.items():
            facts["probes"][permission] = _probe(client, method, base + path, f"{method} {where[4:]}{path}")
    return facts


def _probe(client: Any, method: str, url: str, where: str) -> str | list[str]:
    """``"granted"`` (GitHub got past the permission check), or the permission sets its 403 names."""
    response = _exchange(client, method, url, where, json={})
    if response.status_code in (400, 422):
        return "granted"  # refused for its empty body only: the permission check came first and passed
    if is_rate_limited(response):
        raise GitHubObservationError("github-rate-limited", f"{where} (permission probe): rate limited")
    if response.status_code == 403:
        return accepted_permissions(response.headers.get("x-accepted-github-permissions")) or ["unnamed"]
    code = {401: "github-unauthorized", 404: "github-not-found"}.get(response.status_code, "github-unexpected-status")
    raise GitHubObservationError(code, f"{where} (permission probe): HTTP {response.status_code}")


def accepted_permissions(header: str | None) -> list[str]:
    """The permission sets of an ``X-Accepted-GitHub-Permissions`` header that are well formed (others dropped)."""
    sets = [part.strip() for part in (header or "").split(";")]
    return [s for s in sets if s and all(_PERMISSION.fullmatch(p.strip()) for p in s.split(","))]


def _exchange(client: Any, method: str, url: str, where: str, *, json: Any = None) -> httpx2.Response:
    try:
        return client.channel.exchange(client.channel.request(method, url, json=json), where)
    except httpx2.TimeoutException as error:
        raise GitHubObservationError("github-timeout", f"{where}: timed out") from error
    except httpx2.TransportError as error:
        raise GitHubObservationError("github-connection-failed", f"{where}: {type(error).__name__}") from error
