"""A plain-text rendering of a result, for people (``--format text``)."""

from __future__ import annotations

from typing import Any


def text_report(result: dict[str, Any]) -> str:
    lines = [f"check: {result['check']}", f"ok: {'yes' if result['ok'] else 'no'}"]
    for error in result.get("errors", []):
        lines.append(f"  {error['code']} at {error['path'] or '/'}: {error['message']}")
    for key, value in result.items():
        if key not in ("ok", "check", "errors"):
            lines.append(f"{key}: {value}")
    return "\n".join(lines) + "\n"
