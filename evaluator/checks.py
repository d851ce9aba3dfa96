"""The three checks of the CLI contract, each returning the one output object."""

from __future__ import annotations

from typing import Any

from .errors import Violation, sorted_violations


def _rejected(check: str, violations: list[Violation]) -> dict[str, Any]:
    return {"ok": False, "check": check, "errors": [v.as_dict() for v in sorted_violations(violations)]}


def run_initial(document: dict[str, Any], *, approved_hash: str | None, risk_record: dict | None, **_: Any) -> dict[str, Any]:
    from .rules.initial import check_initial
    from .rules.risk import risk_record_violations

    result, found = check_initial(document, approved_hash)
    if result is None:
        return _rejected("initial", found)
    snapshot, manifest = result.document.initial_snapshot, result.document.initial_manifest
    found = risk_record_violations(
        risk_record,
        snapshot.execution_boundary,
        document["initial_snapshot"]["execution_boundary"],
        snapshot.commands,
        manifest.run_id,
        snapshot.authenticated_user_id,
        ("initial_snapshot", "execution_boundary"),
    )
    if found:
        return _rejected("initial", found)
    return {
        "ok": True,
        "check": "initial",
        "initial_plan_hash": result.initial_plan_hash,
        "snapshot_sha256": result.snapshot_sha256,
        "mode": manifest.mode,
        "operations": list(manifest.operations),
    }
