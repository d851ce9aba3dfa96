"""Plans, built not written: init, plan-remediation, plan-finalization, approve, status.

And the initial plan's rebuild, which ``loop.py execute`` runs immediately before fetch-base.

Each command observes through act/edge/sources.py, builds with act/build/, has the
evaluator judge the result in a separate process (act/edge/judge.py), records what
it built in the state directory, and prints the approval summary. The
protocol and the state directory: references/hands.md.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Literal, NamedTuple, cast

from act import aftermath, risk
from act.build import initial as initial_builder
from act.build import recurring
from act.command import HEX64, Context
from act.core import ledger, statedir, statelock, steps, verdicts
from act.core.errors import ActError, UsageError
from act.core.jsonedge import Document, Output
from act.core.options import given
from act.core.state_models import (
    PENDING_MODELS,
    Approval,
    AutomationProgress,
    BuiltPlan,
    FinalizationPlan,
    Finding,
    GateUnknown,
    InitialPlan,
    InitialTexts,
    Intent,
    PendingPlan,
    RecurringKind,
    RecurringPlan,
    RemediationChoices,
    RemediationPlan,
    Setup,
    Wakeup,
    WakeupNotes,
    build,
    updated,
)
from act.core.verdicts import ActionName, StateVerdict, last_action
from act.edge import diff, inference, judge, sources
from act.edge.diff import changes
from act.text import summary, summary_diff
from evaluator import markers
from evaluator.models.common import validate
from evaluator.models.recurring import RecurringState

if TYPE_CHECKING:
    from act.edge.preflight import CommitIdentity  # imported by run_init: other commands need none of git

# What the evaluator may emit on a state with a freshly built plan of each kind embedded: anything else and
# the plan is not recorded.
PLAN_ACTIONS: dict[RecurringKind, frozenset[ActionName]] = {
    "remediation": frozenset({"await-approval", "claim-plan", "execute-remediation"}),
    "finalization": frozenset({"await-approval", "claim-plan", "execute-finalization", "finish-finalization"}),
}


# --- shared ------------------------------------------------------------------


def command_argvs(texts: Sequence[str]) -> list[list[str]]:
    """Each --command is one JSON array of strings (argv, argv[0] absolute), in execution order."""
    argvs = []
    for text in texts:
        try:
            argv = json.loads(text)
        except ValueError:
            argv = None
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise UsageError(f"--command takes one JSON array of strings, got {text[:60]!r}")
        argvs.append(argv)
    return argvs


def _text(value: str | None, file: str | None, flag: str) -> str | None:
    if value is not None and file is not None:
        raise UsageError(f"give --{flag} or --{flag}-file, not both")
    if file is None:
        return value
    try:
        return Path(file).read_bytes().decode("utf-8")
    except OSError as error:
        raise UsageError(f"cannot read --{flag}-file {file!r}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise UsageError(f"--{flag}-file {file!r} is not UTF-8") from None


def read_intent(directory: statedir.StateDir) -> Intent:
    return directory.read_model(statedir.INTENT, Intent)


def read_pending(directory: statedir.StateDir) -> PendingPlan | None:
    """The plan awaiting approval or execution, checked against its kind's model."""
    return cast("PendingPlan | None", directory.read_model_optional(statedir.PENDING, PENDING_MODELS))


def record_plan(directory: statedir.StateDir, pending: PendingPlan) -> PendingPlan | None:
    """Make ``pending`` the plan awaiting approval; every plan ever built stays listed by hash."""
    previous = read_pending(directory)
    built = build(BuiltPlan, {"kind": pending.kind, "plan_hash": pending.plan_hash, "built_at": pending.built_at})
    directory.write_model(f"{statedir.PLANS}/{pending.plan_hash}.json", built)
    directory.write_model(statedir.PENDING, pending)
    return previous


def recorded_approval(directory: statedir.StateDir, kinds: tuple[str, ...]) -> str | None:
    approval = directory.read_model_optional(statedir.APPROVAL, Approval)
    return approval.plan_hash if approval is not None and approval.kind in kinds else None


def carried_approval(directory: statedir.StateDir, request_key: str | None) -> str | None:
    """The approval a recurring state carries: the person's, while it names the pending plan.

    Only while that plan is pending for the current request and not yet
    carried out: an approval is for one plan, so once the plan is executed, or
    a new request (a new round) has begun, it is spent, and no later plan
    inherits it. Whether it names the plan embedded is the evaluator's call.
    """
    approved = recorded_approval(directory, ("remediation", "finalization"))
    pending = read_pending(directory)
    if (
        approved is None
        or pending is None
        or isinstance(pending, InitialPlan)
        or approved != pending.plan_hash
        or pending.executed_at is not None
    ):
        return None
    return approved if request_key is None or pending.request_key == request_key else None


