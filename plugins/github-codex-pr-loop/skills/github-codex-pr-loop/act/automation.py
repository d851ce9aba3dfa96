"""The loop's automation, managed: exact ``automation_update`` payloads, and a registry check after each.

The agent passes each payload to Codex's ``automation_update`` tool as is,
then runs ``loop.py verify-automation``, which reads the registry and says
what to do next. The automation is a heartbeat in the loop's own thread
(``destination: "thread"``), so a person's reply there reaches the next
wakeup. Sequence, payloads and every verify outcome: references/hands.md.

Stages recorded in ``automation.json`` (``act.state_models.AutomationStage``;
each saved when its payload is emitted, or when verify confirms it, and
listed in ``history``): create-requested -> stub-paused (or stub-active ->
pause-requested -> stub-paused) -> prompt-requested -> prompt-verified ->
activate-requested -> active -> delete-requested -> deleted; prompt-rejected
when the evaluator refuses the bootstrap. stub-active and prompt-verified are
what verify saw: each is saved, then at once the stage whose payload verify
prints (pause-requested, activate-requested).
"""

from __future__ import annotations

from typing import Any

from act import judge, ledger, sources, statedir, steps, verdicts
from act.command import Context
from act.errors import ActError, UsageError
from act.plans import read_intent, read_pending, where
from act.state_models import AutomationProgress, AutomationStage, build, updated
from act.verdicts import DELETES_AUTOMATION, ActionName
from evaluator import markers, policy
from evaluator.canonical import text_digest

INERT_PROMPT = "Inert github-codex-pr-loop stub; do nothing."


def create_payload(key: str) -> dict[str, Any]:
    return {
        "mode": "create",
        "kind": "heartbeat",
        "destination": "thread",
        "name": key,
        "prompt": INERT_PROMPT,
        "rrule": policy.HEARTBEAT_RRULE,
        "status": "PAUSED",
    }


def update_payload(automation_id: str, **changes: str) -> dict[str, Any]:
    return {"mode": "update", "id": automation_id, **changes}


def delete_payload(automation_id: str) -> dict[str, Any]:
    return {"mode": "delete", "id": automation_id}


# --- state --------------------------------------------------------------------------------


def _record(directory: statedir.StateDir) -> AutomationProgress:
    record = directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
    if record is None:
        raise ActError(
            "automation-not-started",
            "no automation was requested for this loop; start with `loop.py automation-create`",
            path="/automation",
        )
    return record


def _save(directory: statedir.StateDir, record: AutomationProgress, stage: AutomationStage) -> AutomationProgress:
    reached = {"stage": stage, "at": statedir.now_text()}
    record = updated(record, stage=stage, history=[*(entry.as_dict() for entry in record.history), reached])
    directory.write_model(statedir.AUTOMATION, record)
    return record


def _require_stage(record: AutomationProgress, *stages: AutomationStage) -> None:
    if record.stage not in stages:
        raise ActError(
            "automation-stage-mismatch",
            f"the automation is at stage {record.stage}; this step needs {' or '.join(stages)}",
            path="/automation/stage",
        )


# --- automation-create ---------------------------------------------------------------------


def run_create(ctx: Context) -> dict[str, Any]:
    directory = ctx.state_dir()
    intent = read_intent(directory)
    pr_number = ctx.args.pr if ctx.args.pr is not None else intent.reuse_pr_number
    if pr_number is None or pr_number <= 0:
        raise UsageError("name the new pull request with --pr N")
    if intent.reuse_pr_number is not None and pr_number != intent.reuse_pr_number:
        raise ActError("intent-pr-mismatch", f"the plan reuses #{intent.reuse_pr_number}, not #{pr_number}", path="/pr")
    if directory.exists(statedir.AUTOMATION):
        raise ActError(
            "automation-already-requested",
            f"an automation was already requested for this loop (stage {_record(directory).stage})",
            path="/automation",
        )
    key = markers.automation_key(policy.HOST, intent.repository, pr_number, intent.run_id)
    requested = build(
        AutomationProgress,
        {
            "key": key,
            "pr_number": pr_number,
            "id": None,
            "stage": "create-requested",
            "inert_prompt_sha256": text_digest(INERT_PROMPT),
            "rendered_prompt_sha256": None,
            "history": [],
        },
    )
    _save(directory, requested, "create-requested")
    return {
        "automation_key": key,
        "payload": create_payload(key),
        "next": (
            "call automation_update with this payload exactly, then run `loop.py verify-automation --state-dir "
            f"{directory.path} --id ID` with the "
            "automationId it answers"
        ),
    }


