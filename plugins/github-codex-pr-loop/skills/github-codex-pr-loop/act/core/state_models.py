"""The state directory's own files, as typed models (layout: references/hands.md).

Each file the hands keep between commands is one ``Strict`` model, a pydantic
model validated as the evaluator validates its own (``evaluator.models.common.validate``):
every key required, no other key, strict types. The hands read every such
file through its model (``StateDir.read_model``), so a file edited into the
wrong shape is the structured error ``state-file-invalid`` naming the file
and the JSON Pointer, never a guess; and they write the typed values back
(``StateDir.write_model``).

The documents the evaluator judges (``initial.json``, ``state.json``,
``prompt.json``) and its verdicts (``initial-result.json``,
``last-result.json``) are the evaluator's: a document is checked when it is
judged, and ``last-result.json`` is read back through the verdict models of
act/core/verdicts.py, which use the same ``Strict`` base and validator.
"""

from collections.abc import Mapping
from typing import Literal, TypeVar

from evaluator import policy
from evaluator.models.common import (
    BranchName,
    Digest,
    PositiveInt,
    RepoPath,
    RunId,
    Sha,
    Strict,
    Timestamp,
    validate,
)
from evaluator.models.recurring import FinalizationManifest, RemediationManifest
from evaluator.vocabulary import ActionName

PlanKind = Literal["initial", "remediation", "finalization"]
RecurringKind = Literal["remediation", "finalization"]

# The automation's progress, in order (references/hands.md, "The automation").
# Each stage is saved when its payload is printed or when verify-automation
# confirms it; stub-active and prompt-verified are what verify saw, saved
# just before the stage whose payload it then prints.
AutomationStage = Literal[
    "create-requested",
    "stub-active",
    "pause-requested",
    "stub-paused",
    "prompt-rejected",
    "prompt-requested",
    "prompt-verified",
    "activate-requested",
    "active",
    "delete-requested",
    "deleted",
]


class AcceptedRisk(Strict):
    """What the person accepted at ``init`` to run without (act/risk.py): every explicit-form plan stays within it."""

    accepted_at: Timestamp
    unavailable_guarantees: list[str]


class Intent(Strict):
    """``intent.json``: what the person asked for at ``init``, and the run it became."""

    version: Literal[1]
    checkout: str
    repository: str
    base_branch: BranchName
    head_branch: BranchName
    paths: list[RepoPath]
    commands: list[list[str]]
    create_branch: bool
    commit: bool
    push: bool
    mode: policy.WriteMode
    pr_title: str | None
    pr_body: str | None
    reuse_pr_number: PositiveInt | None
    run_id: RunId
    review_request_body_template: str
    created_at: Timestamp
    # Whether create-pr opens a draft: false where GitHub has no drafts (the preflight's finding, shown in
    # the approval summary). The manifest cannot say it (references/prerequisites.md, "Drafts").
    draft_pr: bool = True
    risk_acceptance: AcceptedRisk | None = None  # None: every plan has the isolated form


class Setup(Strict):
    """``setup.json``: how this machine runs the loop, fixed at ``init`` and used by every later command.

    The automation's wakeups run ``loop.py next --state-dir DIR`` with no other flag and perhaps
    another environment: they take the route (gh, its configuration, the API, proxy, CA, registry)
    and the commit identity from here. A later flag that names another value is refused
    (``route-changed``), never silently preferred (references/prerequisites.md).
    """

    version: Literal[1]
    gh: str  # as given or found on PATH; checked as trusted, and resolved, each time it runs
    gh_config_dir: str
    api_url: str
    https_proxy: str | None
    ca_file: str | None
    registry: str | None
    author_name: str | None  # None: a plan that commits nothing
    author_email: str | None
    author_source: str | None


class InitialTexts(Strict):
    """``initial-texts.json``: the PR title and body the initial plan's digests bind."""

    pr_title: str
    pr_body: str


class InitialPlan(Strict):
    """``pending.json`` while the initial plan is the one pending.

    It names the plan by hash only: the manifest itself lives once, in
    ``initial.json``, which is what execute reads and rebuilds against.
    """

    kind: Literal["initial"]
    plan_hash: Digest
    mode: policy.WriteMode
    built_at: Timestamp


class RemediationChoices(Strict):
    """What ``plan-remediation --reuse-pending`` builds the same plan from again."""

    paths: list[RepoPath]
    commands: list[list[str]]
    review_request_body_template: str


class RemediationPlan(Strict):
    """``pending.json`` for a remediation plan; ``executed_at`` once ``record-executed`` spent its approval."""

    kind: Literal["remediation"]
    plan_hash: Digest
    mode: policy.WriteMode
    built_at: Timestamp
    request_key: str
    wakeup_id: RunId
    choices: RemediationChoices
    manifest: RemediationManifest
    executed_at: Timestamp | None


class FinalizationPlan(Strict):
    """``pending.json`` for a finalization plan (phase one or two): it has no choices."""

    kind: Literal["finalization"]
    plan_hash: Digest
    mode: policy.WriteMode
    built_at: Timestamp
    request_key: str
    wakeup_id: RunId
    manifest: FinalizationManifest
    executed_at: Timestamp | None