# --- preflight: the setup every planned write needs, checked before any approval ------------

# What each fine-grained permission is for, and its name on GitHub's token page.
TOKEN_PERMISSIONS = {
    "contents": ("Contents", "push the branch and every fix"),
    "pull_requests": ("Pull requests", "open the PR, ask for reviews, reply to and resolve threads, mark it ready"),
}
_SCOPE = re.compile(r"[a-z][a-z0-9:_-]{0,63}")


class TokenAccess(NamedTuple):
    """What the token may do on the repository (observe/github/permissions.py, ``repository_access``)."""

    private: bool
    owner_type: str
    account_push: bool
    scopes: list[str] | None  # None: not a classic token
    probes: dict[str, str | list[str]]  # each probed permission: "granted", or the permission sets GitHub named


def setup_preflight(ctx: Context, intent: Intent) -> bool:
    """The read-only checks ``init`` makes before building the plan and ``execute`` again before fetch-base.

    One structured error for the first problem, naming what is missing and
    what fixes it; nothing on GitHub or in the checkout changes. Returns what
    the plan depends on: whether create-pr can open a draft (the intent's ``draft_pr``).
    """
    _require_validation_isolation(intent)
    from observe.github.permissions import repository_access

    with sources.observing():
        found = repository_access(sources.github_client(ctx.world, intent.repository))  # raw: no cache
    access = TokenAccess(
        private=found["private"],
        owner_type=found["owner_type"],
        account_push=found["account_push"],
        scopes=found["scopes"],
        probes=found["probes"],
    )
    _require_token_access(intent.repository, access)
    # GitHub has no drafts in a private repository of a personal account (Free or Pro alike); an organization's
    # plan is not readable by its members, so there a draft is assumed possible (references/prerequisites.md).
    return not (access.private and access.owner_type == "User")


def _require_validation_isolation(intent: Intent) -> None:
    from act.edge import validation
    from act.edge.sandbox import isolation_advice

    # An accepted risk gives up network isolation, and the plan says so (act/risk.py).
    if intent.commands and intent.risk_acceptance is None and not validation.network_isolation_available():
        raise ActError(
            "isolation-unavailable",
            "the validation commands must run without network (unshare --net) and this machine cannot start a "
            "command in a new network namespace (no /usr/bin/unshare, or user namespaces are not allowed); no plan "
            "is built. Run the loop where user namespaces are allowed, or run the validation yourself and give no "
            '--command (references/prerequisites.md, "Validation isolation").' + isolation_advice(),
            path="/commands",
        )


def _require_token_access(repository: str, access: TokenAccess) -> None:
    if not access.account_push:
        raise ActError(
            "github-permission-missing",
            f"the GitHub account the token belongs to cannot push to {repository} (its permissions.push is false); "
            "ask an owner of the repository for the Write role, then run `loop.py init` again",
            path="/repository",
            details={"missing": ["account-write-role"]},
        )
    scopes = access.scopes
    if scopes is not None:  # a classic token: its scopes are all it may do
        scopes = [scope for scope in scopes if _SCOPE.fullmatch(scope)]
        if "repo" not in scopes and (access.private or "public_repo" not in scopes):
            needed = "repo" if access.private else "public_repo (or repo)"
            raise ActError(
                "github-permission-missing",
                f"the classic token lacks the {needed} scope (it has: {', '.join(scopes) or 'none'}); run "
                "`gh auth refresh --hostname github.com --scopes repo`, or create a classic token with the repo "
                "scope, then run `loop.py init` again",
                path="/repository",
                details={"missing": [f"scope:{needed.split()[0]}"]},
            )
        return
    missing = [name for name, result in access.probes.items() if result != "granted"]
    if missing:
        named = ", ".join(f"{name}: write" for name in missing)
        grant = "; ".join(
            f"{TOKEN_PERMISSIONS[name][0]}: Read and write (to {TOKEN_PERMISSIONS[name][1]})" for name in missing
        )
        raise ActError(
            "github-permission-missing",
            f"the token lacks {named} on {repository} (GitHub names "
            f"{'; '.join(s for name in missing for s in access.probes[name])}); give the fine-grained token "
            f"{grant}, or use a classic token with the repo scope, then run `loop.py init` again",
            path="/repository",
            details={"missing": [f"{name}:write" for name in missing]},
        )