# --- automation-prompt ---------------------------------------------------------------------


def run_prompt(ctx: Context) -> dict[str, Any]:
    directory = ctx.state_dir()
    intent = read_intent(directory)
    record = _record(directory)
    _require_stage(record, "stub-paused")
    document = sources.prompt_document(
        ctx.world, directory.file(statedir.INITIAL), record.pr_number, _known_id(record), intent.checkout
    )
    verdict = judge.evaluate("prompt", document)
    if not verdict.accepted:
        _save(directory, record, "prompt-rejected")
        raise ActError(
            "prompt-rejected",
            "the evaluator did not accept the bootstrap: the loop never started; do not update or activate the stub; "
            "delete the PAUSED stub with `loop.py automation-delete` and report the errors",
            details={"evaluation": verdict.output},
        )
    result = judge.require_accepted(verdict, "the bootstrap")
    directory.write(statedir.PROMPT, document)
    record = _save(directory, updated(record, rendered_prompt_sha256=result.rendered_prompt_sha256), "prompt-requested")
    return {
        "automation_key": result.automation_key,
        "rendered_prompt_sha256": result.rendered_prompt_sha256,
        "payload": update_payload(_known_id(record), prompt=result.rendered_prompt),
        "next": (
            "call automation_update with this payload exactly (the prompt is three lines, no trailing newline), then "
            f"`loop.py verify-automation --state-dir {directory.path}`"
        ),
    }


# --- automation-delete ---------------------------------------------------------------------


def run_delete(ctx: Context) -> dict[str, Any]:
    directory = ctx.state_dir()
    record = _record(directory)
    last = verdicts.read_last(directory)
    permitted_by_evaluator = (
        record.id is not None and isinstance(last, DELETES_AUTOMATION) and last.delete_automation_id == record.id
    )
    if not (permitted_by_evaluator or record.stage == "prompt-rejected"):
        raise ActError(
            "automation-delete-not-permitted",
            "only an emitted finish-finalization or cleanup stop naming this automation (delete_automation_id), "
            "or a bootstrap the evaluator rejected, permits deleting it",
            path="/automation",
        )
    _save(directory, record, "delete-requested")
    return {
        "payload": delete_payload(_known_id(record)),
        "next": _in_row(directory, None if last is None else last.action, "automation-delete")
        or f"pass this payload to automation_update unchanged; then `loop.py verify-automation --state-dir "
        f"{directory.path}`; then tell the person the bootstrap was rejected (the loop never started)",
    }


def _in_row(directory: statedir.StateDir, action: ActionName | None, step: str) -> str | None:
    """Inside a wakeup: the rest of the emitted action's row after ``step`` (act/steps.py)."""
    if action not in steps.WAKEUP or not any(s.key == step for s in steps.WAKEUP[action]):
        return None
    return steps.after(action, step, where(directory))


# --- verify-automation ---------------------------------------------------------------------


def _known_id(record: AutomationProgress) -> str:
    """The automation's id, known from the first verify on; a record at a later stage without one was edited."""
    if record.id is None:
        raise ActError(
            "state-file-invalid",
            f"automation.json is at stage {record.stage} but holds no automation id; nothing is written",
            path="/id",
            details={"state_file": statedir.AUTOMATION},
        )
    return record.id


def _observe(ctx: Context, record: AutomationProgress) -> list[dict[str, Any]]:
    from observe.registry import owned_automations

    with sources.observing():
        return [dict(r) for r in owned_automations(ctx.world.registry_root(), record.key)]


def _differences(
    observed: dict[str, Any], record: AutomationProgress, *, status: str, prompt_sha256: str | None
) -> list[dict[str, Any]]:
    expected = {
        "id": record.id,
        "name": record.key,
        "rrule": policy.HEARTBEAT_RRULE,
        "status": status,
        "prompt_sha256": prompt_sha256,
        "problem": None,
    }
    return [
        {"field": name, "expected": value, "observed": observed.get(name)}
        for name, value in expected.items()
        if observed.get(name) != value
    ]


