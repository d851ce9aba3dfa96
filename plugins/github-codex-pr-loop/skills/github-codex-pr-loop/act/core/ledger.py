"""The wakeup ledger (``wakeup.json``): one wakeup keeps one wakeup id, and its claims.

A new wakeup gets a fresh id; a wakeup that posted a claim continues under
the same id until it ends, because only a claim naming this wakeup's id is
"ours" (references/hands.md, "Wakeup ids"). Every command that ends a wakeup
ends it here, whichever command emitted the action.
"""

from __future__ import annotations

import secrets

from act.core import statedir
from act.core.errors import ActError
from act.core.state_models import ClaimRecord, Wakeup, build, updated


def read_wakeup(directory: statedir.StateDir) -> Wakeup | None:
    return directory.read_model_optional(statedir.WAKEUP, Wakeup)


def start_wakeup(directory: statedir.StateDir) -> Wakeup:
    """A fresh wakeup id, unless the current wakeup posted a claim and has not ended."""
    current = read_wakeup(directory)
    if current is not None and current.ended_at is None and current.claims:
        raise ActError(
            "wakeup-claim-open",
            f"wakeup {current.wakeup_id} posted a claim and has not ended: continue it with `loop.py wakeup "
            "--continue` "
            "(same wakeup id); if that wakeup is over, end it with `loop.py end-wakeup` first (its claim then counts "
            "as another wakeup's). No other command of this loop is running: this one holds the state directory's "
            "lock, so no live process holds that wakeup",
            path="/wakeup_id",
        )
    record = build(
        Wakeup,
        {
            "wakeup_id": secrets.token_hex(16),
            "started_at": statedir.now_text(),
            "ended_at": None,
            "end_reason": None,
            "claims": [],
            "executed": [],
        },
    )
    directory.write_model(statedir.WAKEUP, record)
    return record


def current_wakeup(directory: statedir.StateDir) -> Wakeup:
    current = read_wakeup(directory)
    if current is None or current.ended_at is not None:
        raise ActError(
            "wakeup-not-open", "no wakeup is open to continue; start one with `loop.py wakeup`", path="/wakeup_id"
        )
    return current


def record_claim(
    directory: statedir.StateDir, wakeup_id: str, plan_hash: str, kind: str, comment_id: int | None = None
) -> Wakeup:
    """Called right after a claim comment is posted: this wakeup now continues under its id."""
    current = current_wakeup(directory)
    if current.wakeup_id != wakeup_id:
        raise ActError(
            "wakeup-id-mismatch",
            f"the claim names wakeup {wakeup_id}, the open wakeup is {current.wakeup_id}",
            path="/wakeup_id",
        )
    claim = build(
        ClaimRecord,
        {"plan_hash": plan_hash, "kind": kind, "comment_id": comment_id, "posted_at": statedir.now_text()},
    )
    record = updated(current, claims=[*(c.as_dict() for c in current.claims), claim.as_dict()])
    directory.write_model(statedir.WAKEUP, record)
    return record


def record_executed(directory: statedir.StateDir, plan_hash: str) -> Wakeup:
    """Called after a claimed plan's operations are done: it is not embedded again."""
    current = current_wakeup(directory)
    if plan_hash in current.executed:  # run again (a rerun after a kill): recorded once
        return current
    record = updated(current, executed=[*current.executed, plan_hash])
    directory.write_model(statedir.WAKEUP, record)
    return record


def end_wakeup(directory: statedir.StateDir, reason: str) -> Wakeup | None:
    current = read_wakeup(directory)
    if current is None or current.ended_at is not None:
        return current
    record = updated(current, ended_at=statedir.now_text(), end_reason=reason)
    directory.write_model(statedir.WAKEUP, record)
    return record
