"""The loop's automation, managed: exact ``automation_update`` payloads, and a registry check after each.

The agent passes each payload to Codex's ``automation_update`` tool as is,
then runs ``loop.py verify-automation``, which reads the registry and says
what to do next. The automation is a heartbeat in the loop's own thread
(``destination: "thread"``), so a person's reply there reaches the next
wakeup. Sequence, payloads and every verify outcome: references/hands.md.

Stages recorded in ``automation.json`` (``act.core.state_models.AutomationStage``;
each saved when its payload is emitted, or when verify confirms it, and
listed in ``history``; a stage that asks for a payload is saved in one write
with that payload, which every rerun prints again, unchanged, until the
registry shows its effect): create-requested -> stub-paused (or stub-active ->
pause-requested -> stub-paused) -> prompt-requested -> prompt-verified ->
activate-requested -> active -> delete-requested -> deleted; prompt-rejected
when the evaluator refuses the bootstrap. stub-active and prompt-verified are
what verify saw: each is saved, then at once the stage whose payload verify
prints (pause-requested, activate-requested).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from act.command import Context
from act.core import ledger, statedir, steps, verdicts
from act.core.errors import ActError, UsageError
from act.core.jsonedge import Document, Output
from act.core.state_models import AutomationProgress, AutomationStage, build, updated
from act.core.verdicts import DELETES_AUTOMATION, ActionName
from act.edge import judge, sources
from act.plans import read_intent, read_pending, where
from evaluator import markers, policy
from evaluator.canonical import text_digest

if TYPE_CHECKING:
    from observe.registry import AutomationRecord

INERT_PROMPT = "Inert github-codex-pr-loop stub; do nothing."


def create_payload(key: str) -> Document:
    return {
        "mode": "create",
        "kind": "heartbeat",
        "destination": "thread",
        "name": key,
        "prompt": INERT_PROMPT,
        "rrule": policy.HEARTBEAT_RRULE,
        "status": "PAUSED",
    }


def update_payload(automation_id: str, **changes: str) -> Document:
    return {"mode": "update", "id": automation_id, **changes}


def delete_payload(automation_id: str) -> Document:
    return {"mode": "delete", "id": automation_id}


# --- state --------------------------------------------------------------------------------


def _record(directory: statedir.StateDir) -> AutomationProgress:
    record = directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
    if record is None:
        raise ActError(
            "automation-not-started",
            "no automation was requested for this loop; start with "
            + steps.row("bootstrap", where(directory)).partition(";")[0],
            path="/automation",
        )
    return record


def _save(
    directory: statedir.StateDir,
    record: AutomationProgress,
    stage: AutomationStage,
    payload: Document | None = None,
) -> AutomationProgress:
    """The stage reached; with the payload it asks for, in the same write (the hand-off is durable first)."""
    reached = {"stage": stage, "at": statedir.now_text()}
    text = None if payload is None else json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
    history = [*(entry.as_dict() for entry in record.history), reached]
    record = updated(record, stage=stage, history=history, payload=text)
    directory.write_model(statedir.AUTOMATION, record)
    return record


def pending_payload(record: AutomationProgress) -> Document | None:
    """The payload the recorded stage asked for, exactly as it was printed; None when none is pending."""
    if record.payload is not None:
        loaded: Document = json.loads(record.payload)  # key order kept: printed again byte for byte
        return loaded
    # A record from before payloads were kept: the payloads that depend on nothing else are rebuilt.
    rebuilt: dict[AutomationStage, Callable[[], Document]] = {
        "create-requested": lambda: create_payload(record.key),
        "pause-requested": lambda: update_payload(_known_id(record), status="PAUSED"),
        "activate-requested": lambda: update_payload(_known_id(record), status="ACTIVE"),
        "delete-requested": lambda: delete_payload(_known_id(record)),
    }
    return rebuilt[record.stage]() if record.stage in rebuilt else None


# Where each stage's pending payload stands in the bootstrap's row (act/core/steps.py): its ``tool`` step.
_BOOTSTRAP_TOOL: dict[AutomationStage, int] = {"create-requested": 1, "prompt-requested": 2, "activate-requested": 3}


def _again(directory: statedir.StateDir, record: AutomationProgress, payload: Document) -> Output:
    """A hand-off whose effect the registry does not show yet: its payload again, unchanged."""
    return {
        "outcome": "payload-pending",
        "automation_key": record.key,
        "payload": payload,
        "next": "the registry does not show this payload's effect yet (it is the one printed before, unchanged): "
        + _tool_next(directory, record.stage),
    }


def _tool_next(directory: statedir.StateDir, stage: AutomationStage) -> str:
    """The rest of the row from the tool call that ``stage``'s payload asks for (act/core/steps.py)."""
    if stage in _BOOTSTRAP_TOOL:
        return steps.starting_at("bootstrap", "tool", where(directory), nth=_BOOTSTRAP_TOOL[stage])
    if stage == "pause-requested":
        return _PAUSE_FIRST + steps.starting_at("bootstrap", "verify-automation", where(directory))
    return _in_row(directory, verdicts.last_action(directory), "automation-delete") or steps.after(
        "bootstrap-rejected", "automation-delete", where(directory)
    )


