"""A refusal never hands out the pending plan's hash: at most its first 8 digits.

An approval is the person's act, made by naming the full hash the approval
summary showed them. A refusal that printed the pending hash (in its
message, a ``next`` hint, or a detail such as the evaluator's output) would
give an agent a hash to copy into ``approve``; so every refusal ``loop.py``
prints goes through ``masked`` first, whatever command raised it, and each
occurrence of the pending plan's hash becomes its first 8 digits and
``...`` (enough to tell two plans apart, never enough to approve with).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from act.core import statedir
from act.core.errors import ActError
from act.core.options import Options

_HEX64 = re.compile(r"[0-9a-f]{64}")


def shown(plan_hash: str) -> str:
    """How a refusal names a plan hash."""
    return f"{plan_hash[:8]}..."


def pending_hash(options: Options | None) -> str | None:
    """The hash of the plan pending in the loop the command line names, if there is one to read."""
    state_dir, run_id = (None, None) if options is None else (options.state_dir, options.run_id)
    if state_dir:
        path = Path(state_dir)
    elif run_id:
        path = statedir.default_path(run_id)
    else:
        return None
    try:
        pending = statedir.StateDir(path).read_optional(statedir.PENDING)
    except (ActError, OSError, ValueError):  # unreadable: the refusal names that, and holds nothing of it
        return None
    found = None if pending is None else pending.get("plan_hash")
    return found if isinstance(found, str) and _HEX64.fullmatch(found) else None


def masked(value: Any, plan_hash: str | None) -> Any:
    """``value`` (a refusal's JSON) with every occurrence of ``plan_hash`` shortened, in keys and strings alike."""
    if plan_hash is None:
        return value
    if isinstance(value, str):
        return value.replace(plan_hash, shown(plan_hash))
    if isinstance(value, dict):
        return {masked(key, plan_hash): masked(item, plan_hash) for key, item in value.items()}
    if isinstance(value, list):
        return [masked(item, plan_hash) for item in value]
    return value