# --- init ----------------------------------------------------------------------


class Asked(NamedTuple):
    """What ``init``'s flags ask for beyond the branches: the checkout and the PR texts (None: a reused PR's)."""

    checkout: str
    pr_title: str | None
    pr_body: str | None


def _asked(ctx: Context) -> Asked:
    args = ctx.options
    title, body = _text(args.title, args.title_file, "title"), _text(args.body, args.body_file, "body")
    if args.reuse_pr is not None:
        if args.reuse_pr <= 0:
            raise UsageError("--reuse-pr takes a positive PR number")
        if title is not None or body is not None:
            raise UsageError(
                "a reused PR keeps its title and body: the plan hashes the current ones, so give no --title or --body"
            )
    elif title is None or body is None:
        raise UsageError("a new PR needs --title (or --title-file) and --body (or --body-file)")
    elif not title.strip() or "\n" in title or "\r" in title:
        raise UsageError("a PR title is one non-empty line")
    if not args.path:
        raise UsageError("name at least one --path the change touches")
    return Asked(str(Path(given(args.checkout, "--checkout")).resolve()), title, body)


# The flag that gives each of the intent's values (inferred ones included: a flag overrides them).
_INTENT_FLAGS = {
    "checkout": "--checkout",
    "repository": "--repository",
    "base_branch": "--base",
    "head_branch": "--head",
    "paths": "--path",
    "commands": "--command",
}


def _intent(ctx: Context, asked: Asked, branches: inference.Branches, run_id: str) -> Intent:
    """The intent as asked; ``created_at`` is stamped again when it is written, with the plan's time."""
    args = ctx.options
    instance, violations = validate(
        Intent,
        {
            "version": 1,
            "checkout": asked.checkout,
            "repository": branches.repository,
            "base_branch": branches.base_branch,
            "head_branch": branches.head_branch,
            "paths": sorted(args.path),
            "commands": command_argvs(args.command),
            "create_branch": args.create_branch,
            "commit": args.commit,
            "push": args.push,
            "mode": args.mode,
            "pr_title": asked.pr_title,
            "pr_body": asked.pr_body,
            "reuse_pr_number": args.reuse_pr,
            "run_id": run_id,
            "review_request_body_template": markers.default_review_template(run_id, 0),
            "created_at": statedir.now_text(),
            "draft_pr": True,  # decided by setup_preflight
            "risk_acceptance": None,  # decided by run_init: the person's --accept-risk, where it is needed
        },
    )
    if violations:  # a value no plan can hold (a path or branch name): refused before the plan is observed
        first = violations[0]
        flag = _INTENT_FLAGS.get(first.path.split("/")[1], "flags")
        raise ActError(
            first.code,
            f"{first.message}: no plan can hold it, so none is built; give another {flag}, then run `loop.py init` "
            "again",
            path=first.path,
        )
    intent: Intent = instance
    return intent


class ObservedInitial(NamedTuple):
    """The fresh snapshot, the PR texts its digests bind, and the risk acceptance record it binds (if any)."""

    snapshot: Document
    texts: InitialTexts
    record: Document | None


def _observe_initial(ctx: Context, intent: Intent) -> ObservedInitial:
    """The initial plan's observation, fresh: at ``init``, and again when ``execute`` rebuilds the plan."""
    if intent.commit:
        _require_only_planned_changes(ctx, intent)
    acceptance = intent.risk_acceptance
    snapshot = sources.initial_snapshot(ctx.world, intent, explicit=acceptance is not None)
    record = None
    if acceptance is not None:
        record, snapshot["execution_boundary"] = risk.bound_record(
            snapshot["execution_boundary"],
            acceptance,
            commands=snapshot["commands"],
            run_id=intent.run_id,
            user_id=snapshot["authenticated_user_id"],
        )
    observed = snapshot["existing_pr_number"]
    if observed != intent.reuse_pr_number:
        if observed is None:
            raise ActError(
                "intent-pr-mismatch",
                f"no open PR has head branch {intent.head_branch!r}, so #{intent.reuse_pr_number} cannot be reused",
                path="/reuse_pr_number",
            )
        raise ActError(
            "intent-pr-mismatch",
            f"open PR #{observed} already has head branch {intent.head_branch!r}; reuse it with --reuse-pr "
            f"{observed} or choose another head branch",
            path="/reuse_pr_number",
        )
    if observed is not None:
        title, body = sources.pull_request_texts(ctx.world, intent.repository, observed)
    elif intent.pr_title is not None and intent.pr_body is not None:  # init requires both for a new PR
        title, body = intent.pr_title, intent.pr_body
    else:
        raise ActError("state-file-invalid", "intent.json names no PR title and body for a new PR", path="/pr_title")
    return ObservedInitial(snapshot, build(InitialTexts, {"pr_title": title, "pr_body": body}), record)


