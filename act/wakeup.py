"""Wakeups start from the automation's own prompt; one wakeup keeps one wakeup id.

``loop.py wakeup`` takes the rendered prompt (a file, standard input, or the
owned automation's prompt read from the registry by the loop key), proves it
is the evaluator's rendering of the checkpoint it carries, collects the state
through the collector, runs ``--state`` and prints the action.

The wakeup id: a new wakeup gets a fresh one; a wakeup that posted a claim
continues under the same id (``wakeup --continue``), because the claim names
it and only a claim naming this wakeup's id is "ours". The ledger
(``wakeup.json``) makes the rule mechanical: see references/hands.md,
"Wakeup ids".
"""

from __future__ import annotations

import sys
from pathlib import Path

from act import risk
from act.build import recurring
from act.command import Context
from act.core import statedir, steps
from act.core.errors import ActError, UsageError
from act.core.jsonedge import Document, Output
from act.core.ledger import current_wakeup, end_wakeup, read_wakeup, record_claim, record_executed, start_wakeup
from act.core.options import given
from act.core.state_models import InitialPlan, RecurringPlan, RemediationPlan, Wakeup, WakeupNotes, build, updated
from act.core.verdicts import ClaimPlan, PlanRemediation, StateVerdict, read_last
from act.edge import judge, sources
from act.edge.ghops import GitHubWriter
from act.plans import carried_approval, read_intent, read_pending, where
from evaluator import markers, policy
from evaluator.canonical import parse_document
from evaluator.errors import Rejected
from evaluator.render import render_prompt
from evaluator.vocabulary import ActionName

_LINE_ONE, _KEY_PREFIX, _CHECKPOINT_PREFIX = (
    line.split("{{")[0] for line in policy.AUTOMATION_PROMPT_TEMPLATE_V1.split("\n")
)


# --- the prompt ----------------------------------------------------------------------------


def checkpoint_from_prompt(text: str) -> tuple[str, Document]:
    """(loop key, bootstrap snapshot) from a rendered prompt, which must be exactly its own rendering."""
    lines = text.split("\n")
    if (
        len(lines) != 3
        or lines[0] != _LINE_ONE
        or not lines[1].startswith(_KEY_PREFIX)
        or not lines[2].startswith(_CHECKPOINT_PREFIX)
    ):
        raise ActError(
            "prompt-not-rendered",
            "the prompt is not the three lines of the loop's v1 prompt (the automation's prompt, byte for byte)",
            path="/prompt",
        )
    key = lines[1][len(_KEY_PREFIX) :]
    try:
        boot = parse_document(lines[2][len(_CHECKPOINT_PREFIX) :].encode("utf-8"))
    except Rejected as error:
        raise ActError(
            "prompt-not-rendered",
            f"the checkpoint on the prompt's third line is not strict JSON: {error}",
            path="/prompt",
        ) from None
    state = boot.get("state")
    if not isinstance(state, dict) or not all(
        isinstance(state.get(k), t)
        for k, t in (("host", str), ("repository", str), ("pr_number", int), ("run_id", str))
    ):
        raise ActError("prompt-not-rendered", "the checkpoint carries no bootstrap state", path="/prompt")
    expected_key = markers.automation_key(state["host"], state["repository"], state["pr_number"], state["run_id"])
    if key != expected_key or render_prompt(key, boot) != text:
        raise ActError(
            "prompt-not-rendered",
            "the prompt is not the evaluator's rendering of the checkpoint it carries (key or bytes differ)",
            path="/prompt",
        )
    return key, boot


def prompt_from_registry(world: sources.World, key: str) -> str:
    """The prompt of the one automation that carries the loop key, read cleanly."""
    owned = [
        o for o in sources.registry(world) if o.record["name"] == key or (o.prompt is not None and key in o.prompt)
    ]
    if len(owned) != 1:
        raise ActError(
            "automation-not-unique",
            f"{len(owned)} automations carry the key {key}; exactly one must. "
            + (
                "None does: the automation was deleted or never created, so this loop is not running; tell the "
                "person (a new loop starts with `loop.py init`)"
                if not owned
                else "Tell the person, who deletes every copy but the loop's own (`loop.py status` names its id)"
            ),
            path="/automation_key",
        )
    observation = owned[0]
    if observation.record["problem"] is not None or observation.prompt is None:
        raise ActError(
            "automation-prompt-unreadable",
            f"automation {observation.record['id']} cannot be read cleanly ({observation.record['problem']})",
            path="/automation_key",
        )
    return observation.prompt