# Off the row: Codex saved the PAUSED stub ACTIVE (a known defect); the pause comes before anything else.
_PAUSE_FIRST = "the stub was saved ACTIVE: call `automation_update` with its `payload` before anything else; then "


def _require_stage(record: AutomationProgress, *stages: AutomationStage) -> None:
    if record.stage not in stages:
        raise ActError(
            "automation-stage-mismatch",
            f"the automation is at stage {record.stage}; this step needs {' or '.join(stages)}",
            path="/automation/stage",
        )


# --- automation-create ---------------------------------------------------------------------


def run_create(ctx: Context) -> Output:
    directory = ctx.state_dir()
    intent = read_intent(directory)
    pr_number = ctx.options.pr if ctx.options.pr is not None else intent.reuse_pr_number
    if pr_number is None or pr_number <= 0:
        raise UsageError("name the new pull request with --pr N")
    if intent.reuse_pr_number is not None and pr_number != intent.reuse_pr_number:
        raise ActError("intent-pr-mismatch", f"the plan reuses #{intent.reuse_pr_number}, not #{pr_number}", path="/pr")
    if directory.exists(statedir.AUTOMATION):
        record = _record(directory)
        if record.stage == "create-requested" and record.pr_number == pr_number:
            return _create_again(ctx, directory, record)
        raise ActError(
            "automation-already-requested",
            f"an automation was already requested for this loop (stage {record.stage}); nothing is requested "
            f"again: go on with {where(directory).fill(steps.Run('verify-automation').text())} (it prints "
            "whatever payload is still pending)",
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
    payload = create_payload(key)
    _save(directory, requested, "create-requested", payload)
    return _create_answer(directory, key, payload)


def _create_answer(directory: statedir.StateDir, key: str, payload: Document) -> Output:
    return {
        "automation_key": key,
        "payload": payload,
        "next": steps.starting_at("bootstrap", "tool", where(directory, key=key)),
    }


def _create_again(ctx: Context, directory: statedir.StateDir, record: AutomationProgress) -> Output:
    """The create was requested before: printed again while the registry shows no automation with the key."""
    if _observe(ctx, record):  # its effect is there: verify reads the id from the registry
        return {
            "automation_key": record.key,
            "outcome": "already-created",
            "next": steps.starting_at("bootstrap", "verify-automation", where(directory, key=record.key)),
        }
    payload = pending_payload(record)
    assert payload is not None  # create-requested always has one
    return _create_answer(directory, record.key, payload)


# --- automation-prompt ---------------------------------------------------------------------


def run_prompt(ctx: Context) -> Output:
    directory = ctx.state_dir()
    intent = read_intent(directory)
    record = _record(directory)
    _require_stage(record, "stub-paused", "prompt-requested")
    again = pending_payload(record) if record.stage == "prompt-requested" else None
    if again is not None:  # asked for before: the same payload, not a second judgement
        return {
            "automation_key": record.key,
            "rendered_prompt_sha256": record.rendered_prompt_sha256,
            "payload": again,
            "next": _tool_next(directory, "prompt-requested"),
        }
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
            "delete the PAUSED stub and report the errors: "
            + steps.row("bootstrap-rejected", where(directory, key=record.key)),
            details={"evaluation": verdict.output},
        )
    result = judge.require_accepted(verdict, "the bootstrap")
    directory.write(statedir.PROMPT, document)
    payload = update_payload(_known_id(record), prompt=result.rendered_prompt)
    record = updated(record, rendered_prompt_sha256=result.rendered_prompt_sha256)
    _save(directory, record, "prompt-requested", payload)
    return {
        "automation_key": result.automation_key,
        "rendered_prompt_sha256": result.rendered_prompt_sha256,
        "payload": payload,
        "next": _tool_next(directory, "prompt-requested"),
    }