def _require_only_planned_changes(ctx: Context, intent: Intent) -> None:
    """A commit holds exactly the planned paths: any other change would stop it after the branch was made."""
    outside = sources.changes_outside(ctx.world, intent.checkout, intent.paths)
    if outside:
        named = ", ".join(f"{change['path']} ({change['change']})" for change in outside[:20])
        more = f" and {len(outside) - 20} more" if len(outside) > 20 else ""
        raise ActError(
            "worktree-outside-plan",
            f"the checkout has changes outside --path: {named}{more}; the commit could not hold only the planned "
            "paths, so no plan is built. Name each file the change touches with --path, or commit, stash or remove "
            "the others, then run `loop.py init` again",
            path="/paths",
            details={"outside": outside},
        )


def _build_initial(intent: Intent, observed: ObservedInitial) -> Document:
    return initial_builder.initial_document(
        observed.snapshot,
        run_id=intent.run_id,
        mode=intent.mode,
        pr_title=observed.texts.pr_title,
        pr_body=observed.texts.pr_body,
        review_template=intent.review_request_body_template,
    )


def run_init(ctx: Context) -> Output:
    if ctx.options.run_id:
        raise UsageError("init generates the run id; give no --run-id")
    from act import loops
    from act.edge import preflight

    asked = _asked(ctx)
    warnings = loops.require_room_for_another(ctx.options.allow_many_loops)  # before anything is observed
    # --repository, --base, --head left out: from the checkout
    branches, inferred = inference.fill(
        ctx.world,
        asked.checkout,
        inference.Given(ctx.options.repository, ctx.options.base, ctx.options.head),
        create_branch=ctx.options.create_branch,
    )
    accepted = risk.parse_accepted(ctx.options.accept_risk)
    # Before anything is observed for the plan, and long before anything is written or approved.
    identity = preflight.run(
        ctx.world,
        asked.checkout,
        branches.repository,
        branches.base_branch,
        {"user.name": ctx.options.author_name, "user.email": ctx.options.author_email},
        network=not ctx.options.no_network_preflight,
    )
    run_id = initial_builder.new_run_id()
    intent = _intent(ctx, asked, branches, run_id)
    intent = updated(intent, risk_acceptance=risk.initial_acceptance(ctx.world, intent, accepted, statedir.now_text()))
    intent = updated(intent, draft_pr=setup_preflight(ctx, intent))  # the token's permissions, drafts, isolation
    observed = _observe_initial(ctx, intent)
    document = _build_initial(intent, observed)
    verdict = judge.evaluate("initial", document, risk_record=observed.record)
    judged = judge.require_accepted(verdict, "the initial document")
    path = Path(ctx.options.state_dir) if ctx.options.state_dir else statedir.default_path(run_id)
    directory = statedir.StateDir.create(path, checkout=intent.checkout)
    statelock.hold(directory.path)  # as soon as it exists: no other command reads it half written
    built_at = statedir.now_text()
    directory.write_model(statedir.INTENT, updated(intent, created_at=built_at))
    directory.write_model(statedir.SETUP, _setup(ctx.world, identity))
    directory.write(statedir.INITIAL, document)
    if observed.record is not None:
        risk.keep(directory, observed.record)
    directory.write_model(statedir.INITIAL_TEXTS, observed.texts)
    directory.write(statedir.INITIAL_RESULT, {"validated_at": built_at, "rebuilt": False, "result": verdict.output})
    record_plan(
        directory,
        build(
            InitialPlan,
            {
                "kind": "initial",
                "plan_hash": judged.initial_plan_hash,
                "mode": intent.mode,
                "built_at": built_at,
            },
        ),
    )
    return {
        "run_id": run_id,
        "state_dir": str(directory.path),
        "initial_plan_hash": judged.initial_plan_hash,
        "mode": judged.mode,
        "operations": list(judged.operations),
        "approval_summary": summary.initial_summary(
            document,
            observed.texts.pr_title,
            observed.texts.pr_body,
            _planned_diff(ctx, intent.checkout, document),
            commit_identity=identity.shown(),
            draft_pr=intent.draft_pr,
            risk_record=observed.record,
            inferred=inferred,
        ),
        "next": _after_init(intent.mode, directory),
        **({"warnings": warnings} if warnings else {}),
    }