def _prompt_text(ctx: Context) -> str:
    args = ctx.options
    if (args.prompt_file is None) == (args.automation_key is None):
        raise UsageError("give the prompt with --prompt-file PATH (- for standard input) or --automation-key KEY")
    if args.automation_key is not None:
        return prompt_from_registry(ctx.world, args.automation_key)
    try:
        raw = (
            sys.stdin.buffer.read(policy.MAX_DOCUMENT_BYTES + 1)
            if args.prompt_file == "-"
            else Path(given(args.prompt_file, "--prompt-file")).read_bytes()
        )
    except OSError as error:
        raise UsageError(f"cannot read --prompt-file {args.prompt_file!r}: {error.strerror}") from None
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise ActError("prompt-not-rendered", "the prompt is not UTF-8", path="/prompt") from None


def claimed_pending_plan(directory: statedir.StateDir, wakeup: Wakeup) -> RecurringPlan | None:
    """The pending plan, when this wakeup claimed it and has not carried it out: it is embedded again."""
    pending = read_pending(directory)
    if pending is None or isinstance(pending, InitialPlan):
        return None
    claimed = {claim.plan_hash for claim in wakeup.claims}
    return pending if pending.plan_hash in claimed and pending.plan_hash not in wakeup.executed else None


def _claim_posted_before_a_crash(ctx: Context, directory: statedir.StateDir) -> Wakeup | None:
    """The open wakeup with its claim recorded from GitHub, when ``claim`` posted it but died before recording it.

    Only when the open wakeup has recorded no claim, the last verdict is
    ``claim-plan`` for the pending plan, and its claim body names this wakeup's
    id: then exactly one comment by the loop's account with exactly that body is
    this wakeup's own claim. A fresh wakeup would read it as another wakeup's
    (``plan-claimed-by-other-wakeup``); recorded, the same wakeup goes on
    (as ``--continue``). Under the state directory's lock no other command of
    this loop runs, so no live process holds that wakeup.
    """
    current = read_wakeup(directory)
    if current is None or current.ended_at is not None or current.claims:
        return None
    last, pending = read_last(directory), read_pending(directory)
    if not isinstance(last, ClaimPlan) or not isinstance(pending, RecurringPlan) or last.plan_hash != pending.plan_hash:
        return None
    body = last.claim_comment_body
    if f" plan={pending.plan_hash} " not in body or f" wakeup={current.wakeup_id} " not in body:
        return None
    repository = pending.manifest.repository
    with sources.observing():
        github = GitHubWriter(sources.github_client(ctx.world, repository), repository)
        found = github.comments_by(pending.manifest.pr_number, github.user_id(), body.strip())
    if len(found) != 1 or found[0].get("body") != body:
        return None  # none posted (or not exactly one): a fresh wakeup, and `claim` speaks for itself
    return record_claim(directory, current.wakeup_id, pending.plan_hash, last.plan_kind, found[0]["id"])


# --- the commands -------------------------------------------------------------------------


