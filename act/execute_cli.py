"""``loop.py execute`` and ``loop.py claim``: the executor's commands (references/executor.md).

``execute`` builds a ``Job`` for the plan the state directory holds and runs
its next operation(s) (act/execute.py). ``claim`` posts the evaluator's claim
comment exactly once and records it, so the same wakeup continues under the
same wakeup id. Before anything is written, each re-checks what it depends
on: the initial plan is rebuilt from fresh observations before ``fetch-base``.
A recurring plan is re-collected (same wakeup id), embedded again and judged
by the evaluator only while its own writes have not yet made it stale: a
remediation before each operation while ``commit`` is not done (and the
checkout's HEAD is still the planned head), a finalization only before its
first mutation. Every later operation (a remediation's push and everything
after it, a finalization's operations after its first) gets the checkpoint
check instead: the request checkpoint, the base, the branches, the remote and
the head (planned or pushed) are checked against a fresh state.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeGuard, TypeVar

from act import execute as core
from act import plans, risk
from act.build import recurring
from act.command import Context
from act.core import ledger, statedir, steps, verdicts
from act.core.errors import ActError
from act.core.jsonedge import Document, Output
from act.core.state_models import InitialPlan, InitialTexts, RecurringKind, RecurringPlan, RemediationPlan
from act.core.verdicts import (
    EXECUTES_PLAN,
    ActionName,
    ClaimPlan,
    ExecuteFinalization,
    ExecuteRemediation,
    ExecutingVerdict,
    StateVerdict,
)
from act.edge import judge, sources
from act.edge.ghops import GitHubWriter
from act.edge.gitops import GitWriter
from evaluator.models.initial import InitialDocument
from evaluator.models.recurring import FinalizationManifest, RemediationManifest
from observe.gh import gh_config_dir

T = TypeVar("T")

# The action that executes phase one of each kind of plan; finish-finalization is phase two of a finalization.
EXECUTING: dict[RecurringKind, ActionName] = {
    "remediation": "execute-remediation",
    "finalization": "execute-finalization",
}
_EXECUTING_ROWS: tuple[ActionName, ...] = ("execute-remediation", "execute-finalization", "finish-finalization")
_CLAIM_KIND = re.compile(r"github-codex-pr-loop-claim run=[0-9a-f]{32} kind=(remediation|finalization|cleanup) ")


def _github(ctx: Context, repository: str) -> GitHubWriter:
    with sources.observing():
        client = sources.github_client(ctx.world, repository)
    return GitHubWriter(client, repository)


def _git(ctx: Context, checkout: str, repository: str) -> GitWriter:
    with sources.observing():
        return GitWriter(
            checkout,
            repository,
            gh_path=ctx.world.gh,
            gh_config_dir=ctx.world.gh_config_dir or gh_config_dir(),
            network=ctx.world.network,
            identity=ctx.world.author,
        )


def _observed(call: Callable[[], T]) -> T:
    """Run an observing call so that observer errors keep their codes."""
    with sources.observing():
        return call()


# --- recurring rechecks --------------------------------------------------------


def _fresh_state(ctx: Context, directory: statedir.StateDir, wakeup_id: str) -> Document:
    intent = plans.read_intent(directory)
    boot = directory.read(statedir.PROMPT)["bootstrap_snapshot"]
    state, _notes = sources.wakeup_state(
        ctx.world, intent.checkout, boot, wakeup_id, plans.carried_approval(directory, None)
    )
    return state


def _judge_with_plan(
    ctx: Context,
    directory: statedir.StateDir,
    pending: RecurringPlan,
    wakeup_id: str,
    state: Document | None = None,
) -> tuple[StateVerdict, judge.Verdict[StateVerdict]]:
    """A fresh state (same wakeup id) with the pending plan embedded, judged: the typed verdict and the judgement."""
    intent = plans.read_intent(directory)
    state = state or _fresh_state(ctx, directory, wakeup_id)
    manifest = pending.manifest.as_dict()  # embedded as it is serialized
    boundary = (
        sources.execution_boundary(
            ctx.world,
            intent.checkout,
            state["repository"],
            risk_acceptance_sha256=pending.manifest.execution.risk_acceptance_sha256,  # the plan's own form
        )
        if isinstance(pending, RemediationPlan)
        else None
    )
    approved = plans.carried_approval(directory, state["request_key"])
    planned = recurring.embed(state, manifest, approved_plan_hash=approved, execution_boundary=boundary)
    verdict = judge.evaluate("state", planned, risk_record=risk.record_for(directory, planned))
    return judge.require_accepted(verdict, "the fresh state with the plan"), verdict


def _recurring_recheck(
    ctx: Context, directory: statedir.StateDir, pending: RecurringPlan, wakeup_id: str
) -> Callable[[str, core.Entry], None]:
    """Before each operation: the evaluator on a fresh state with the plan, until its own writes make it stale."""
    accepted: tuple[ActionName, ...] = (EXECUTING[pending.kind], "finish-finalization")

    def recheck(operation: str, entry: core.Entry) -> None:
        # Staging and committing change the index and refs the execution boundary binds; a
        # finalization's first mutation changes what its plan binds: from then on the plan is
        # stale by design, and its request checkpoint, branches and head are checked instead.
        # The ledger is not the only witness: a crash can fall between a write and its entry, so
        # the plan's own effect seen in git or on GitHub counts as well (never as drift).
        state = None
        if isinstance(pending, RemediationPlan):
            unchanged = "commit" not in entry.done and not _own_git_effect(ctx, pending.manifest, operation, entry)
        else:
            unchanged = not entry.done
            if unchanged:
                state = _fresh_state(ctx, directory, wakeup_id)
                unchanged = not _own_github_effect(pending.manifest, state)
        if not unchanged:
            _require_checkpoint(ctx, directory, pending.manifest, entry, wakeup_id, operation, state)
            return
        result, judged = _judge_with_plan(ctx, directory, pending, wakeup_id, state)
        if not _executes(result, accepted, pending.plan_hash):
            raise ActError(
                "plan-drifted",
                f"on a fresh observation the evaluator emits {result.action} ({', '.join(result.reasons)}), "
                f"not the execution of {pending.plan_hash}; nothing is written",
                details={"evaluation": judged.output},
            )

    return recheck


def _executes(
    verdict: StateVerdict | None, actions: tuple[ActionName, ...], plan_hash: str
) -> TypeGuard[ExecutingVerdict]:
    """Whether ``verdict`` is one of ``actions`` executing exactly the plan ``plan_hash``."""
    return isinstance(verdict, EXECUTES_PLAN) and verdict.action in actions and verdict.plan_hash == plan_hash


def _thread_ids(verdict: StateVerdict | None) -> list[str] | None:
    """The threads an execution verdict names (phase two of a finalization names none)."""
    return list(verdict.thread_ids) if isinstance(verdict, (ExecuteRemediation, ExecuteFinalization)) else None


def _own_git_effect(ctx: Context, manifest: RemediationManifest, operation: str, entry: core.Entry) -> bool:
    """Whether the checkout shows a remediation's own commit or, at the commit, its own staging.

    A crash can fall between the write and its ledger entry: HEAD moved off the
    planned head (the commit made), or, when the commit is the next operation
    and the ledger says its staging began, exactly planned paths staged and
    nothing else changed (``git add`` done, ``git commit`` not). Only ``commit``
    stages in a remediation, and it saves ``staging_begun`` first, so staging
    seen then is this plan's; the commit then checks the path records again.
    """
    directory_checkout = plans.read_intent(ctx.state_dir()).checkout
    with _git(ctx, directory_checkout, manifest.repository) as git:
        if git.head() != manifest.current_head_sha:
            return True
        if operation != "commit" or not entry.facts.staging_begun:
            return False
        changed = git.changed_names()
    staged = set(changed["staged"])
    return bool(staged) and staged <= set(manifest.paths) and not changed["unstaged"] and not changed["untracked"]


def _own_github_effect(manifest: FinalizationManifest, state: Document) -> bool:
    """Whether a fresh state shows a finalization's own writes: the PR made ready, a planned thread resolved.

    A crash can fall between a mutation and its ledger entry; the evaluator
    would then find the plan stale because of its own effect. Each operation
    looks for its evidence again before writing (act/edge/ghops.py), so seeing it
    here only moves the recheck to the request checkpoint, branches and head.
    """
    operations = manifest.operations
    ready = "mark-draft-ready" in operations and manifest.pr_is_draft and state.get("pr_is_draft") is False
    still_open = {thread.get("id") for thread in state.get("eligible_codex_threads") or []}
    resolved = "resolve-codex-threads" in operations and any(
        thread.id not in still_open for thread in manifest.eligible_threads
    )
    return ready or resolved


def _require_checkpoint(
    ctx: Context,
    directory: statedir.StateDir,
    manifest: RemediationManifest | FinalizationManifest,
    entry: core.Entry,
    wakeup_id: str,
    operation: str,
    state: Document | None = None,
) -> None:
    """After the plan's first visible effect it is stale by design: request, branches and head must still be its own."""
    state = state or _fresh_state(ctx, directory, wakeup_id)
    pushed = entry.facts.final_head_sha
    # Before the push is recorded GitHub may show either head: a crash can fall between push and ledger.
    heads = [pushed] if "push" in entry.done else [manifest.current_head_sha, pushed]
    expected = {
        "request_key": manifest.request_key,
        "pr_state": "open",
        "current_base_sha": manifest.base_sha,
        "current_head_branch": manifest.head_branch,
        "current_base_branch": manifest.base_branch,
        "current_remote_name": manifest.remote_name,
    }
    if "request-codex-review" in entry.done or (pushed is not None and state.get("request_head_sha") == pushed):
        del expected["request_key"]  # the next request is posted by now (perhaps just before a crash)
    drift = {name: state.get(name) for name, value in expected.items() if state.get(name) != value}
    drift.update(
        {name: state.get(name) for name in ("current_head_sha", "remote_head_sha") if state.get(name) not in heads}
    )
    if drift:
        raise ActError(
            "plan-drifted",
            f"before {operation}: {', '.join(sorted(drift))} differ from the plan's request checkpoint and head; "
            "nothing is written",
            details={"observed": drift},
        )


