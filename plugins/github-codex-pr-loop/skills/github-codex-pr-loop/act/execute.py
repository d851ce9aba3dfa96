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

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import NamedTuple, TypeGuard, get_args

from act.core import statedir, steps
from act.core.errors import ActError
from act.core.jsonedge import Output
from act.core.state_models import (
    ExecutionFacts,
    ExecutionLedger,
    InitialPlan,
    InitialTexts,
    Intent,
    PendingPlan,
    PlanExecution,
    PlanKind,
    PlannedContent,
    build,
    updated,
)
from act.edge import progress
from act.edge.ghops import GitHubWriter, Pull
from act.edge.gitops import GitWriter
from act.edge.validation import run_commands
from evaluator import markers
from evaluator.canonical import text_digest
from evaluator.models.initial import InitialManifest, InitialSnapshot
from evaluator.models.plan import PathRecord
from evaluator.models.recurring import FinalizationManifest, RemediationManifest
from evaluator.render import render_review_body
from evaluator.vocabulary import OperationName
from observe.git.paths import recheck_path_records

LEDGER = "execution.json"
AGENT_OPERATIONS: tuple[OperationName, ...] = ("edit-files",)
# What the agent does at each hand-off: the rest of its row from this step (act/core/steps.py).
HANDOFFS: dict[OperationName, tuple[steps.Row, str]] = {
    "bootstrap-automation": ("bootstrap", "automation-create"),
    "update-automation": ("execute-remediation", "verify-automation"),
    "delete-owned-automation": ("finish-finalization", "automation-delete"),
}
_OPERATION_NAMES: frozenset[str] = frozenset(get_args(OperationName))

Manifest = InitialManifest | RemediationManifest | FinalizationManifest


def is_operation(name: str) -> TypeGuard[OperationName]:
    return name in _OPERATION_NAMES


def operation_names(names: list[str]) -> list[OperationName]:
    """The plan's operations as the executor's names; one it does not know is a bug, stopped before anything runs."""
    known = [name for name in names if is_operation(name)]
    if len(known) != len(names):
        unknown = next(name for name in names if not is_operation(name))
        raise ValueError(f"the plan names the operation {unknown!r}, which no executor performs")  # a bug
    return known


def commit_message(kind: PlanKind, *, pr_title: str | None = None, run_id: str, round_number: int) -> str:
    """The commit message, derived only from values the plan binds (references/executor.md).

    The manifest has no message field, so: the initial commit carries the PR
    title (its digest is bound) and the run; a remediation commit names the
    round its review-request template is bound to.
    """
    if kind == "initial":
        return f"{pr_title}\n\ngithub-codex-pr-loop run {run_id}\n"
    return f"Address Codex review findings (round {round_number})\n\ngithub-codex-pr-loop run {run_id}\n"


@dataclass(frozen=True)
class Details:
    """What a recurring plan's execution carries beside its manifest (from the verdict, kept in the ledger)."""

    thread_ids: list[str] = field(default_factory=list)
    reply_marker: str | None = None  # remediation
    next_round: int | None = None  # remediation


class Entry:
    """One plan's ledger entry while it executes: the typed record, replaced (never changed in place) as it grows.

    ``record`` is what ``execution.json`` holds for the plan (``PlanExecution``);
    ``learn`` and ``finish`` replace it with a checked copy, ``save`` writes it.
    """

    def __init__(self, directory: statedir.StateDir, record: PlanExecution) -> None:
        self.directory = directory
        self.record = record

    @property
    def done(self) -> list[str]:
        return self.record.done

    @property
    def facts(self) -> ExecutionFacts:
        return self.record.facts

    def learn(self, **facts: object) -> None:
        """Record facts (``ExecutionFacts`` fields); a value that does not fit is a bug, never saved."""
        self.record = updated(self.record, facts=updated(self.record.facts, **facts))

    def finish(self, operation: str) -> None:
        self.record = updated(self.record, done=[*self.record.done, operation])

    def save(self) -> None:
        save_entry(self.directory, self.record)


