"""Remediation and finalization plans from one recurring state, and the state that embeds them.

A plan is built from the very state it is embedded in (recurring-state.md):
everything it binds is copied from that state; what it adds is the person's
or agent's choice (paths, commands, the review template) and fresh
observations made for it (path records, the execution boundary, command
digests), which the caller passes in.

The state a plan is built from is one the evaluator accepted, read through its
model (``RecurringState``); the observed parts and the plan itself are
documents, judged only once the plan is embedded.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from evaluator import markers, policy
from evaluator.canonical import digest, text_digest
from evaluator.models.recurring import RecurringState


def remediation_operations(commands: Sequence[object]) -> list[str]:
    return (
        ["edit-files"]
        + (["run-validation"] if commands else [])
        + ["commit", "push", "reply-to-codex-threads", "request-codex-review", "update-automation"]
    )


def finalization_operations(state: RecurringState) -> list[str]:
    return (
        (["mark-draft-ready"] if state.pr_is_draft else [])
        + (["resolve-codex-threads"] if state.eligible_codex_threads else [])
        + ["delete-owned-automation"]
    )


def review_template(state: RecurringState) -> str:
    """The policy's request template for the next round (`@codex review`, the findings comments this
    round addresses, and its marker)."""
    return markers.default_review_template(
        state.run_id, state.fix_rounds + 1, markers.addressed_comment_ids(state.as_dict())
    )


def _checkpoint(state: RecurringState) -> dict[str, Any]:
    """What every plan copies from the request checkpoint and the run."""
    return {
        "base_branch": state.base_branch,
        "base_sha": state.base_sha,
        "current_head_sha": state.request_head_sha,
        "head_branch": state.head_branch,
        "policy_schema_version": policy.POLICY_SCHEMA_VERSION,
        "pr_number": state.pr_number,
        "remote_name": state.remote_name,
        "repository": state.repository,
        "request_key": state.request_key,
        "responses": [response.as_dict() for response in state.responses],
        "run_id": state.run_id,
        "version": policy.MANIFEST_VERSION,
    }


def remediation_manifest(
    state: RecurringState,
    *,
    path_records: Sequence[Mapping[str, Any]],
    commands: Sequence[Mapping[str, Any]],
    execution: Mapping[str, Any],
    template: str | None = None,
) -> dict[str, Any]:
    """The remediation plan; ``path_records`` name the paths, sorted by path here."""
    records = sorted((copy.deepcopy(dict(r)) for r in path_records), key=lambda r: r["path"])
    template = review_template(state) if template is None else template
    manifest = {
        **_checkpoint(state),
        "actionable_threads": [thread.as_dict() for thread in state.actionable_codex_threads],
        "commands": [copy.deepcopy(dict(c)) for c in commands],
        "execution": copy.deepcopy(dict(execution)),
        "kind": "remediation",
        "operations": remediation_operations(commands),
        "path_records": records,
        "paths": [r["path"] for r in records],
        "review_request_body_template": template,
        "review_request_body_template_sha256": text_digest(template),
    }
    return dict(sorted(manifest.items()))


def finalization_manifest(state: RecurringState) -> dict[str, Any]:
    """Phase one from a clean state, phase two from a settled one: the same derivation."""
    manifest = {
        **_checkpoint(state),
        "eligible_threads": [thread.as_dict() for thread in state.eligible_codex_threads],
        "gates": state.gates.as_dict(),
        "kind": "finalization",
        "non_codex_rooted_threads": state.non_codex_rooted_threads,
        "operations": finalization_operations(state),
        "pr_is_draft": state.pr_is_draft,
    }
    return dict(sorted(manifest.items()))


def embed(
    state: Mapping[str, Any],
    manifest: Mapping[str, Any],
    *,
    approved_plan_hash: str | None,
    execution_boundary: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The state with the plan, its hash and (remediation) the state's execution boundary.

    A plan built for this state carries the boundary observed for it, so the
    state gets that same observation. A plan built earlier and embedded again
    (the same wakeup, after its claim) needs a fresh observation passed as
    ``execution_boundary``: the evaluator then compares the two, and any
    difference makes the plan stale.
    """
    planned = copy.deepcopy(dict(state))
    kind = manifest["kind"]
    for other in ("remediation", "finalization"):
        planned[f"{other}_manifest"] = None
        planned[f"{other}_plan_hash"] = None
    planned[f"{kind}_manifest"] = copy.deepcopy(dict(manifest))
    planned[f"{kind}_plan_hash"] = digest(dict(manifest))
    boundary = manifest["execution"] if execution_boundary is None and kind == "remediation" else execution_boundary
    planned["execution_boundary"] = (
        copy.deepcopy(dict(boundary)) if kind == "remediation" and boundary is not None else None
    )
    planned["approved_plan_hash"] = approved_plan_hash
    return planned


def unembed(state: Mapping[str, Any]) -> dict[str, Any]:
    """The state as the collector leaves it: no plan, no plan hash, no execution boundary (``embed`` undone)."""
    collected = copy.deepcopy(dict(state))
    for kind in ("remediation", "finalization"):
        collected[f"{kind}_manifest"] = None
        collected[f"{kind}_plan_hash"] = None
    collected["execution_boundary"] = None
    return collected


def plan_hash(manifest: Mapping[str, Any]) -> str:
    return digest(dict(manifest))