def _planned_diff(ctx: Context, checkout: str, document: Document) -> tuple[Output, Output]:
    """The change the plan binds, read again for the person: shown only if it is still the hashed one."""
    snapshot = document["initial_snapshot"]
    try:
        diff = sources.planned_diff(ctx.world, checkout, snapshot["base_sha"])
    except ActError as error:  # the plan stands; the person is told the diff could not be shown
        return summary_diff.withheld(f"the change could not be read again ({error.code}); nothing is shown")
    return summary_diff.shown_diff(diff, snapshot["diff_sha256"], "/initial_snapshot/diff_sha256")


def _setup(world: sources.World, identity: CommitIdentity) -> Setup:
    """What every later command of this loop runs with (act/core/state_models.py, ``Setup``)."""
    assert world.gh is not None and world.gh_config_dir is not None  # the preflight passed
    return build(
        Setup,
        {
            "version": 1,
            "gh": world.gh,
            "gh_config_dir": world.gh_config_dir,
            "api_url": world.api_url,
            "https_proxy": world.network.https_proxy,
            "ca_file": world.network.ca_file,
            "registry": world.registry,
            "author_name": identity.name,
            "author_email": identity.email,
            "author_source": identity.source,
        },
    )


def _after_init(mode: str, directory: statedir.StateDir) -> str:
    """The initial row (act/core/steps.py): approved by the person first, unless autonomous."""
    if mode == "autonomous":
        return steps.starting_at("initial", "execute", where(directory))
    return steps.row("initial", where(directory))


# --- the initial plan's rebuild (execute, before fetch-base) -----------------------------


def rebuild_initial(ctx: Context) -> None:
    """The stored initial plan, rebuilt from fresh observations: identical and approved, or nothing is written."""
    directory = ctx.state_dir()
    intent = read_intent(directory)
    approved_document = directory.read(statedir.INITIAL)
    approved_texts = directory.read_model(statedir.INITIAL_TEXTS, InitialTexts)
    plan_hash = approved_document["initial_plan_hash"]
    if intent.mode == "approval-gated":
        approved = recorded_approval(directory, ("initial",))
        if approved != plan_hash:
            raise ActError(
                "approval-missing",
                f"the person has not approved the initial plan ({_prefix(plan_hash)}); show its summary and wait "
                "for them to name that hash",
                path="/initial_plan_hash",
            )
    else:
        approved = plan_hash  # autonomous: the second validation must give the first hash
    if intent.draft_pr and not setup_preflight(ctx, intent):
        raise ActError(
            "plan-changed",
            "the repository can no longer have draft pull requests (it became private) and the plan opens a draft; "
            "no initial side effect is permitted; start over with `loop.py init`",
            path="/initial_plan_hash",
        )
    observed = _observe_initial(ctx, intent)
    document = _build_initial(intent, observed)
    found = changes(
        {"initial_document": approved_document, **approved_texts.as_dict()},
        {"initial_document": document, **observed.texts.as_dict()},
    )
    if found:
        why = diff.causes(found, approved_document["initial_snapshot"]["path_records"])
        named = "; ".join(f"{c['file']}: {c['cause']}" if "file" in c else c["cause"] for c in why)
        raise ActError(
            "plan-changed",
            f"the checkout or GitHub changed since the plan {plan_hash[:8]}... was validated: {named}; no initial "
            "side effect is permitted; undo the change, or start over with `loop.py init` and have the new plan "
            "approved",
            path="/initial_plan_hash",
            details={
                "approved_hash": plan_hash,
                "rebuilt_hash": document["initial_plan_hash"],
                "causes": why,
                "changes": found,
            },
        )
    verdict = judge.evaluate("initial", document, approved_hash=approved, risk_record=observed.record)
    judge.require_accepted(verdict, "the rebuilt initial document")
    written = {"validated_at": statedir.now_text(), "rebuilt": True, "result": verdict.output}
    directory.write(statedir.INITIAL_RESULT, written)


# --- recurring plans ------------------------------------------------------------------