# --- execute ---------------------------------------------------------------------


def _initial_job(ctx: Context, directory: statedir.StateDir, pending: InitialPlan) -> core.Job:
    intent = plans.read_intent(directory)
    document = directory.read_model(statedir.INITIAL, InitialDocument)
    snapshot, manifest = document.initial_snapshot, document.initial_manifest

    def recheck(operation: str, entry: core.Entry) -> None:
        if operation == "fetch-base":
            from act.edge import preflight

            plans.rebuild_initial(ctx)  # fresh observations, the evaluator, the approved hash: or plan-changed
            # After the approval and plan checks (their refusals come first), before the first write.
            preflight.run_before_first_write(ctx.world, intent.checkout, snapshot.repository, intent.base_branch)

    return core.Job(
        directory=directory,
        plan=pending,
        operations=core.operation_names(manifest.operations),
        manifest=manifest,
        checkout=intent.checkout,
        repository=snapshot.repository,
        git=lambda: _git(ctx, intent.checkout, snapshot.repository),
        github=lambda: _github(ctx, snapshot.repository),
        recheck=recheck,
        snapshot=snapshot,
        texts=directory.read_model(statedir.INITIAL_TEXTS, InitialTexts),
    )


def _planned_threads(manifest: RemediationManifest | FinalizationManifest) -> list[str]:
    """The plan's threads, by kind: the emitted thread ids must come from them."""
    threads = manifest.actionable_threads if isinstance(manifest, RemediationManifest) else manifest.eligible_threads
    return [thread.id for thread in threads]