def run_verify(ctx: Context) -> dict[str, Any]:
    directory = ctx.state_dir()
    record = _record(directory)
    given = ctx.args.automation_id
    if record.stage == "create-requested":
        if given is None:
            raise UsageError("the first verify needs --id ID, the automationId the create call answered")
        record = updated(record, id=given)
    elif given is not None and given != record.id:
        raise ActError("automation-id-not-ours", f"this loop's automation is {record.id}, not {given}", path="/id")
    automation_id = _known_id(record)
    owned = _observe(ctx, record)
    stage = record.stage
    if stage == "delete-requested":
        if owned:
            raise ActError(
                "automation-not-deleted",
                f"{len(owned)} automation(s) with this loop's key remain: {[r['id'] for r in owned]}; call the "
                "delete payload again and verify",
                details={"payload": delete_payload(automation_id)},
            )
        _save(directory, record, "deleted")
        return {
            "outcome": "deleted",
            "next": _in_row(directory, verdicts.last_action(directory), "verify-automation")
            or "the automation is gone; tell the person the bootstrap was rejected (the loop never started)",
        }
    if len(owned) != 1 or owned[0]["id"] != automation_id:
        raise ActError(
            "automation-not-unique",
            f"expected exactly automation {automation_id} with this loop's key, found {[r['id'] for r in owned]}; "
            "stop and tell the person, who removes any other",
            details={"observed": owned},
        )
    observed = owned[0]
    rendered = record.rendered_prompt_sha256
    if stage in ("create-requested", "pause-requested", "stub-active", "stub-paused"):
        if observed["status"] == "ACTIVE" and not _differences(
            observed, record, status="ACTIVE", prompt_sha256=record.inert_prompt_sha256
        ):
            # Codex has been seen saving a PAUSED create as ACTIVE: pause it before anything else.
            record = _save(directory, record, "stub-active")
            _save(directory, record, "pause-requested")
            return {
                "outcome": "created-active",
                "payload": update_payload(automation_id, status="PAUSED"),
                "next": (
                    "the stub was saved ACTIVE: call automation_update with this payload before anything else, then "
                    f"`loop.py verify-automation --state-dir {directory.path}`"
                ),
            }
        _require_clean(observed, record, status="PAUSED", prompt_sha256=record.inert_prompt_sha256)
        _save(directory, record, "stub-paused")
        return {
            "outcome": "stub-paused",
            "automation_id": automation_id,
            "next": f"`loop.py automation-prompt --state-dir {directory.path}`",
        }
    if stage in ("prompt-requested", "prompt-verified"):
        _require_clean(observed, record, status="PAUSED", prompt_sha256=rendered)
        record = _save(directory, record, "prompt-verified")
        _save(directory, record, "activate-requested")
        return {
            "outcome": "prompt-verified",
            "payload": update_payload(automation_id, status="ACTIVE"),
            "next": "call automation_update with this payload exactly, then `loop.py verify-automation --state-dir "
            f"{directory.path}`",
        }
    if stage in ("activate-requested", "active"):
        _require_clean(observed, record, status="ACTIVE", prompt_sha256=rendered)
        _save(directory, record, "active")
        current = ledger.read_wakeup(directory)
        in_wakeup = current is not None and current.ended_at is None and current.claims
        pending = read_pending(directory)
        return {
            "outcome": "active",
            "automation_id": automation_id,
            # Mid-loop (a remediation's update-automation) the wakeup goes on; after the bootstrap the turn ends.
            "next": steps.after(
                "execute-remediation",
                "verify-automation",
                where(directory, plan_hash=None if pending is None else pending.plan_hash),
            )
            if in_wakeup
            else "the loop is live: end this turn; every wakeup starts with `loop.py wakeup --state-dir "
            f"{directory.path} --automation-key {record.key}`",
        }
    raise ActError("automation-stage-mismatch", f"nothing to verify at stage {stage}", path="/automation/stage")


def _require_clean(
    observed: dict[str, Any], record: AutomationProgress, *, status: str, prompt_sha256: str | None
) -> None:
    found = _differences(observed, record, status=status, prompt_sha256=prompt_sha256)
    if found:
        fields = ", ".join(d["field"] for d in found)
        raise ActError(
            "automation-drift",
            f"the automation differs from what was requested ({fields}); do not activate or continue; tell the person "
            "(a running loop reports state-inconsistency on its next wakeup)",
            details={"differences": found},
        )