def _state_input(ctx: Context, directory: statedir.StateDir, kind: RecurringKind) -> Document:
    if ctx.options.state is None:
        return _without_unrecorded_plan(directory, directory.read(statedir.STATE), kind)
    from evaluator.canonical import parse_document
    from evaluator.errors import Rejected

    try:
        return parse_document(Path(ctx.options.state).read_bytes())
    except OSError as error:
        raise UsageError(f"cannot read --state {ctx.options.state!r}: {error.strerror}") from None
    except Rejected as error:
        raise ActError("state-file-invalid", f"--state: {error}") from None


def _without_unrecorded_plan(directory: statedir.StateDir, document: Document, kind: RecurringKind) -> Document:
    """The state as collected, when a plan of ``kind`` embedded in it is a plan command's, not a claim's.

    Only two commands embed a plan in state.json: ``wakeup --continue``, the
    plan this wakeup claimed (it stays, and is judged as it is), and a plan
    command, just before it records the plan (plans/, pending.json) and its
    verdict. A plan command killed in between leaves a state that asks for
    the plan's approval or claim, never for the plan, and its rerun would
    refuse for ever. That embedding is its own work: the rerun takes it out
    (every plan field back to null, as the collector leaves them) and builds
    the plan again, the same plan from the same state.
    """
    embedded = document.get(f"{kind}_plan_hash")
    if embedded is None:
        return document
    wakeup = ledger.read_wakeup(directory)
    claimed = set() if wakeup is None else {claim.plan_hash for claim in wakeup.claims}
    return document if embedded in claimed else recurring.unembed(document)


class JudgedState(NamedTuple):
    """A recurring state the evaluator accepted: the document as judged, and the same state read as its model."""

    document: Document
    state: RecurringState


def _require_action(
    directory: statedir.StateDir, document: Document, expected: Literal["plan-remediation", "plan-finalization"]
) -> tuple[StateVerdict, JudgedState]:
    """The evaluator must ask for this plan, on this very state, before it is built."""
    verdict = judge.evaluate("state", document, risk_record=risk.record_for(directory, document))
    result = judge.require_accepted(verdict, "the state")
    if result.action != expected:
        raise ActError(
            f"action-not-{expected}",
            f"the evaluator emitted {result.action} ({', '.join(result.reasons)}), not {expected}: no plan is "
            "built; obey that action",
            details={"evaluation": verdict.output},
        )
    return result, JudgedState(document, build(RecurringState, document))  # accepted: it has the model's shape


def _finish_plan(
    directory: statedir.StateDir,
    judged: JudgedState,
    kind: RecurringKind,
    manifest: Document,
    choices: RemediationChoices | None,
    plan_summary: Output,
    risk_record: Document | None = None,
) -> Output:
    state = judged.state
    approved = carried_approval(directory, state.request_key)
    planned = recurring.embed(judged.document, manifest, approved_plan_hash=approved)
    verdict = judge.evaluate("state", planned, risk_record=risk_record)
    result = judge.require_accepted(verdict, f"the state with the {kind} plan")
    plan_hash = planned[f"{kind}_plan_hash"]
    if result.action not in PLAN_ACTIONS[kind]:
        raise ActError(
            "plan-not-accepted",
            f"with the plan embedded the evaluator emitted {result.action} ({', '.join(result.reasons)}); the "
            "plan is not recorded; obey that action",
            details={"evaluation": verdict.output},
        )
    if risk_record is not None:
        risk.keep(directory, risk_record)
    directory.write(statedir.STATE, planned)
    directory.write(statedir.LAST_RESULT, verdict.output)
    recorded = {
        "kind": kind,
        "plan_hash": plan_hash,
        "mode": state.mode,
        "built_at": statedir.now_text(),
        "request_key": state.request_key,
        "wakeup_id": state.wakeup_id,
        **({} if choices is None else {"choices": choices.as_dict()}),
        "manifest": manifest,
        "executed_at": None,
    }
    plan: RecurringPlan = (
        build(RemediationPlan, recorded) if kind == "remediation" else build(FinalizationPlan, recorded)
    )
    previous = record_plan(directory, plan)
    output: Output = {
        "plan_kind": kind,
        "plan_hash": plan_hash,
        "action": result.action,
        "reasons": list(result.reasons),
        "evaluation": verdict.output,
        "approval_summary": plan_summary,
    }
    if (
        previous is not None
        and not isinstance(previous, InitialPlan)
        and previous.kind == kind
        and previous.request_key == state.request_key
        and previous.plan_hash != plan_hash
    ):
        output["changes_since_pending"] = changes(previous.manifest.as_dict(), manifest)
        output["note"] = (
            f"this plan differs from the pending plan {previous.plan_hash}; an approval of that hash does not "
            "carry over"
        )
    if result.action in steps.ENDS_THE_WAKEUP:  # await-approval: this wakeup writes nothing more
        ledger.end_wakeup(directory, result.action)
    output["next"] = steps.row(result.action, where(directory, plan_hash=plan_hash))
    output["notify"] = result.action == "await-approval"  # an approval summary to show: the person is told now
    return output