PendingPlan = InitialPlan | RemediationPlan | FinalizationPlan
RecurringPlan = RemediationPlan | FinalizationPlan
# ``pending.json`` is one of three models; its ``kind`` says which.
PENDING_MODELS: dict[str, type[Strict]] = {
    "initial": InitialPlan,
    "remediation": RemediationPlan,
    "finalization": FinalizationPlan,
}


class Finding(Strict):
    """One actionable Codex finding as the wakeup observed it: for the agent to read, never judged."""

    thread_id: str
    path: str | None
    start_line: int | None
    line: int | None
    priority: Literal["P0", "P1", "P2", "P3"] | None
    text: str
    truncated: bool
    body_sha256: Digest
    position_sha256: Digest


class GateUnknown(Strict):
    """A rule that left a gate unknown, and why (observe/github/gates.py): for the person to check."""

    gate: Literal["approvals", "branch_protection"]
    rule: str
    reason: str


class WakeupNotes(Strict):
    """``notes.json``: what was read beside the state in ``state.json`` (same observation), never judged."""

    observed_at: Timestamp
    request_key: str | None
    findings: list[Finding]
    gate_unknowns: list[GateUnknown]


class NextAgenda(Strict):
    """``next.json``: the wakeup row ``loop.py next`` stopped in for the agent, and the step to go on from."""

    wakeup_id: RunId | None
    row: ActionName
    resume_at: int


class BuiltPlan(Strict):
    """``plans/<hash>.json``: one plan ever built, so a stale approval is recognised."""

    kind: PlanKind
    plan_hash: Digest
    built_at: Timestamp


class Approval(Strict):
    """``approval.json``: the person named this exact hash of the plan then pending."""

    plan_hash: Digest
    kind: PlanKind
    approved_at: Timestamp


class ClaimRecord(Strict):
    """A claim comment this wakeup posted (``record-claim``, ``claim``)."""

    plan_hash: Digest
    kind: policy.ClaimKind
    comment_id: PositiveInt | None
    posted_at: Timestamp


class Wakeup(Strict):
    """``wakeup.json``: the current wakeup (references/hands.md, "Wakeup ids")."""

    wakeup_id: RunId
    started_at: Timestamp
    ended_at: Timestamp | None
    end_reason: str | None
    claims: list[ClaimRecord]
    executed: list[Digest]


class StageReached(Strict):
    stage: AutomationStage
    at: Timestamp


class AutomationProgress(Strict):
    """``automation.json``: the loop's automation, as requested and as last verified."""

    key: str
    pr_number: PositiveInt
    id: str | None
    stage: AutomationStage
    inert_prompt_sha256: Digest
    rendered_prompt_sha256: Digest | None
    history: list[StageReached]
    # The payload printed for the stage it asks for, as JSON text, saved in the same write as that stage:
    # every rerun prints it again, unchanged, until the registry shows its effect (references/hands.md,
    # "The automation"); null once verify-automation saw it.
    payload: str | None = None


class PlannedContent(Strict):
    """A planned path's content when the edit was handed off: its SHA-256, null when absent or not a file."""

    path: RepoPath
    sha256: Digest | None


class ValidationRun(Strict):
    """One validation command's run (its output is kept beside the ledger, under ``validation/``)."""

    exit_status: int
    timed_out: bool
    index: int
    argv: list[str]
    network_namespace: bool


class ExecutionFacts(Strict):
    """What the executor learned while performing a plan; null until the operation that learns it."""

    operations: list[str] | None  # a recurring plan: the operations the evaluator emitted, fixed at the first
    edit_rechecked: bool
    validation: list[ValidationRun] | None
    final_head_sha: Sha | None
    pr_number: PositiveInt | None
    request_comment_id: PositiveInt | None
    reply_marker: str | None
    next_round: PositiveInt | None
    handed_off: list[str]  # the automation steps handed to the agent
    # Saved just before a remediation's commit stages its paths (write-ahead): only then can the index hold
    # this plan's own staging, so only then does a rerun look for it (one git status fewer in every round).
    # Absent in ledgers written before it existed: false.
    staging_begun: bool = False
    # The planned paths' contents when the edit was handed off: a later call that sees them changed knows the
    # edit was made without asking git. Absent in ledgers written before it existed: null.
    edit_baseline: list[PlannedContent] | None = None


class PlanExecution(Strict):
    plan_hash: Digest
    kind: PlanKind
    done: list[str]
    facts: ExecutionFacts


class ExecutionLedger(Strict):
    """``execution.json``: each plan's finished operations (references/executor.md); evidence still decides."""

    plans: list[PlanExecution]


Model = TypeVar("Model", bound=Strict)


def build(model: type[Model], value: Mapping[str, object]) -> Model:
    """A model instance from values the hands made; one that does not fit is a bug, never a file."""
    instance, violations = validate(model, value)
    if violations:
        raise ValueError(f"{model.__name__}: {violations[0].path}: {violations[0].message}")
    result: Model = instance
    return result


def updated(instance: Model, **changes: object) -> Model:
    """A copy of ``instance`` with ``changes`` (nested models given as models), checked again."""
    plain = {name: value.as_dict() if isinstance(value, Strict) else value for name, value in changes.items()}
    return build(type(instance), {**instance.as_dict(), **plain})