@dataclass(frozen=True)
class Job:
    """What one plan's execution needs; built by the command line from the state directory.

    ``plan`` is the pending plan as its kind's model (``InitialPlan``, ``RemediationPlan`` or
    ``FinalizationPlan``): the job's kind is that type, never a string passed beside it.
    ``manifest`` is the plan's manifest as the evaluator's model of it.
    """

    directory: statedir.StateDir
    plan: PendingPlan
    operations: list[OperationName]
    manifest: Manifest
    checkout: str
    repository: str
    git: Callable[[], GitWriter]
    github: Callable[[], GitHubWriter]
    recheck: Callable[[str, Entry], None]  # (operation, ledger entry): raises when what it depends on drifted
    snapshot: InitialSnapshot | None = None  # initial only
    texts: InitialTexts | None = None  # initial only: the PR title and body the digests bind
    details: Details = field(default_factory=Details)  # recurring only

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


def ledger_entry(directory: statedir.StateDir, plan_hash: str, kind: PlanKind) -> Entry:
    """The plan's entry (``kind``, ``done``, ``facts``), checked on its way in and out; a fresh one if none."""
    for execution in _ledger(directory):
        if execution.plan_hash == plan_hash:
            return Entry(directory, execution)
    facts = ExecutionFacts(
        operations=None,
        edit_rechecked=False,
        validation=None,
        final_head_sha=None,
        pr_number=None,
        request_comment_id=None,
        reply_marker=None,
        next_round=None,
        handed_off=[],
    )
    return Entry(directory, PlanExecution(plan_hash=plan_hash, kind=kind, done=[], facts=facts))


def save_entry(directory: statedir.StateDir, entry: PlanExecution) -> None:
    saved = build(PlanExecution, entry.as_dict())
    others = [execution for execution in _ledger(directory) if execution.plan_hash != entry.plan_hash]
    directory.write_model(LEDGER, build(ExecutionLedger, {"plans": [e.as_dict() for e in [*others, saved]]}))


def next_operation(job: Job, entry: Entry) -> OperationName | None:
    return next((operation for operation in job.operations if operation not in entry.done), None)


class Performed(NamedTuple):
    operation: OperationName
    outcome: str

    def as_output(self) -> Output:
        return {"operation": self.operation, "outcome": self.outcome}


class Execution(NamedTuple):
    """What one ``execute`` did: the plan's operations performed now, what is done, what comes next."""

    plan_hash: str
    kind: PlanKind
    performed: list[Performed]
    done: list[str]
    next_operation: OperationName | None
    facts: ExecutionFacts
    next: str

    def as_output(self, next_words: str | None = None) -> Output:
        return {
            "plan_hash": self.plan_hash,
            "kind": self.kind,
            "performed": [p.as_output() for p in self.performed],
            "done": self.done,
            "next_operation": self.next_operation,
            "facts": self.facts.as_dict(),
            "next": self.next if next_words is None else next_words,
        }


def execute(job: Job, *, only: str | None = None, one: bool = False) -> Execution:
    """Perform the next operation(s); stop at the agent's step, a hand-off, the end, or after one with ``one``."""
    entry = ledger_entry(job.directory, job.plan_hash, job.kind)
    first = next_operation(job, entry)
    if only is not None and only != first:
        raise ActError(
            "operation-not-next",
            f"{only} is not the plan's next operation (next: {first}); nothing is done",
            path="/operation",
        )
    performed: list[Performed] = []
    while (operation := next_operation(job, entry)) is not None:
        if operation in AGENT_OPERATIONS:
            outcome = _edit_files(job, entry)
            performed.append(Performed(operation, outcome))
            if outcome != "done":
                break
        elif operation in HANDOFFS:
            job.recheck(operation, entry)
            entry.finish(operation)
            entry.learn(handed_off=[*entry.facts.handed_off, operation])
            entry.save()
            performed.append(Performed(operation, "handed-off"))
            break
        else:
            progress.say(f"{operation} ({job.operations.index(operation) + 1} of {len(job.operations)} operations)")
            job.recheck(operation, entry)
            outcome = OPERATIONS[operation](job, entry)
            entry.finish(operation)
            entry.save()
            performed.append(Performed(operation, outcome))
        if one:
            break
    remaining = next_operation(job, entry)
    return Execution(
        plan_hash=job.plan_hash,
        kind=job.kind,
        performed=performed,
        done=entry.done,
        next_operation=remaining,
        facts=entry.facts,
        next=_next_words(job, entry, performed, remaining),
    )


