"""The executor: the next mechanical operation(s) of a validated plan, and nothing else (references/executor.md).

``loop.py execute`` takes the plan the state directory holds (initial,
remediation or finalization), finds its next operation in the plan's own
order, re-checks exactly what that operation depends on, looks for the
operation's evidence in git or on GitHub, writes only when there is none, and
records the operation as done in ``execution.json``. The ledger only says
where to look first: evidence decides, so a crash between a write and its
ledger entry is repaired by the rerun without a second write.

Two kinds of operation are not the executor's to perform:

- ``edit-files``: the agent's one creative step. The executor rechecks the
  path records before it (and records that it did), stops, and on the next
  call rechecks them again before anything is staged. Until the edit is
  observed (a planned path differs from HEAD) every call hands it off again,
  unchanged; a planned file replaced instead of written in place is
  ``edit-not-in-place``;
- the automation steps (``bootstrap-automation``, ``update-automation``,
  ``delete-owned-automation``): Codex's automation tool is called by the agent
  with the payloads the automation commands print (references/hands.md); the
  executor names the command and records the hand-off.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from act.core import statedir
from act.core.errors import ActError
from act.core.state_models import (
    ExecutionFacts,
    ExecutionLedger,
    InitialPlan,
    Intent,
    PendingPlan,
    PlanExecution,
    PlanKind,
    build,
)
from act.edge import progress
from act.edge.ghops import GitHubWriter
from act.edge.gitops import GitWriter
from act.edge.validation import run_commands
from evaluator import markers
from evaluator.canonical import text_digest
from evaluator.render import render_review_body
from evaluator.vocabulary import OperationName
from observe.git.paths import recheck_path_records

LEDGER = "execution.json"
AGENT_OPERATIONS: tuple[OperationName, ...] = ("edit-files",)
# What the agent does at each hand-off (inside a wakeup the command line says the rest of the row).
HANDOFFS: dict[OperationName, str] = {
    "bootstrap-automation": (
        "`loop.py automation-create --state-dir {state_dir} --pr {pr_number}`, then the automation steps SKILL.md gives"
    ),
    "update-automation": "`loop.py verify-automation --state-dir {state_dir}`",
    "delete-owned-automation": "`loop.py automation-delete --state-dir {state_dir}`",
}


def commit_message(kind: PlanKind, *, pr_title: str | None = None, run_id: str, round_number: int) -> str:
    """The commit message, derived only from values the plan binds (references/executor.md).

    The manifest has no message field, so: the initial commit carries the PR
    title (its digest is bound) and the run; a remediation commit names the
    round its review-request template is bound to.
    """
    if kind == "initial":
        return f"{pr_title}\n\ngithub-codex-pr-loop run {run_id}\n"
    return f"Address Codex review findings (round {round_number})\n\ngithub-codex-pr-loop run {run_id}\n"


@dataclass
class Job:
    """What one plan's execution needs; built by the command line from the state directory.

    ``plan`` is the pending plan as its kind's model (``InitialPlan``, ``RemediationPlan`` or
    ``FinalizationPlan``): the job's kind is that type, never a string passed beside it.
    """

    directory: statedir.StateDir
    plan: PendingPlan
    operations: list[OperationName]
    manifest: dict[str, Any]
    checkout: str
    repository: str
    git: Callable[[], GitWriter]
    github: Callable[[], GitHubWriter]
    recheck: Callable[[str, dict[str, Any]], None]  # (operation, ledger entry): raises when what it depends on drifted
    snapshot: dict[str, Any] | None = None  # initial only
    texts: dict[str, str] | None = None  # initial only: the PR title and body the digests bind
    details: dict[str, Any] = field(
        default_factory=dict
    )  # remediation: reply_marker, thread_ids, next_round; finalization: thread_ids

    @property
    def kind(self) -> PlanKind:
        return self.plan.kind

    @property
    def plan_hash(self) -> str:
        return self.plan.plan_hash


def _ledger(directory: statedir.StateDir) -> list[PlanExecution]:
    ledger = directory.read_model_optional(LEDGER, ExecutionLedger)
    if ledger is None:
        return []
    seen: set[str] = set()
    for index, execution in enumerate(ledger.plans):
        if execution.plan_hash in seen:  # which entry says where to start would be a guess
            message = f"plan {execution.plan_hash} has more than one entry"
            raise directory.invalid(LEDGER, [("invalid-value", f"/plans/{index}/plan_hash", message)])
        seen.add(execution.plan_hash)
    return ledger.plans


def ledger_entry(directory: statedir.StateDir, plan_hash: str, kind: PlanKind) -> dict[str, Any]:
    """The plan's entry as a working dict (``kind``, ``done``, ``facts``), checked on its way in and out."""
    for execution in _ledger(directory):
        if execution.plan_hash == plan_hash:
            entry = execution.as_dict()
            del entry["plan_hash"]
            return entry
    facts = {name: None for name in ExecutionFacts.field_names} | {"edit_rechecked": False, "handed_off": []}
    return {"kind": kind, "done": [], "facts": facts}