def _in_plan_order(emitted: object, planned: list[str]) -> bool:
    """True when ``emitted`` is a list of strings taken from ``planned``, each once, in the plan's order."""
    if not isinstance(emitted, list) or not all(isinstance(item, str) for item in emitted):
        return False
    remaining = iter(planned)
    return all(any(item == candidate for candidate in remaining) for item in emitted)


def _check_emitted_within_plan(
    directory: statedir.StateDir, last: ExecutingVerdict, manifest: RemediationManifest | FinalizationManifest
) -> None:
    """The operations and threads ``last-result.json`` names are the plan's own, in its order.

    The evaluator emits a subset of the manifest's operations and threads, in
    the manifest's order; the file is the hands' own record of that output.
    One edited to add, repeat or reorder an operation (a push before the
    validation) or to name another thread is refused before any write: the
    approval covers the plan, not what a file says later.
    """
    violations = []
    planned_operations = list(manifest.operations)
    if not _in_plan_order(last.operations, planned_operations):
        violations.append(("invalid-value", "/operations", f"not a part of the plan's operations {planned_operations}"))
    planned_threads = _planned_threads(manifest)
    if _thread_ids(last) is not None and not _in_plan_order(_thread_ids(last), planned_threads):
        violations.append(("invalid-value", "/thread_ids", "not a part of the plan's threads, in their order"))
    if violations:
        raise directory.invalid(statedir.LAST_RESULT, violations)