def _next_words(job: Job, entry: Entry, performed: list[Performed], remaining: str | None) -> str:
    last = performed[-1] if performed else None
    here = steps.Where(state_dir=job.directory.path, plan_hash=job.plan_hash, pr_number=entry.facts.pr_number)
    if last and last.operation == "edit-files" and last.outcome == "awaiting-edit":
        paths = _paths(job)
        edit = f"edit exactly these paths, in place (open, truncate, write): {paths}; then "
        return edit + steps.after("execute-remediation", "edit", here)
    if last and last.outcome == "handed-off":
        row, step = HANDOFFS[last.operation]
        return steps.starting_at(row, step, here)
    if remaining is None:
        return "the plan's operations are done"
    return f"{steps.command('execute', here)} (next: {remaining})"


def _paths(job: Job) -> list[str]:
    """The planned paths: the initial snapshot's, or a remediation manifest's."""
    if isinstance(job.manifest, RemediationManifest):
        return list(job.manifest.paths)
    return list(_snapshot(job).paths)


def _snapshot(job: Job) -> InitialSnapshot:
    if job.snapshot is None:
        raise ValueError("the initial plan's snapshot is missing")  # a bug (internal-error)
    return job.snapshot


def _texts(job: Job) -> InitialTexts:
    if job.texts is None:
        raise ValueError("the initial plan's PR title and body are missing")  # a bug (internal-error)
    return job.texts


def _initial_manifest(job: Job) -> InitialManifest:
    if not isinstance(job.manifest, InitialManifest):
        raise ValueError("the plan is not an initial plan")  # a bug (internal-error)
    return job.manifest


def _remediation_manifest(job: Job) -> RemediationManifest:
    if not isinstance(job.manifest, RemediationManifest):
        raise ValueError("the plan is not a remediation plan")  # a bug (internal-error)
    return job.manifest


def _finalization_manifest(job: Job) -> FinalizationManifest:
    if not isinstance(job.manifest, FinalizationManifest):
        raise ValueError("the plan is not a finalization plan")  # a bug (internal-error)
    return job.manifest


def _next_round(job: Job) -> int:
    if job.details.next_round is None:
        raise ValueError("the remediation's round is not recorded")  # a bug (internal-error)
    return job.details.next_round


# --- the operations ---------------------------------------------------------


def _edit_files(job: Job, entry: Entry) -> str:
    manifest = _remediation_manifest(job)
    records = manifest.path_records
    with job.git() as git:
        if not entry.facts.edit_rechecked:
            job.recheck("edit-files", entry)
            git.require_paths_unchanged(records, "before the edit")
            baseline = [content.as_dict() for content in _planned_contents(git.worktree, manifest.paths)]
            entry.learn(edit_rechecked=True, edit_baseline=baseline)
            entry.save()
            return "awaiting-edit"
        _require_in_place(git.worktree, records)
        if not _edited(git, manifest.paths, entry.facts.edit_baseline):
            return "awaiting-edit"  # not edited yet (the hand-off may never have been seen): handed off again
        git.require_paths_unchanged(records, "after the edit, before staging")
    entry.finish("edit-files")
    entry.save()
    return "done"


def _planned_contents(worktree: str, paths: list[str]) -> list[PlannedContent]:
    """Each planned path's content digest now (null: absent, or not a regular file)."""
    contents = []
    for path in paths:
        full = os.path.join(worktree, path)
        digest = None
        if os.path.isfile(full):
            with open(full, "rb") as handle:
                digest = hashlib.file_digest(handle, "sha256").hexdigest()
        contents.append(PlannedContent(path=path, sha256=digest))
    return contents


def _edited(git: GitWriter, paths: list[str], baseline: list[PlannedContent] | None) -> bool:
    """Whether a planned path was changed: since the hand-off (no git needed), or else against HEAD and index.

    The usual edit comes after the hand-off, and the contents show it. Unchanged contents may still be an
    edit made before the hand-off (an agent that fixed first), or a ledger from before the baseline was kept:
    git's staged, unstaged and untracked names decide then.
    """
    if baseline is not None and _planned_contents(git.worktree, paths) != baseline:
        return True
    changed = git.changed_names()
    return bool(set(paths) & {name for names in changed.values() for name in names})


def _require_in_place(worktree: str, records: list[PathRecord]) -> None:
    """A planned file now a different file of the same kind, in the same place: replaced, not written in place.

    ``sed -i``, ``perl -i``, ``mv`` and an editor's rename-save write a new
    file and rename it over the planned one: only the file's identity (the
    resolved target's device and inode) differs from the path record. The
    plan binds that identity and the old file is gone, so no edit can bring
    it back: the plan can never be carried out, and the refusal says so
    (other differences are ``path-records-changed``).
    """
    differences: dict[str, set[str]] = {}
    for path, record_field in recheck_path_records(worktree, [record.as_dict() for record in records]):
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