def run_wakeup(ctx: Context) -> Output:
    key, boot = checkpoint_from_prompt(_prompt_text(ctx))
    run_id = boot["state"]["run_id"]
    directory = ctx.state_dir(run_id)
    intent = read_intent(directory)
    if intent.run_id != run_id:
        raise ActError(
            "run-id-mismatch",
            f"the prompt's run {run_id} is not this state directory's run {intent.run_id}; pass the --state-dir of "
            f"run {run_id} (`loop.py list` shows each loop's run id), or omit --state-dir to use its default",
            path="/run_id",
        )
    recovered = None if ctx.options.continue_wakeup else _claim_posted_before_a_crash(ctx, directory)
    continued = ctx.options.continue_wakeup or recovered is not None
    record = recovered or (current_wakeup(directory) if continued else start_wakeup(directory))
    state, notes = sources.wakeup_state(
        ctx.world, intent.checkout, boot, record.wakeup_id, carried_approval(directory, None)
    )
    approved = carried_approval(directory, state["request_key"])
    state["approved_plan_hash"] = approved  # spent once a new request has begun
    embedded = claimed_pending_plan(directory, record) if continued else None
    if embedded is not None:
        boundary = (
            sources.execution_boundary(
                ctx.world,
                intent.checkout,
                state["repository"],
                risk_acceptance_sha256=embedded.manifest.execution.risk_acceptance_sha256,  # the plan's own form
            )
            if isinstance(embedded, RemediationPlan)
            else None
        )
        manifest = embedded.manifest.as_dict()  # embedded in the state as it was judged
        state = recurring.embed(state, manifest, approved_plan_hash=approved, execution_boundary=boundary)
    verdict = judge.evaluate("state", state, risk_record=risk.record_for(directory, state))
    if not verdict.accepted:  # a rejected state justifies nothing: it is not stored
        end_wakeup(directory, "state-rejected")
    result = judge.require_accepted(verdict, "the wakeup state")
    directory.write(statedir.STATE, state)
    directory.write_model(
        statedir.NOTES,
        build(WakeupNotes, {"observed_at": state["observed_at"], "request_key": state["request_key"], **notes}),
    )
    directory.write(statedir.LAST_RESULT, verdict.output)
    if result.action in steps.ENDS_THE_WAKEUP:
        end_wakeup(directory, result.action)
    return {
        "automation_key": key,
        "wakeup_id": record.wakeup_id,
        "continued": continued,
        "embedded_plan_hash": None if embedded is None else embedded.plan_hash,
        "action": result.action,
        "reasons": list(result.reasons),
        "findings": [finding.as_dict() for finding in notes["findings"]],
        "gate_unknowns": [unknown.as_dict() for unknown in notes["gate_unknowns"]],
        "evaluation": verdict.output,
        "next": _next(result, directory, key),
    }


def _next(result: StateVerdict, directory: statedir.StateDir, key: str) -> str:
    action = result.action
    pending = read_pending(directory)
    here = where(directory, key=key)
    if (
        isinstance(result, PlanRemediation)
        and isinstance(pending, RemediationPlan)
        and pending.request_key == result.request_key
        and pending.executed_at is None
    ):
        return (
            f"a remediation plan for this request is pending ({pending.plan_hash[:8]}...): rebuild it with "
            f"{steps.command('plan-remediation', here, '--reuse-pending')}, or choose again: " + steps.row(action, here)
        )
    return steps.row(action, here)


def run_end_wakeup(ctx: Context) -> Output:
    directory = ctx.state_dir()
    ended = end_wakeup(directory, ctx.options.reason)
    return {"wakeup": None if ended is None else ended.as_dict()}


def _pending_hash(directory: statedir.StateDir, plan_hash: str) -> str:
    pending = read_pending(directory)
    if pending is None or isinstance(pending, InitialPlan) or plan_hash != pending.plan_hash:
        raise ActError(
            "claim-plan-not-pending", f"{plan_hash[:80]} is not the pending recurring plan's hash", path="/plan_hash"
        )
    return plan_hash


def run_record_claim(ctx: Context) -> Output:
    if ctx.options.comment_id is not None and ctx.options.comment_id <= 0:
        raise UsageError("--comment-id takes the posted comment's positive id")
    directory = ctx.state_dir()
    plan_hash = _pending_hash(directory, given(ctx.options.plan_hash, "--plan-hash"))
    kind = given(ctx.options.kind, "--kind")
    record = record_claim(directory, current_wakeup(directory).wakeup_id, plan_hash, kind, ctx.options.comment_id)
    return {"wakeup": record.as_dict(), "next": steps.after("claim-plan", "claim", where(directory))}


def run_record_executed(ctx: Context) -> Output:
    directory = ctx.state_dir()
    plan_hash = _pending_hash(directory, given(ctx.options.plan_hash, "--plan-hash"))
    if plan_hash not in {claim.plan_hash for claim in current_wakeup(directory).claims}:
        raise ActError("claim-plan-not-pending", "this wakeup holds no claim for that plan", path="/plan_hash")
    pending = read_pending(directory)
    if pending is not None and not isinstance(pending, InitialPlan):  # its approval is spent
        directory.write_model(statedir.PENDING, updated(pending, executed_at=statedir.now_text()))
    remediation = isinstance(pending, RemediationPlan)
    row: ActionName = "execute-remediation" if remediation else "execute-finalization"
    return {
        "wakeup": record_executed(directory, plan_hash).as_dict(),
        "next": steps.after(row, "record-executed", where(directory, plan_hash=plan_hash)),
    }
