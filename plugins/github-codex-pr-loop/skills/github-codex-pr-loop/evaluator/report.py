"""A plain-text rendering of a result, for people (``--format text``).

The JSON line is the contract; this is a reading aid. Every value is shown as
text a person reads (lists as items, nested objects as indented sections,
``none``/``yes``/``no`` for JSON's null and booleans), never as a Python repr.
A plan (its kind, hash and operations) is one section, so what an approval
names is read in one place (references/digests.md).
"""

from __future__ import annotations

from typing import Any

_INDENT = "  "
# The keys that describe one plan, shown together under a "plan" section.
_PLAN_KEYS = ("initial_plan_hash", "plan_kind", "plan_hash", "original_plan_hash", "operations")
# The hash a person names to approve, per check (the plan's own hash for a state).
_APPROVAL_KEYS = {"initial": "initial_plan_hash", "state": "plan_hash"}


def text_report(result: dict[str, Any]) -> str:
    lines = [f"check: {result['check']}", f"ok: {_scalar(result['ok'])}"]
    errors = result.get("errors", [])
    if errors:
        lines.append("errors:")
        for error in errors:
            lines.append(f"{_INDENT}- {error['code']} at {error['path'] or '/'}")
            lines.extend(_block(error["message"], 2))
    rest = {key: value for key, value in result.items() if key not in ("ok", "check", "errors")}
    plan = {key: rest.pop(key) for key in _PLAN_KEYS if key in rest}
    for key, value in rest.items():
        lines.extend(_field(key, value, 0))
    if plan:
        lines.append("plan:")
        for key, value in plan.items():
            lines.extend(_field(key, value, 1))
    approval_key = _APPROVAL_KEYS.get(result["check"])
    if result["ok"] and result.get("mode") == "approval-gated" and approval_key in result:
        if result.get("action", "await-approval") == "await-approval":
            lines.append(f"to approve: name {approval_key} {result[approval_key]} (pass it as --approved-hash)")
    return "\n".join(lines) + "\n"


def _field(key: str, value: Any, depth: int) -> list[str]:
    pad = _INDENT * depth
    if isinstance(value, dict):
        if not value:
            return [f"{pad}{key}: (none)"]
        lines = [f"{pad}{key}:"]
        for sub_key, sub_value in value.items():
            lines.extend(_field(str(sub_key), sub_value, depth + 1))
        return lines
    if isinstance(value, list):
        if not value:
            return [f"{pad}{key}: (none)"]
        lines = [f"{pad}{key}:"]
        for item in value:
            lines.extend(_item(item, depth + 1))
        return lines
    if isinstance(value, str) and "\n" in value:
        return [f"{pad}{key}: |", *_block(value, depth + 1)]
    return [f"{pad}{key}: {_scalar(value)}"]


def _item(value: Any, depth: int) -> list[str]:
    pad = _INDENT * depth
    if isinstance(value, dict):
        inner = [line for key, sub in value.items() for line in _field(str(key), sub, depth + 1)]
        if not inner:
            return [f"{pad}- (empty)"]
        return [f"{pad}- {inner[0].lstrip()}", *inner[1:]]
    if isinstance(value, list):
        inner = [line for sub in value for line in _item(sub, depth + 1)]
        return [f"{pad}-", *inner] if inner else [f"{pad}- (none)"]
    if isinstance(value, str) and "\n" in value:
        return [f"{pad}- |", *_block(value, depth + 1)]
    return [f"{pad}- {_scalar(value)}"]


def _block(text: str, depth: int) -> list[str]:
    return [f"{_INDENT * depth}{line}" for line in str(text).split("\n")]


def _scalar(value: Any) -> str:
    if value is None:
        return "none"
    if value is True:
        return "yes"
    if value is False:
        return "no"
    return str(value)