def _fetch_base(job: Job, entry: Entry) -> str:
    snapshot = _snapshot(job)
    with job.git() as git:
        return git.fetch_base(snapshot.remote_name, snapshot.base_branch, snapshot.base_sha)


def _create_branch(job: Job, entry: Entry) -> str:
    snapshot = _snapshot(job)
    with job.git() as git:
        return git.create_branch(snapshot.head_branch, snapshot.current_head_sha)


def _run_validation(job: Job, entry: Entry) -> str:
    if isinstance(job.plan, InitialPlan):
        snapshot = _snapshot(job)
        commands, isolation = snapshot.commands, snapshot.execution_boundary.isolation
    else:
        manifest = _remediation_manifest(job)
        commands, isolation = manifest.commands, manifest.execution.isolation
    results = run_commands(
        [command.as_dict() for command in commands],
        job.checkout,
        isolation,
        job.directory.file(f"validation/{job.plan_hash}"),
    )
    entry.learn(validation=[run.as_dict() for run in results])
    return "passed"


def _stage_files(job: Job, entry: Entry) -> str:
    snapshot = _snapshot(job)
    with job.git() as git:
        return git.stage(snapshot.paths, snapshot.path_records)


def _commit(job: Job, entry: Entry) -> str:
    if isinstance(job.plan, InitialPlan):
        snapshot, texts, initial = _snapshot(job), _texts(job), _initial_manifest(job)
        message = commit_message("initial", pr_title=texts.pr_title, run_id=initial.run_id, round_number=0)
        with job.git() as git:
            outcome, head = git.commit(snapshot.current_head_sha, message, snapshot.paths)
            if git.tree_diff_sha256(snapshot.base_sha, head) != snapshot.diff_sha256:
                raise ActError(
                    "commit-diff-mismatch",
                    "the commit's change from the base is not the approved diff; nothing is pushed",
                    path="/diff_sha256",
                )
    else:
        manifest = _remediation_manifest(job)
        message = commit_message("remediation", run_id=manifest.run_id, round_number=_next_round(job))
        with job.git() as git:
            git.require_paths_unchanged(manifest.path_records, "before staging")
            if git.head() == manifest.current_head_sha:
                if not entry.facts.staging_begun:
                    entry.learn(staging_begun=True)
                    entry.save()
                git.stage(manifest.paths, manifest.path_records)
            outcome, head = git.commit(manifest.current_head_sha, message, manifest.paths)
    entry.learn(final_head_sha=head)
    return outcome


def _push(job: Job, entry: Entry) -> str:
    head = entry.facts.final_head_sha
    source = _snapshot(job) if isinstance(job.plan, InitialPlan) else _remediation_manifest(job)
    with job.git() as git:
        if head is None:  # no commit in this plan: the approved head is pushed
            head = source.current_head_sha
            entry.learn(final_head_sha=head)
        expected_old: list[str | None] = [source.current_head_sha]
        if isinstance(source, InitialSnapshot) and source.existing_pr_number is None:
            expected_old.append(None)  # a new head branch
        return git.push(source.head_branch, head, expected_old, source.base_branch, source.base_sha)


def _verified_texts(job: Job) -> tuple[str, str]:
    texts, manifest = _texts(job), _initial_manifest(job)
    title, body = texts.pr_title, texts.pr_body
    if text_digest(title) != manifest.pr_title_sha256 or text_digest(body) != manifest.pr_body_sha256:
        raise ActError(
            "pr-text-mismatch",
            "the stored PR title or body is not what the plan's digests bind; nothing is written",
            path="/initial_manifest/pr_title_sha256",
        )
    return title, body


def _require_pull(job: Job, pull: Pull, head: str) -> None:
    snapshot, manifest = _snapshot(job), _initial_manifest(job)
    problems = []
    if text_digest(pull.title or "") != manifest.pr_title_sha256:
        problems.append("title")
    if text_digest(pull.body or "") != manifest.pr_body_sha256:
        problems.append("body")
    if pull.state != "open" or pull.base_ref != snapshot.base_branch or pull.head_ref != snapshot.head_branch:
        problems.append("state or branches")
    if pull.head_sha != head:
        problems.append("head")
    if problems:
        raise ActError(
            "pull-request-mismatch",
            f"pull request #{pull.number} differs from the plan ({', '.join(problems)}); nothing more is written",
            path="/pr",
        )