def _recurring_job(ctx: Context, directory: statedir.StateDir, pending: RecurringPlan) -> core.Job:
    intent = plans.read_intent(directory)
    manifest = pending.manifest
    current = ledger.current_wakeup(directory)
    if pending.plan_hash not in {claim.plan_hash for claim in current.claims}:
        raise ActError(
            "plan-not-claimed",
            f"this wakeup holds no claim for {pending.plan_hash}: post it with "
            f"{steps.command('claim', plans.where(directory))} first",
            path="/plan_hash",
        )
    last = verdicts.read_last(directory)
    entry = core.ledger_entry(directory, pending.plan_hash, pending.kind)
    if not entry.done:
        if not _executes(last, (EXECUTING[pending.kind], "finish-finalization"), pending.plan_hash):
            raise ActError(
                "action-not-execute",
                f"the last evaluation emitted {None if last is None else last.action}, not the execution of "
                f"{pending.plan_hash}",
                path="/action",
            )
        _check_emitted_within_plan(directory, last, manifest)
        operations = list(last.operations or manifest.operations)
    else:
        operations = entry.facts.operations or manifest.operations
    entry.learn(operations=operations)
    entry.save()
    thread_ids = _thread_ids(last) or []
    reply_marker = (last.reply_marker if isinstance(last, ExecuteRemediation) else None) or entry.facts.reply_marker
    next_round = None
    if isinstance(pending, RemediationPlan):
        fix_rounds = 0 if last is None else last.fix_rounds
        next_round = fix_rounds + 1 if not entry.done else entry.facts.next_round
        entry.learn(reply_marker=reply_marker, next_round=next_round)
        entry.save()
    return core.Job(
        directory=directory,
        plan=pending,
        operations=core.operation_names(operations),
        manifest=manifest,
        checkout=intent.checkout,
        repository=manifest.repository,
        git=lambda: _git(ctx, intent.checkout, manifest.repository),
        github=lambda: _github(ctx, manifest.repository),
        recheck=_recurring_recheck(ctx, directory, pending, current.wakeup_id),
        details=core.Details(thread_ids=thread_ids, reply_marker=reply_marker, next_round=next_round),
    )


def run_execute(ctx: Context) -> Output:
    directory = ctx.state_dir()
    pending = plans.read_pending(directory)
    if pending is None:
        raise ActError("no-plan", "the state directory holds no plan to execute", path="/plan")
    job = (
        _initial_job(ctx, directory, pending)
        if isinstance(pending, InitialPlan)
        else _recurring_job(ctx, directory, pending)
    )
    with sources.observing():
        result = core.execute(job, only=ctx.options.operation, one=ctx.options.one)
    output = result.as_output(None if isinstance(pending, InitialPlan) else _next_in_wakeup(directory, pending, result))
    if any(p.outcome == "awaiting-edit" for p in result.performed):
        output["edit_safely"] = EDIT_SAFELY
    return output