def save_entry(directory: statedir.StateDir, plan_hash: str, entry: dict[str, Any]) -> None:
    saved = build(PlanExecution, {"plan_hash": plan_hash, **entry})
    others = [execution for execution in _ledger(directory) if execution.plan_hash != plan_hash]
    directory.write_model(LEDGER, build(ExecutionLedger, {"plans": [e.as_dict() for e in [*others, saved]]}))


def next_operation(job: Job, entry: dict[str, Any]) -> OperationName | None:
    return next((operation for operation in job.operations if operation not in entry["done"]), None)


def execute(job: Job, *, only: str | None = None, one: bool = False) -> dict[str, Any]:
    """Perform the next operation(s); stop at the agent's step, a hand-off, the end, or after one with ``one``."""
    entry = ledger_entry(job.directory, job.plan_hash, job.kind)
    first = next_operation(job, entry)
    if only is not None and only != first:
        raise ActError(
            "operation-not-next",
            f"{only} is not the plan's next operation (next: {first}); nothing is done",
            path="/operation",
        )
    performed = []
    while (operation := next_operation(job, entry)) is not None:
        if operation in AGENT_OPERATIONS:
            outcome = _edit_files(job, entry)
            performed.append({"operation": operation, "outcome": outcome})
            if outcome != "done":
                break
        elif operation in HANDOFFS:
            job.recheck(operation, entry)
            entry["done"].append(operation)
            entry["facts"]["handed_off"].append(operation)
            save_entry(job.directory, job.plan_hash, entry)
            performed.append({"operation": operation, "outcome": "handed-off"})
            break
        else:
            progress.say(f"{operation} ({job.operations.index(operation) + 1} of {len(job.operations)} operations)")
            job.recheck(operation, entry)
            outcome = OPERATIONS[operation](job, entry)
            entry["done"].append(operation)
            save_entry(job.directory, job.plan_hash, entry)
            performed.append({"operation": operation, "outcome": outcome})
        if one:
            break
    remaining = next_operation(job, entry)
    return {
        "plan_hash": job.plan_hash,
        "kind": job.kind,
        "performed": performed,
        "done": entry["done"],
        "next_operation": remaining,
        "facts": entry["facts"],
        "next": _next_words(job, entry, performed, remaining),
    }


def _next_words(job: Job, entry: dict[str, Any], performed: list[dict[str, Any]], remaining: str | None) -> str:
    last = performed[-1] if performed else None
    if last and last["operation"] == "edit-files" and last["outcome"] == "awaiting-edit":
        paths = job.manifest["paths"]
        return f"edit exactly these paths, in place (open, truncate, write): {paths}; then `loop.py execute`"
    if last and last["outcome"] == "handed-off":
        return HANDOFFS[last["operation"]].format(
            pr_number=entry["facts"].get("pr_number"), state_dir=job.directory.path
        )
    if remaining is None:
        return "the plan's operations are done"
    return f"`loop.py execute --state-dir {job.directory.path}` (next: {remaining})"


# --- the operations ---------------------------------------------------------


def _edit_files(job: Job, entry: dict[str, Any]) -> str:
    records = job.manifest["path_records"]
    with job.git() as git:
        if not entry["facts"].get("edit_rechecked"):
            job.recheck("edit-files", entry)
            git.require_paths_unchanged(records, "before the edit")
            entry["facts"]["edit_rechecked"] = True
            save_entry(job.directory, job.plan_hash, entry)
            return "awaiting-edit"
        _require_in_place(git.worktree, records)
        changed = git.changed_names()
        if not set(job.manifest["paths"]) & {name for names in changed.values() for name in names}:
            return "awaiting-edit"  # not edited yet (the hand-off may never have been seen): handed off again
        git.require_paths_unchanged(records, "after the edit, before staging")
    entry["done"].append("edit-files")
    save_entry(job.directory, job.plan_hash, entry)
    return "done"