# --- automation-delete ---------------------------------------------------------------------


def run_delete(ctx: Context) -> Output:
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
    payload = delete_payload(_known_id(record))
    _save(directory, record, "delete-requested", payload)
    return {
        "payload": payload,
        "next": _in_row(directory, None if last is None else last.action, "automation-delete")
        or steps.after("bootstrap-rejected", "automation-delete", where(directory, key=record.key)),
    }


def _in_row(directory: statedir.StateDir, action: ActionName | None, step: str) -> str | None:
    """Inside a wakeup: the rest of the emitted action's row after ``step`` (act/core/steps.py)."""
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


def _observe(ctx: Context, record: AutomationProgress) -> list[AutomationRecord]:
    """The registry's entries this loop owns, as the collector reads them (observe/registry.py)."""
    from observe.registry import owned_automations

    with sources.observing():
        return owned_automations(ctx.world.registry_root(), record.key)


class Difference(NamedTuple):
    """One field of the observed automation that is not what was requested."""

    field: str
    expected: str | None
    observed: str | None


def _differences(
    observed: AutomationRecord, record: AutomationProgress, *, status: str, prompt_sha256: str | None
) -> list[Difference]:
    compared = (
        Difference("id", record.id, observed["id"]),
        Difference("name", record.key, observed["name"]),
        Difference("rrule", policy.HEARTBEAT_RRULE, observed["rrule"]),
        Difference("status", status, observed["status"]),
        Difference("prompt_sha256", prompt_sha256, observed["prompt_sha256"]),
        Difference("problem", None, observed["problem"]),
    )
    return [difference for difference in compared if difference.observed != difference.expected]


def run_verify(ctx: Context) -> Output:
    directory = ctx.state_dir()
    record = _record(directory)
    given = ctx.options.automation_id
    if record.stage == "create-requested":
        if given is None:
            owned = _observe(ctx, record)
            if not owned:  # the create payload has not taken effect: printed again, unchanged
                return _again(directory, record, _pending(record))
            if len(owned) != 1:
                raise _not_unique("one", owned)
            given = owned[0]["id"]  # the registry shows the create's effect: its one automation is the answer
        record = updated(record, id=given)
    elif given is not None and given != record.id:
        raise ActError("automation-id-not-ours", f"this loop's automation is {record.id}, not {given}", path="/id")
    automation_id = _known_id(record)
    owned = _observe(ctx, record)
    if record.stage in ("delete-requested", "deleted"):
        return _verify_deleted(directory, record, owned)
    if len(owned) != 1 or owned[0]["id"] != automation_id:
        raise _not_unique(automation_id, owned)
    if record.stage in ("create-requested", "pause-requested", "stub-active", "stub-paused"):
        return _verify_stub(directory, record, owned[0])
    if record.stage in ("prompt-requested", "prompt-verified"):
        return _verify_prompt(directory, record, owned[0])
    if record.stage in ("activate-requested", "active"):
        return _verify_active(directory, record, owned[0])
    raise ActError("automation-stage-mismatch", f"nothing to verify at stage {record.stage}", path="/automation/stage")


def _verify_deleted(directory: statedir.StateDir, record: AutomationProgress, owned: list[AutomationRecord]) -> Output:
    if not owned:  # verified once, or again after a crash: the automation is gone either way
        if record.stage == "delete-requested":
            _save(directory, record, "deleted")
        return {
            "outcome": "deleted",
            "next": _in_row(directory, verdicts.last_action(directory), "verify-automation")
            or steps.after("bootstrap-rejected", "verify-automation", where(directory, key=record.key)),
        }
    if record.stage == "delete-requested" and [r["id"] for r in owned] == [record.id]:
        return _again(directory, record, _pending(record))  # still there: the delete not applied yet
    raise ActError(
        "automation-not-deleted",
        f"{len(owned)} automation(s) with this loop's key remain: {[r['id'] for r in owned]}; call the "
        "delete payload again and verify",
        details={"payload": delete_payload(_known_id(record))},
    )


