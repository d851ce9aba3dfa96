"""What changed between two documents, as JSON Pointers with the old and the new value.

A changed hash says that something changed; this says what. Objects are
compared key by key, lists index by index, down to the first values that
differ; a key or element present on one side only is reported with only that
side's value.
"""

from __future__ import annotations

from typing import Any

from evaluator.errors import pointer

LIMIT = 200  # more changes than this are summarized, not listed


def changes(old: Any, new: Any) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    _walk(old, new, (), found)
    if len(found) > LIMIT:
        return found[:LIMIT] + [{"path": "", "note": f"{len(found) - LIMIT} more changes not listed"}]
    return found


def _walk(old: Any, new: Any, path: tuple, found: list[dict[str, Any]]) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        for key in sorted(set(old) | set(new)):
            if key not in new:
                found.append({"path": pointer(*path, key), "old": old[key]})
            elif key not in old:
                found.append({"path": pointer(*path, key), "new": new[key]})
            else:
                _walk(old[key], new[key], path + (key,), found)
    elif isinstance(old, list) and isinstance(new, list):
        for index in range(max(len(old), len(new))):
            if index >= len(new):
                found.append({"path": pointer(*path, index), "old": old[index]})
            elif index >= len(old):
                found.append({"path": pointer(*path, index), "new": new[index]})
            else:
                _walk(old[index], new[index], path + (index,), found)
    elif old != new or type(old) is not type(new):
        found.append({"path": pointer(*path), "old": old, "new": new})