def _require_in_place(worktree: str, records: list[dict[str, Any]]) -> None:
    """A planned file now a different file of the same kind, in the same place: replaced, not written in place.

    ``sed -i``, ``perl -i``, ``mv`` and an editor's rename-save write a new
    file and rename it over the planned one: only the file's identity (the
    resolved target's device and inode) differs from the path record. The
    plan binds that identity and the old file is gone, so no edit can bring
    it back: the plan can never be carried out, and the refusal says so
    (other differences are ``path-records-changed``).
    """
    differences: dict[str, set[str]] = {}
    for path, record_field in recheck_path_records(worktree, records):
        differences.setdefault(path, set()).add(record_field)
    replaced = sorted(
        path
        for path, fields in differences.items()
        if fields == {"resolved_target_sha256"}
        and os.path.isfile(os.path.join(worktree, path))
        and not os.path.islink(os.path.join(worktree, path))
    )
    if replaced:
        raise ActError(
            "edit-not-in-place",
            f"{', '.join(replaced)} was replaced by a new file (sed -i, perl -i, mv, or an editor that saves by "
            "renaming a new file over the old one), not written in place: the approved plan binds each planned "
            "file's identity and the old file is gone, so this plan can never be carried out; nothing is "
            "staged, committed or pushed, and the change stays in the checkout",
            path="/path_records",
            details={"replaced": replaced},
        )


def _fetch_base(job: Job, entry: dict[str, Any]) -> str:
    snapshot = job.snapshot or {}
    with job.git() as git:
        return git.fetch_base(snapshot["remote_name"], snapshot["base_branch"], snapshot["base_sha"])


def _create_branch(job: Job, entry: dict[str, Any]) -> str:
    snapshot = job.snapshot or {}
    with job.git() as git:
        return git.create_branch(snapshot["head_branch"], snapshot["current_head_sha"])


def _run_validation(job: Job, entry: dict[str, Any]) -> str:
    source = job.snapshot if isinstance(job.plan, InitialPlan) else job.manifest
    assert source is not None
    boundary = source["execution_boundary"] if isinstance(job.plan, InitialPlan) else source["execution"]
    results = run_commands(
        source["commands"], job.checkout, boundary["isolation"], job.directory.file(f"validation/{job.plan_hash}")
    )
    entry["facts"]["validation"] = [run.as_dict() for run in results]
    return "passed"


def _stage_files(job: Job, entry: dict[str, Any]) -> str:
    snapshot = job.snapshot or {}
    with job.git() as git:
        return git.stage(snapshot["paths"], snapshot["path_records"])


def _commit(job: Job, entry: dict[str, Any]) -> str:
    if isinstance(job.plan, InitialPlan):
        snapshot, texts = job.snapshot or {}, job.texts or {}
        message = commit_message("initial", pr_title=texts["pr_title"], run_id=job.manifest["run_id"], round_number=0)
        with job.git() as git:
            outcome, head = git.commit(snapshot["current_head_sha"], message, snapshot["paths"])
            if git.tree_diff_sha256(snapshot["base_sha"], head) != snapshot["diff_sha256"]:
                raise ActError(
                    "commit-diff-mismatch",
                    "the commit's change from the base is not the approved diff; nothing is pushed",
                    path="/diff_sha256",
                )
    else:
        manifest = job.manifest
        message = commit_message("remediation", run_id=manifest["run_id"], round_number=job.details["next_round"])
        with job.git() as git:
            git.require_paths_unchanged(manifest["path_records"], "before staging")
            if git.head() == manifest["current_head_sha"]:
                git.stage(manifest["paths"], manifest["path_records"])
            outcome, head = git.commit(manifest["current_head_sha"], message, manifest["paths"])
    entry["facts"]["final_head_sha"] = head
    return outcome


def _push(job: Job, entry: dict[str, Any]) -> str:
    head = entry["facts"].get("final_head_sha")
    source = job.snapshot if isinstance(job.plan, InitialPlan) else job.manifest
    assert source is not None
    with job.git() as git:
        if head is None:  # no commit in this plan: the approved head is pushed
            head = source["current_head_sha"]
            entry["facts"]["final_head_sha"] = head
        expected_old: list[str | None] = [source["current_head_sha"]]
        if isinstance(job.plan, InitialPlan) and source["existing_pr_number"] is None:
            expected_old.append(None)  # a new head branch
        return git.push(source["head_branch"], head, expected_old, source["base_branch"], source["base_sha"])


def _verified_texts(job: Job) -> tuple[str, str]:
    texts = job.texts or {}
    title, body = texts["pr_title"], texts["pr_body"]
    if text_digest(title) != job.manifest["pr_title_sha256"] or text_digest(body) != job.manifest["pr_body_sha256"]:
        raise ActError(
            "pr-text-mismatch",
            "the stored PR title or body is not what the plan's digests bind; nothing is written",
            path="/initial_manifest/pr_title_sha256",
        )
    return title, body