# How an edit keeps each planned file's identity (the path records bind it, the inode included).
EDIT_SAFELY = (
    "write each listed file in place: open it for writing and overwrite it (Python open(path, 'r+') then truncate, "
    "or open(path, 'w'); the shell's `>`); never `sed -i`, `perl -i`, `mv`, or an editor that saves by writing a new "
    "file and renaming it over the old one: each replaces the file, which the plan sees as a changed inode; create, "
    "delete or rename no other file in the checkout"
)


def _next_in_wakeup(directory: statedir.StateDir, pending: RecurringPlan, result: core.Execution) -> str:
    """The rest of the wakeup row this execution belongs to (act/core/steps.py)."""
    emitted = verdicts.last_action(directory)
    row = emitted if emitted in _EXECUTING_ROWS else EXECUTING[pending.kind]
    here = plans.where(directory, plan_hash=pending.plan_hash)
    performed = result.performed
    if performed and performed[-1].outcome == "awaiting-edit" and isinstance(pending.manifest, RemediationManifest):
        return f"edit exactly these paths, in place: {pending.manifest.paths}; then " + steps.after(row, "edit", here)
    if result.next_operation is not None:
        return f"{steps.command('execute', here)} (next: {result.next_operation})"
    return steps.after(row, "execute", here, nth=2 if row == "execute-remediation" else 1)


# --- claim ------------------------------------------------------------------------


def run_claim(ctx: Context) -> Output:
    """Post the evaluator's claim comment once; record it for this wakeup (then `wakeup --continue`)."""
    directory = ctx.state_dir()
    pending = plans.read_pending(directory)
    last = verdicts.read_last(directory)
    if (
        pending is None
        or isinstance(pending, InitialPlan)
        or not isinstance(last, ClaimPlan)
        or last.plan_hash != pending.plan_hash
    ):
        raise ActError(
            "action-not-claim",
            f"the last evaluation emitted {None if last is None else last.action} for {verdicts.plan_hash_of(last)}, "
            "not claim-plan for the pending plan",
            path="/action",
        )
    current = ledger.current_wakeup(directory)
    result, judged = _judge_with_plan(ctx, directory, pending, current.wakeup_id)  # the request key and plan, fresh
    # After a crash the claim may be posted already: the evaluator then says this wakeup holds it.
    posted_already = _executes(result, (*EXECUTING.values(), "finish-finalization"), pending.plan_hash)
    if not posted_already and (
        not isinstance(result, ClaimPlan) or result.claim_comment_body != last.claim_comment_body
    ):
        raise ActError(
            "plan-drifted",
            f"on a fresh observation the evaluator emits {result.action}, not the same claim; nothing is posted",
            details={"evaluation": judged.output},
        )
    body = last.claim_comment_body
    kind = _CLAIM_KIND.search(body)
    if kind is None:
        raise ActError(
            "claim-body-invalid", "the claim comment body carries no claim marker", path="/claim_comment_body"
        )
    manifest = pending.manifest
    github = _github(ctx, manifest.repository)
    with sources.observing():
        user_id = github.user_id()
        outcome, comment = github.post_comment_once(manifest.pr_number, user_id, body, body.strip(), "claim")
    if not any(claim.plan_hash == pending.plan_hash and claim.comment_id == comment.id for claim in current.claims):
        ledger.record_claim(directory, current.wakeup_id, pending.plan_hash, kind.group(1), comment.id)
    return {
        "outcome": outcome,
        "comment_id": comment.id,
        "wakeup_id": current.wakeup_id,
        "next": steps.after("claim-plan", "claim", plans.where(directory)),
    }