def where(directory: statedir.StateDir, *, key: str | None = None, plan_hash: str | None = None) -> steps.Where:
    """What a ``next`` can name: the state directory, the loop's automation key (once known), the plan."""
    if key is None:
        automation = directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
        key = None if automation is None else automation.key
    return steps.Where(state_dir=directory.path, key=key, plan_hash=plan_hash)


def run_plan_remediation(ctx: Context) -> Output:
    directory = ctx.state_dir()
    intent = read_intent(directory)
    document = _state_input(ctx, directory, "remediation")
    args = ctx.options
    if args.no_commands and args.command:
        raise UsageError("give --command or --no-commands, not both")
    if args.reuse_pending:
        if args.path or args.command or args.no_commands:
            raise UsageError(
                "--reuse-pending takes the pending plan's paths and commands; give no --path, --command or "
                "--no-commands"
            )
        pending = read_pending(directory)
        if not isinstance(pending, RemediationPlan):
            raise ActError(
                "pending-plan-missing", "there is no pending remediation plan to rebuild; choose --path and --command"
            )
        paths, argvs, template = (
            pending.choices.paths,
            pending.choices.commands,
            pending.choices.review_request_body_template,
        )
    else:
        if not args.path:
            raise UsageError(
                "name the paths the fix edits with --path (or rebuild the pending plan with --reuse-pending)"
            )
        # The loop's validation commands carry over unless replaced (--command) or dropped (--no-commands).
        argvs = [] if args.no_commands else command_argvs(args.command) if args.command else list(intent.commands)
        paths, template = sorted(args.path), None
    _, judged = _require_action(directory, document, "plan-remediation")
    commands = sources.commands(argvs)
    execution, record = risk.remediation_boundary(ctx.world, intent, judged.state, commands)
    manifest = recurring.remediation_manifest(
        judged.state,
        path_records=sources.path_records(intent.checkout, paths),
        commands=commands,
        execution=execution,
        template=template,
    )
    choices = build(
        RemediationChoices,
        {
            "paths": manifest["paths"],
            "commands": argvs,
            "review_request_body_template": manifest["review_request_body_template"],
        },
    )
    findings = [finding.as_dict() for finding in bound_findings(directory, judged.state)]
    plan_summary = summary.remediation_summary(document, manifest, recurring.plan_hash(manifest), findings, record)
    finished = _finish_plan(directory, judged, "remediation", manifest, choices, plan_summary, record)
    return {**finished, "findings": findings}


def _notes(directory: statedir.StateDir, state: RecurringState) -> WakeupNotes | None:
    """The notes stored with this very state (the same observation), if any."""
    stored = directory.read_model_optional(statedir.NOTES, WakeupNotes)
    return stored if stored is not None and stored.observed_at == state.observed_at else None


def gate_unknowns(directory: statedir.StateDir, state: RecurringState) -> list[GateUnknown]:
    """Each rule that left a gate of this state unknown, and why."""
    stored = _notes(directory, state)
    return [] if stored is None else list(stored.gate_unknowns)


def bound_findings(directory: statedir.StateDir, state: RecurringState) -> list[Finding]:
    """The stored findings of this very state: same observation, each thread's digests as the state binds them."""
    stored = _notes(directory, state)
    if stored is None:
        return []
    threads = {thread.id: thread for thread in state.actionable_codex_threads}
    return [
        finding
        for finding in stored.findings
        if (thread := threads.get(finding.thread_id)) is not None
        and (thread.body_sha256, thread.position_sha256) == (finding.body_sha256, finding.position_sha256)
    ]


def run_plan_finalization(ctx: Context) -> Output:
    directory = ctx.state_dir()
    document = _state_input(ctx, directory, "finalization")
    asked, judged = _require_action(directory, document, "plan-finalization")
    manifest = recurring.finalization_manifest(judged.state)
    phase = "two" if asked.reasons == ["finalization-phase-two"] else "one"
    unknowns = [unknown.as_dict() for unknown in gate_unknowns(directory, judged.state)]
    plan_summary = summary.finalization_summary(document, manifest, recurring.plan_hash(manifest), phase, unknowns)
    return {**_finish_plan(directory, judged, "finalization", manifest, None, plan_summary), "gate_unknowns": unknowns}