def _verify_stub(directory: statedir.StateDir, record: AutomationProgress, observed: AutomationRecord) -> Output:
    automation_id = _known_id(record)
    if observed["status"] == "ACTIVE" and not _differences(
        observed, record, status="ACTIVE", prompt_sha256=record.inert_prompt_sha256
    ):
        # Codex has been seen saving a PAUSED create as ACTIVE: pause it before anything else.
        payload = update_payload(automation_id, status="PAUSED")
        record = _save(directory, record, "stub-active")
        _save(directory, record, "pause-requested", payload)
        return {
            "outcome": "created-active",
            "payload": payload,
            "next": _tool_next(directory, "pause-requested"),
        }
    _require_clean(observed, record, status="PAUSED", prompt_sha256=record.inert_prompt_sha256)
    _save(directory, record, "stub-paused")
    return {
        "outcome": "stub-paused",
        "automation_id": automation_id,
        "next": steps.starting_at("bootstrap", "automation-prompt", where(directory, key=record.key)),
    }


def _verify_prompt(directory: statedir.StateDir, record: AutomationProgress, observed: AutomationRecord) -> Output:
    inert = record.inert_prompt_sha256
    if record.stage == "prompt-requested" and not _differences(observed, record, status="PAUSED", prompt_sha256=inert):
        return _again(directory, record, _pending(record))  # the stub as it was: the prompt not updated yet
    _require_clean(observed, record, status="PAUSED", prompt_sha256=record.rendered_prompt_sha256)
    payload = update_payload(_known_id(record), status="ACTIVE")
    record = _save(directory, record, "prompt-verified")
    _save(directory, record, "activate-requested", payload)
    return {
        "outcome": "prompt-verified",
        "payload": payload,
        "next": _tool_next(directory, "activate-requested"),
    }


def _verify_active(directory: statedir.StateDir, record: AutomationProgress, observed: AutomationRecord) -> Output:
    rendered = record.rendered_prompt_sha256
    if record.stage == "activate-requested" and not _differences(
        observed, record, status="PAUSED", prompt_sha256=rendered
    ):
        return _again(directory, record, _pending(record))  # still PAUSED: the activation not applied yet
    _require_clean(observed, record, status="ACTIVE", prompt_sha256=rendered)
    _save(directory, record, "active")
    current = ledger.read_wakeup(directory)
    in_wakeup = current is not None and current.ended_at is None and current.claims
    pending = read_pending(directory)
    return {
        "outcome": "active",
        "automation_id": _known_id(record),
        # Mid-loop (a remediation's update-automation) the wakeup goes on; after the bootstrap the turn ends.
        "next": steps.after(
            "execute-remediation",
            "verify-automation",
            where(directory, plan_hash=None if pending is None else pending.plan_hash),
        )
        if in_wakeup
        else steps.after("bootstrap", "verify-automation", where(directory, key=record.key), nth=3),
    }


def _pending(record: AutomationProgress) -> Document:
    payload = pending_payload(record)
    if payload is None:  # a *-requested stage saved without its payload: the file was edited
        raise ActError(
            "state-file-invalid",
            f"automation.json is at stage {record.stage} but holds no payload to print again; nothing is written",
            path="/payload",
            details={"state_file": statedir.AUTOMATION},
        )
    return payload


def _not_unique(expected: str, owned: list[AutomationRecord]) -> ActError:
    return ActError(
        "automation-not-unique",
        f"expected exactly automation {expected} with this loop's key, found {[r['id'] for r in owned]}; "
        "stop and tell the person, who removes any other",
        details={"observed": owned},
    )


def _require_clean(
    observed: AutomationRecord, record: AutomationProgress, *, status: str, prompt_sha256: str | None
) -> None:
    found = _differences(observed, record, status=status, prompt_sha256=prompt_sha256)
    if found:
        fields = ", ".join(difference.field for difference in found)
        raise ActError(
            "automation-drift",
            f"the automation differs from what was requested ({fields}); do not activate or continue; tell the person "
            "(a running loop reports state-inconsistency on its next wakeup)",
            details={"differences": [difference._asdict() for difference in found]},
        )