def _require_pull(job: Job, pull: dict[str, Any], head: str) -> None:
    snapshot = job.snapshot or {}
    problems = []
    if text_digest(pull.get("title") or "") != job.manifest["pr_title_sha256"]:
        problems.append("title")
    if text_digest(pull.get("body") or "") != job.manifest["pr_body_sha256"]:
        problems.append("body")
    if (
        pull.get("state") != "open"
        or (pull.get("base") or {}).get("ref") != snapshot["base_branch"]
        or (pull.get("head") or {}).get("ref") != snapshot["head_branch"]
    ):
        problems.append("state or branches")
    if (pull.get("head") or {}).get("sha") != head:
        problems.append("head")
    if problems:
        raise ActError(
            "pull-request-mismatch",
            f"pull request #{pull.get('number')} differs from the plan ({', '.join(problems)}); "
            "nothing more is written",
            path="/pr",
        )


def _create_pr(job: Job, entry: dict[str, Any]) -> str:
    snapshot = job.snapshot or {}
    title, body = _verified_texts(job)
    head = entry["facts"]["final_head_sha"]
    with job.git() as git:
        if git.remote_tip(snapshot["head_branch"]) != head or git.head() != head:
            raise ActError(
                "head-moved",
                "the local head and GitHub's head branch are not the pushed commit; no PR is created",
                path="/head_branch",
            )
    github = job.github()
    # A draft, unless init found that this repository cannot have one (the approval summary said so).
    draft = job.directory.read_model(statedir.INTENT, Intent).draft_pr
    outcome, pull = github.create_pull(title, body, snapshot["head_branch"], snapshot["base_branch"], draft=draft)
    pull = github.pull(pull["number"])
    _require_pull(job, pull, head)
    entry["facts"]["pr_number"] = pull["number"]
    return outcome


def _reuse_pr(job: Job, entry: dict[str, Any]) -> str:
    snapshot = job.snapshot or {}
    head = entry["facts"].get("final_head_sha") or snapshot["current_head_sha"]
    pull = job.github().pull(snapshot["existing_pr_number"])
    _require_pull(job, pull, head)
    entry["facts"]["pr_number"] = pull["number"]
    return "checked"


def _request_codex_review(job: Job, entry: dict[str, Any]) -> str:
    manifest = job.manifest
    template = manifest["review_request_body_template"]
    if text_digest(template) != manifest["review_request_body_template_sha256"]:
        raise ActError(
            "review-template-mismatch",
            "the review template is not the one the plan's digest binds",
            path="/review_request_body_template",
        )
    source = job.snapshot if isinstance(job.plan, InitialPlan) else manifest
    assert source is not None
    head = entry["facts"].get("final_head_sha") or source["current_head_sha"]
    pr_number = entry["facts"]["pr_number"] if isinstance(job.plan, InitialPlan) else manifest["pr_number"]
    round_number = 0 if isinstance(job.plan, InitialPlan) else job.details["next_round"]
    github = job.github()
    with job.git() as git:
        verified = (
            git.head() == head
            and git.remote_tip(source["head_branch"]) == head
            and (github.pull(pr_number).get("head") or {}).get("sha") == head
        )
    if not verified:
        raise ActError(
            "head-not-verified",
            f"the local head, GitHub's head branch and PR #{pr_number} are not all {head}; the request is not posted",
            path="/head_branch",
        )
    body = render_review_body(template, head)
    marker = markers.request_marker(manifest["run_id"], round_number, head)
    user_id = github.user_id()
    outcome, comment = github.post_comment_once(pr_number, user_id, body, marker, "request-codex-review")
    entry["facts"]["request_comment_id"] = comment["id"]
    entry["facts"]["pr_number"] = pr_number
    return outcome


def _reply_to_threads(job: Job, entry: dict[str, Any]) -> str:
    manifest, github = job.manifest, job.github()
    marker = job.details["reply_marker"]
    user_id = github.user_id()
    body = f"Addressed in {entry['facts']['final_head_sha']}.\n{marker}"
    outcomes = [
        github.reply_once(manifest["pr_number"], user_id, thread["root_comment_id"], body, marker)
        for thread in manifest["actionable_threads"]
    ]
    return "written" if "written" in outcomes else "already-done"


def _mark_draft_ready(job: Job, entry: dict[str, Any]) -> str:
    return job.github().mark_ready(job.manifest["pr_number"])


def _resolve_threads(job: Job, entry: dict[str, Any]) -> str:
    github = job.github()
    outcomes = [github.resolve_thread(thread["id"]) for thread in job.manifest["eligible_threads"]]
    return "written" if "written" in outcomes else "already-done"


OPERATIONS: dict[OperationName, Callable[[Job, dict[str, Any]], str]] = {
    "fetch-base": _fetch_base,
    "create-branch": _create_branch,
    "run-validation": _run_validation,
    "stage-files": _stage_files,
    "commit": _commit,
    "push": _push,
    "create-pr": _create_pr,
    "reuse-pr": _reuse_pr,
    "request-codex-review": _request_codex_review,
    "reply-to-codex-threads": _reply_to_threads,
    "mark-draft-ready": _mark_draft_ready,
    "resolve-codex-threads": _resolve_threads,
}