# --- approve and status ---------------------------------------------------------------


# An approval is the person's act: a refusal never prints the hash an agent could copy.
_ASK_THE_PERSON = (
    "ask the person to reply with the full hash from the approval summary, and record it exactly as they wrote it"
)


def _prefix(plan_hash: str) -> str:
    """Enough of a hash to tell two plans apart in a message, never enough to approve with."""
    return f"hash beginning {plan_hash[:8]}"


def run_approve(ctx: Context) -> Output:
    directory = ctx.state_dir()
    named = given(ctx.options.hash, "--hash")
    pending = read_pending(directory)
    if pending is None:
        raise ActError("approval-no-pending-plan", "no plan is pending; nothing can be approved", path="/hash")
    if pending.mode == "autonomous":
        raise ActError(
            "approval-not-needed",
            "this loop is autonomous: its plans need no approval and none is recorded",
            path="/hash",
        )
    if not HEX64.fullmatch(named):
        raise ActError(
            "approval-hash-malformed",
            f"{named[:80]!r} is not a 64-character lowercase hex hash; a shortened or re-cased hash is no approval. "
            f"{_ASK_THE_PERSON}",
            path="/hash",
        )
    if named != pending.plan_hash:
        if directory.exists(f"{statedir.PLANS}/{named}.json"):
            older = directory.read_model(f"{statedir.PLANS}/{named}.json", BuiltPlan)
            raise ActError(
                "approval-hash-stale",
                f"{named} names an older {older.kind} plan (built {older.built_at}), not the pending "
                f"{pending.kind} plan ({_prefix(pending.plan_hash)}); {_ASK_THE_PERSON}",
                path="/hash",
            )
        raise ActError(
            "approval-hash-mismatch",
            f"{named} is not the pending {pending.kind} plan's hash ({_prefix(pending.plan_hash)}); nothing is "
            f"approved; {_ASK_THE_PERSON}",
            path="/hash",
        )
    approval = build(Approval, {"plan_hash": named, "kind": pending.kind, "approved_at": statedir.now_text()})
    directory.write_model(statedir.APPROVAL, approval)
    after = (
        steps.starting_at("initial", "execute", where(directory))
        if pending.kind == "initial"
        else "the next wakeup carries this approval; rebuild the plan there with the same choices"
    )
    return {"approved": approval.as_dict(), "next": after}


def outcome(directory: statedir.StateDir) -> Output:
    """Why the loop stands where it does and its merge gates: the last verdict's ``reasons`` and ``gates``.

    The gates are the verdict's where its action reports them (the end, a
    cleanup stop), else the last state's; None before any wakeup.
    """
    last = verdicts.read_last(directory)  # checked against its model
    reported = getattr(last, "gates", None)
    state = directory.read_model_optional(statedir.STATE, RecurringState)
    gates = reported if reported is not None else (None if state is None else state.gates)
    return {
        "reasons": None if last is None else list(last.reasons),
        "gates": None if gates is None else gates.as_dict(),
    }


def run_status(ctx: Context) -> Output:
    directory = ctx.state_dir()
    intent = directory.read_model_optional(statedir.INTENT, Intent)
    pending = read_pending(directory)
    approval = directory.read_model_optional(statedir.APPROVAL, Approval)
    wakeup = directory.read_model_optional(statedir.WAKEUP, Wakeup)
    automation = directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
    state = directory.read_model_optional(statedir.STATE, RecurringState)
    return {
        "state_dir": str(directory.path),
        "run_id": None if intent is None else intent.run_id,
        "mode": None if intent is None else intent.mode,
        "pending_plan": None
        if pending is None
        else {
            "kind": pending.kind,
            "plan_hash": pending.plan_hash,
            "built_at": pending.built_at,
            "request_key": None if isinstance(pending, InitialPlan) else pending.request_key,
        },
        "approval": None if approval is None else approval.as_dict(),
        "wakeup": None if wakeup is None else wakeup.as_dict(),
        "automation": None if automation is None else automation.as_dict(),
        "last_action": last_action(directory),
        **outcome(directory),
        "findings": [] if state is None else [finding.as_dict() for finding in bound_findings(directory, state)],
        "gate_unknowns": [] if state is None else [unknown.as_dict() for unknown in gate_unknowns(directory, state)],
        # Once the loop has finished: what Codex said since (GitHub is read only then).
        "after_finalization": aftermath.after_finalization(ctx.world, directory),
    }