def _create_pr(job: Job, entry: Entry) -> str:
    snapshot = _snapshot(job)
    title, body = _verified_texts(job)
    head = entry.facts.final_head_sha
    with job.git() as git:
        if git.remote_tip(snapshot.head_branch) != head or git.head() != head:
            raise ActError(
                "head-moved",
                "the local head and GitHub's head branch are not the pushed commit; no PR is created",
                path="/head_branch",
            )
    assert head is not None  # the remote tip is a commit
    github = job.github()
    # A draft, unless init found that this repository cannot have one (the approval summary said so).
    draft = job.directory.read_model(statedir.INTENT, Intent).draft_pr
    outcome, created = github.create_pull(title, body, snapshot.head_branch, snapshot.base_branch, draft=draft)
    pull = github.pull(created.number)
    _require_pull(job, pull, head)
    entry.learn(pr_number=pull.number)
    return outcome


def _reuse_pr(job: Job, entry: Entry) -> str:
    snapshot = _snapshot(job)
    head = entry.facts.final_head_sha or snapshot.current_head_sha
    if snapshot.existing_pr_number is None:
        raise ValueError("the plan reuses a PR the snapshot does not name")  # a bug (internal-error)
    pull = job.github().pull(snapshot.existing_pr_number)
    _require_pull(job, pull, head)
    entry.learn(pr_number=pull.number)
    return "checked"


def _request_codex_review(job: Job, entry: Entry) -> str:
    if isinstance(job.plan, InitialPlan):
        initial, snapshot = _initial_manifest(job), _snapshot(job)
        template, template_sha256, run_id = (
            initial.review_request_body_template,
            initial.review_request_body_template_sha256,
            initial.run_id,
        )
        planned_head, head_branch, planned_pr, round_number = (
            snapshot.current_head_sha,
            snapshot.head_branch,
            entry.facts.pr_number,
            0,
        )
    else:
        manifest = _remediation_manifest(job)
        template, template_sha256, run_id = (
            manifest.review_request_body_template,
            manifest.review_request_body_template_sha256,
            manifest.run_id,
        )
        planned_head, head_branch, planned_pr, round_number = (
            manifest.current_head_sha,
            manifest.head_branch,
            manifest.pr_number,
            _next_round(job),
        )
    if text_digest(template) != template_sha256:
        raise ActError(
            "review-template-mismatch",
            "the review template is not the one the plan's digest binds",
            path="/review_request_body_template",
        )
    head = entry.facts.final_head_sha or planned_head
    if planned_pr is None:
        raise ValueError("no pull request is recorded for the plan yet")  # a bug (internal-error)
    pr_number = planned_pr
    github = job.github()
    with job.git() as git:
        verified = (
            git.head() == head and git.remote_tip(head_branch) == head and github.pull(pr_number).head_sha == head
        )
    if not verified:
        raise ActError(
            "head-not-verified",
            f"the local head, GitHub's head branch and PR #{pr_number} are not all {head}; the request is not posted",
            path="/head_branch",
        )
    body = render_review_body(template, head)
    marker = markers.request_marker(run_id, round_number, head)
    user_id = github.user_id()
    outcome, comment = github.post_comment_once(pr_number, user_id, body, marker, "request-codex-review")
    entry.learn(request_comment_id=comment.id, pr_number=pr_number)
    return outcome


def _reply_to_threads(job: Job, entry: Entry) -> str:
    manifest, github = _remediation_manifest(job), job.github()
    marker = job.details.reply_marker
    user_id = github.user_id()
    body = f"Addressed in {entry.facts.final_head_sha}.\n{marker}"
    if marker is None:
        raise ValueError("the remediation's reply marker is not recorded")  # a bug (internal-error)
    outcomes = [
        github.reply_once(manifest.pr_number, user_id, thread.root_comment_id, body, marker)
        for thread in manifest.actionable_threads
    ]
    return "written" if "written" in outcomes else "already-done"


def _mark_draft_ready(job: Job, entry: Entry) -> str:
    return job.github().mark_ready(_finalization_manifest(job).pr_number)


def _resolve_threads(job: Job, entry: Entry) -> str:
    github = job.github()
    outcomes = [github.resolve_thread(thread.id) for thread in _finalization_manifest(job).eligible_threads]
    return "written" if "written" in outcomes else "already-done"


OPERATIONS: dict[OperationName, Callable[[Job, Entry], str]] = {
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
