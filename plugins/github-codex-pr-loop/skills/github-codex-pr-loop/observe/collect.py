"""The collector: observe the world, then assemble one complete evaluator document.

One function per subcommand of scripts/collect_state.py (``initial``,
``prompt``, ``wakeup``, ``report``, ``boundary``, ``recheck_paths``) runs the
observers it needs (``observe.github``, ``observe.git``, ``observe.registry``,
``observe.evaluator_digest``) and returns the exact-key document the evaluator
reads; references/collector.md describes each. Below them, the assembly
functions (``wakeup_state``, ``bootstrap_state``, ``report_state`` and their
parts) are pure: no I/O, so the same observations always give the same
document, and tests can feed them recorded observations directly.

Every failure is an ``ObserveError`` whose message names the path or setting
concerned (observe/errors.py); a file that cannot be read at all is a
``UsageError``. Nothing here prints: the CLI (observe/cli.py) does.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaluator import markers, policy
from evaluator.canonical import digest, parse_document, text_digest
from evaluator.errors import Rejected
from evaluator.formats import parse_timestamp
from evaluator.redact import redact
from evaluator.render import render_prompt, render_review_body
from observe.errors import CollectionError, UsageError
from observe.github.client import GitHubClient
from observe.github.connect import github_client
from observe.github.observation import PullRequestObservation, RequestMarker, ThreadObservation
from observe.github.pull_request import observe_pull_request
from observe.github.pulls import existing_pull_request
from observe.network import Network

if TYPE_CHECKING:
    from observe.git.observer import GitObserver
    from observe.registry import AutomationRecord

# The git observer, the registry reader and the evaluator pin (with
# importlib.metadata) are imported by the functions that use them: a command
# that reads only GitHub (report) loads none of them.

PROJECT_ROOT = Path(__file__).resolve().parent.parent

# A missing or ambiguous remote is drift for the evaluator to report, not a failure.
_REMOTE_DRIFT = ("git-remote-not-found", "git-remote-ambiguous", "git-remote-url-not-canonical")


@dataclass(frozen=True)
class Settings:
    """What every subcommand shares: where GitHub is, the gh CLI, the instant, how to wait.

    ``github_stats`` receives each GitHub client's request and rate-limit
    counts when the client closes; the CLI prints them after a document only.
    ``secrets`` receives the token each GitHub client uses, so that the CLI
    redacts it from every line it prints.
    """

    api_url: str
    gh_path: str | None
    observed_at: datetime
    sleep: Callable[[float], None] = time.sleep  # the wait between GitHub retries
    project_root: Path = PROJECT_ROOT
    github_stats: list[dict[str, int]] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)  # every token in use, for the CLI to redact
    network: Network = field(default_factory=Network)  # the route to github.com, for the client and git alike
    # The command's own client of a repository, shared by all its observations and closed with the command
    # (loop.py's GitHub session); None: each observation builds its client and closes it.
    github: Callable[[str], GitHubClient] | None = None
    gh_config_dir: str | None = None  # where gh keeps the user's login; None: resolved from the environment


# -- one function per subcommand ---------------------------------------------


def initial(
    settings: Settings,
    *,
    checkout: str,
    repository: str,
    base: str,
    head: str,
    paths: Sequence[str],
    commands: Sequence[Sequence[str]],
    create_branch: bool,
    commit: bool,
    push: bool,
    explicit: bool = False,
) -> dict[str, Any]:
    """The ``initial_snapshot``: the checkout, its validation commands, and the open PRs.

    ``explicit``: the execution boundary in the explicit-risk-acceptance form, not yet bound (act/risk.py).
    """
    from observe.git.observer import command_definition_sha256

    bound_commands = [
        {"argv": list(argv), "definition_sha256": command_definition_sha256(list(argv))} for argv in commands
    ]
    with ExitStack() as stack:
        git_fields = _git(settings, stack, checkout).initial_snapshot_fields(
            repository, base, list(paths), explicit=explicit
        )
        client = _github(settings, stack, repository)
        user_id, open_prs_sha256, existing = existing_pull_request(client, repository, head)
    return {
        "authenticated_user_id": user_id,
        "base_branch": base,
        "commands": bound_commands,
        "commit_required": commit,
        "create_branch_required": create_branch,
        **{key: git_fields[key] for key in ("base_sha", "current_head_sha", "diff_sha256", "execution_boundary")},
        **existing,
        "head_branch": head,
        "heartbeat_rrule": policy.HEARTBEAT_RRULE,
        "host": policy.HOST,
        "open_prs_sha256": open_prs_sha256,
        "paths": git_fields["paths"],
        "path_records": git_fields["path_records"],
        "policy_schema_version": policy.POLICY_SCHEMA_VERSION,
        "push_required": push,
        **{key: git_fields[key] for key in ("remote_name", "remote_refs_sha256")},
        "repository": repository,
        "worktree_status_sha256": git_fields["worktree_status_sha256"],
    }


def prompt(
    settings: Settings, *, initial_path: str, pr_number: int, automation_id: str, checkout: str, registry: str | None
) -> dict[str, Any]:
    """The prompt document: the bootstrap snapshot with its post-write receipt, and the rendered prompt."""
    initial_document = load_document(initial_path)
    snapshot, manifest = initial_document["initial_snapshot"], initial_document["initial_manifest"]
    repository, run_id = snapshot["repository"], manifest["run_id"]
    with ExitStack() as stack:
        git = _git(settings, stack, checkout)
        github = observe_pull_request(_github(settings, stack, repository), repository, pr_number, run_id)
        key = markers.automation_key(policy.HOST, repository, pr_number, run_id)
        state = bootstrap_state(
            initial_document,
            github,
            _owned(registry, key),
            owned_automation_id=automation_id,
            evaluator_sha256=_evaluator_sha256(settings),
            current_remote_name=git.remote_name_for(repository),
            observed_at=settings.observed_at,
        )
        final_head = git.current_head_sha()
        body = render_review_body(manifest["review_request_body_template"], final_head)
        posted = [request for request in github["requests"] if request["round"] == 0]
        if len(posted) != 1 or posted[0]["body_sha256"] != text_digest(body):
            # The receipt names the body that was approved; it must be the one on GitHub.
            message = "the round-0 request on GitHub is not the approved template rendered with the final head"
            raise CollectionError("request-body-mismatch", message)
        receipt = {
            "base_sha": snapshot["base_sha"],
            "final_head_sha": final_head,
            "head_descends_from_initial": git.is_ancestor(snapshot["current_head_sha"], final_head),
            "initial_head_sha": snapshot["current_head_sha"],
            "paths": list(snapshot["paths"]),
            "pr_head_sha": github["pull_request"]["head_sha"],
            "pushed_diff_sha256": git.tree_diff_sha256(snapshot["base_sha"], final_head),
            "remote_head_sha": github["head_tip_sha"],
            "review_request_body": body,
            "review_request_body_sha256": text_digest(body),
            "worktree_clean": git.worktree_clean(),
        }
    boot = {
        "initial_plan_hash": initial_document["initial_plan_hash"],
        "post_write_receipt": receipt,
        "pr_url": state["pr_url"],
        "request_deadline": state["request_deadline"],
        "state": state,
    }
    rendered = render_prompt(key, boot)
    return {
        "bootstrap_snapshot": boot,
        "bootstrap_snapshot_sha256": digest(boot),
        "initial_document": initial_document,
        "rendered_prompt": rendered,
        "rendered_prompt_sha256": text_digest(rendered),
    }


def wakeup(
    settings: Settings,
    *,
    checkpoint_path: str,
    checkout: str,
    wakeup_id: str,
    registry: str | None,
    approved_plan_hash: str | None = None,
) -> dict[str, Any]:
    """The recurring state of one wakeup, against the checkpoint that ``--prompt`` accepted."""
    boot = load_document(checkpoint_path).get("bootstrap_snapshot")
    if not isinstance(boot, dict) or not isinstance(boot.get("state"), dict):
        message = f"{checkpoint_path}: the checkpoint must be the prompt document that --prompt accepted"
        raise CollectionError("checkpoint-invalid", message)
    return wakeup_from_checkpoint(
        settings,
        bootstrap_snapshot=boot,
        checkout=checkout,
        wakeup_id=wakeup_id,
        registry=registry,
        approved_plan_hash=approved_plan_hash,
    )


def wakeup_from_checkpoint(
    settings: Settings,
    *,
    bootstrap_snapshot: dict[str, Any],
    checkout: str,
    wakeup_id: str,
    registry: str | None,
    approved_plan_hash: str | None = None,
) -> dict[str, Any]:
    """The same, from the bootstrap snapshot itself (the JSON on the automation prompt's third line)."""
    state, _notes = wakeup_with_notes(
        settings,
        bootstrap_snapshot=bootstrap_snapshot,
        checkout=checkout,
        wakeup_id=wakeup_id,
        registry=registry,
        approved_plan_hash=approved_plan_hash,
    )
    return state


def wakeup_with_notes(
    settings: Settings,
    *,
    bootstrap_snapshot: dict[str, Any],
    checkout: str,
    wakeup_id: str,
    registry: str | None,
    approved_plan_hash: str | None = None,
) -> tuple[dict[str, Any], dict[str, list[dict[str, Any]]]]:
    """The wakeup state, and what the person and the agent read beside it (from the same observation).

    The notes are ``findings`` (the text of each actionable Codex finding) and
    ``gate_unknowns`` (each rule that left a gate unknown, and why). No plan
    binds them and the evaluator never judges them: the state's digests and
    gates are what count.

    ``approved_plan_hash`` is the user's approval recorded since an earlier
    wakeup (references/hands.md, "Approval between wakeups"); the evaluator
    alone decides whether it names the plan embedded later.
    """
    boot = bootstrap_snapshot
    if not isinstance(boot.get("state"), dict):
        raise CollectionError("checkpoint-invalid", "the checkpoint carries no bootstrap state")
    checkpoint = boot["state"]
    repository, pr_number, run_id = checkpoint["repository"], checkpoint["pr_number"], checkpoint["run_id"]
    with ExitStack() as stack:
        git = _git(settings, stack, checkout)
        github = observe_pull_request(
            _github(settings, stack, repository), repository, pr_number, run_id, settings.observed_at
        )
        key = markers.automation_key(checkpoint["host"], repository, pr_number, run_id)
        state = wakeup_state(
            boot,
            github,
            _owned(registry, key),
            evaluator_sha256=_evaluator_sha256(settings),
            current_remote_name=_remote_or_none(git, repository),
            observed_at=settings.observed_at,
            wakeup_id=wakeup_id,
            approved_plan_hash=approved_plan_hash,
        )
        return state, {
            "findings": finding_texts(github["threads"], settings.secrets),
            "gate_unknowns": [dict(unknown) for unknown in github["gate_unknowns"]],
        }


def report(settings: Settings, *, repository: str, pr_number: int, run_id: str) -> dict[str, Any]:
    """A report-only state: GitHub alone."""
    with ExitStack() as stack:
        github = observe_pull_request(
            _github(settings, stack, repository), repository, pr_number, run_id, settings.observed_at
        )
    return report_state(github, run_id=run_id, observed_at=settings.observed_at)


def boundary(
    settings: Settings, *, checkout: str, repository: str, risk_acceptance_sha256: str | None, explicit: bool = False
) -> dict[str, Any]:
    """Observed once, placed twice: as the state's execution_boundary and the plan's execution.

    ``explicit`` without a digest: the explicit form not yet bound to its acceptance record (act/risk.py).
    """
    with ExitStack() as stack:
        git = _git(settings, stack, checkout)
        return git.execution_boundary(repository, risk_acceptance_sha256=risk_acceptance_sha256, explicit=explicit)


def recheck_paths(*, checkout: str, document_path: str) -> dict[str, Any]:
    """``{"ok": true, "paths": [...]}`` when every path record of the document still holds."""
    from observe.git.observer import recheck_path_records

    records = _find_path_records(load_document(document_path))
    if records is None:
        raise CollectionError("path-records-missing", f"{document_path} holds no path_records to recheck")
    differences = recheck_path_records(str(Path(checkout).resolve()), records)
    if differences:
        named = ", ".join(f"{path} ({field})" for path, field in differences)
        raise CollectionError("path-records-changed", f"path records differ from the plan: {named}")
    return {"ok": True, "paths": [record["path"] for record in records]}


# -- the observers, and what their failures name -------------------------------


def load_document(path: str) -> dict[str, Any]:
    """An input document, parsed by the evaluator's strict parser."""
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise UsageError(f"cannot read {path!r}: {error.strerror}") from None
    try:
        return parse_document(raw)
    except Rejected as error:
        raise CollectionError("document-invalid", f"{path}: {error}") from None


def _github(settings: Settings, stack: ExitStack, repository: str) -> GitHubClient:
    if settings.github is not None:  # the command's own client: it closes with the command
        return settings.github(repository)
    client = github_client(
        repository,
        api_url=settings.api_url,
        gh_path=settings.gh_path,
        gh_config_dir=settings.gh_config_dir,
        network=settings.network,
        secrets=settings.secrets,
        sleep=settings.sleep,
    )
    stack.callback(lambda: settings.github_stats.append(client.stats))
    stack.callback(client.close)
    return client


def git_observer(settings: Settings, stack: ExitStack, checkout: str) -> GitObserver:
    """The hardened git observer of one checkout, closed with ``stack``."""
    return _git(settings, stack, checkout)


def _git(settings: Settings, stack: ExitStack, checkout: str) -> GitObserver:
    from observe.git.observer import GitObserver

    return stack.enter_context(GitObserver(checkout, gh_path=settings.gh_path, network=settings.network))


def _owned(registry: str | None, key: str) -> list[AutomationRecord]:
    """The loop's automations; a registry that cannot be listed names the setting it came from."""
    from observe.registry import AutomationRecord, default_registry_root, owned_automations

    with _naming_registry_setting(registry):
        root = Path(registry) if registry else default_registry_root()
        return [AutomationRecord(**record) for record in owned_automations(root, key)]


@contextmanager
def _naming_registry_setting(registry: str | None) -> Iterator[None]:
    from observe.registry import RegistryError

    try:
        yield
    except RegistryError as error:
        if registry:
            setting = "--registry"
        elif os.environ.get("CODEX_HOME"):
            setting = "CODEX_HOME"
        else:
            setting = "the default ~/.codex/automations; set --registry or CODEX_HOME"
        raise RegistryError(error.code, f"{error.message} (from {setting})") from None


def _evaluator_sha256(settings: Settings) -> str:
    from observe.evaluator_digest import DigestError, evaluator_sha256

    try:
        return evaluator_sha256(settings.project_root)
    except DigestError as error:
        message = f"the evaluator installed under {settings.project_root}: {error.message}"
        raise DigestError(error.code, message) from None


def _remote_or_none(git: GitObserver, repository: str) -> str | None:
    """A missing or ambiguous remote is drift for the evaluator to report, not a crash."""
    from observe.git.observer import GitObservationError

    try:
        return git.remote_name_for(repository)
    except GitObservationError as error:
        if error.code in _REMOTE_DRIFT:
            return None
        raise


def _find_path_records(document: dict[str, Any]) -> list[dict[str, Any]] | None:
    """path_records of an initial document, a snapshot, a manifest or a state holding one."""
    for candidate in (document, document.get("initial_snapshot"), document.get("remediation_manifest")):
        if isinstance(candidate, dict) and isinstance(candidate.get("path_records"), list):
            return candidate["path_records"]
    return None


# -- pure assembly ---------------------------------------------------------------


def utc_text(instant: datetime) -> str:
    """An instant as ISO-8601 UTC with ``Z`` (the form GitHub uses)."""
    return instant.astimezone(UTC).isoformat().replace("+00:00", "Z")


def request_checkpoint(requests: Sequence[RequestMarker], anomalies: Sequence[str]) -> dict[str, Any]:
    """The request checkpoint rebuilt from the canonical markers on GitHub.

    Requests come sorted by comment id and must be rounds 0, 1, ..., n-1 in
    that order: one request per round. Anything else (a repeated or skipped
    round) makes every request of the run a marker anomaly, which the
    evaluator reports as a state-inconsistency instead of guessing.
    """
    anomalies = sorted(set(anomalies), key=int)
    rounds = [request["round"] for request in requests]
    if rounds != list(range(len(rounds))):
        anomalies = sorted(set(anomalies) | {str(request["comment_id"]) for request in requests}, key=int)
    if not requests:
        return {
            "request_comment_id": None,
            "request_head_sha": None,
            "request_created_at": None,
            "request_deadline": None,
            "request_key": None,
            "fix_rounds": 0,
            "completed_request_keys": [],
            "marker_anomalies": anomalies,
        }
    keys = [f"{request['comment_id']}:{request['head_sha']}" for request in requests]
    current = requests[-1]
    return {
        "request_comment_id": current["comment_id"],
        "request_head_sha": current["head_sha"],
        "request_created_at": current["created_at"],
        "request_deadline": utc_text(parse_timestamp(current["created_at"]) + policy.REQUEST_TIMEOUT),
        "request_key": keys[-1],
        "fix_rounds": len(requests) - 1,
        "completed_request_keys": keys[:-1],
        "marker_anomalies": anomalies,
    }


def thread_classes(threads: Sequence[ThreadObservation]) -> dict[str, Any]:
    """Unresolved Codex threads split into not-yet-addressed and addressed; others counted."""
    open_threads = [thread for thread in threads if not thread["is_resolved"]]
    return {
        "actionable_codex_threads": [
            t["thread"] for t in open_threads if t["root_is_codex"] and t["addressed_round"] is None
        ],
        "eligible_codex_threads": [
            t["thread"] for t in open_threads if t["root_is_codex"] and t["addressed_round"] is not None
        ],
        "non_codex_rooted_threads": sum(1 for t in open_threads if not t["root_is_codex"]),
    }


FINDING_TEXT_LIMIT = 2000  # characters of a finding's text shown; its digest covers the whole
_PRIORITY_BADGE = re.compile(r"!\[(P[0-3]) Badge\]")


def finding_texts(threads: Sequence[ThreadObservation], secrets: Sequence[str]) -> list[dict[str, Any]]:
    """Each actionable Codex thread's path, lines, priority and text, in the state's order.

    For the agent to read, never for a decision: the state binds each thread
    by ``body_sha256`` and ``position_sha256``, which every entry repeats, so
    what is shown can be checked against what the plan binds.
    """
    found = []
    for observed in threads:
        if observed["is_resolved"] or not observed["root_is_codex"] or observed["addressed_round"] is not None:
            continue
        text, body = observed["text"], redact(observed["text"]["body"], secrets)
        badge = _PRIORITY_BADGE.search(body)
        found.append(
            {
                "thread_id": observed["thread"]["id"],
                "path": text["path"],
                "start_line": text["start_line"],
                "line": text["line"],
                "priority": badge.group(1) if badge else None,
                "text": body[:FINDING_TEXT_LIMIT],
                "truncated": len(body) > FINDING_TEXT_LIMIT,
                "body_sha256": observed["thread"]["body_sha256"],
                "position_sha256": observed["thread"]["position_sha256"],
            }
        )
    return found


def _observed(github: PullRequestObservation, observed_at: datetime) -> dict[str, Any]:
    pull = github["pull_request"]
    return {
        "observed_at": utc_text(observed_at),
        "current_authenticated_user_id": github["authenticated_user_id"],
        "pr_repository": pull["repository"],
        "pr_state": pull["state"],
        "pr_is_draft": pull["is_draft"],
        "pr_same_repository": pull["same_repository"],
        "current_base_branch": pull["base_branch"],
        "current_head_branch": pull["head_branch"],
        "current_base_sha": github["base_tip_sha"],
        "current_head_sha": pull["head_sha"],
        "remote_head_sha": github["head_tip_sha"],
        **request_checkpoint(github["requests"], github["marker_anomalies"]),
        "claims": list(github["claims"]),
        "responses": list(github["responses"]),
        "plus_one_reactions": list(github["plus_one_reactions"]),
        "summary_rows": list(github["summary_rows"]),
        "unavailable_replies": list(github["unavailable_replies"]),
        "unrecognized_replies": list(github["unrecognized_replies"]),
        **thread_classes(github["threads"]),
        "gates": dict(github["gates"]),
    }


_NO_PLAN = {
    "execution_boundary": None,
    "remediation_manifest": None,
    "remediation_plan_hash": None,
    "finalization_manifest": None,
    "finalization_plan_hash": None,
    "approved_plan_hash": None,
}


def wakeup_state(
    bootstrap_snapshot: Mapping[str, Any],
    github: PullRequestObservation,
    automations: Sequence[AutomationRecord],
    *,
    evaluator_sha256: str,
    current_remote_name: str | None,
    observed_at: datetime,
    wakeup_id: str,
    approved_plan_hash: str | None = None,
) -> dict[str, Any]:
    """The recurring state of one wakeup: the checkpoint's identity, fresh observations, an approval carried over."""
    checkpoint = bootstrap_snapshot["state"]
    key = markers.automation_key(
        checkpoint["host"], checkpoint["repository"], checkpoint["pr_number"], checkpoint["run_id"]
    )
    identity = {
        name: checkpoint[name]
        for name in (
            "version",
            "policy_schema_version",
            "mode",
            "run_id",
            "host",
            "repository",
            "pr_number",
            "pr_url",
            "remote_name",
            "base_branch",
            "head_branch",
            "authenticated_user_id",
            "evaluator_sha256",
            "owned_automation_id",
            "base_sha",
        )
    }
    state = {
        **identity,
        "expected_prompt_sha256": text_digest(render_prompt(key, dict(bootstrap_snapshot))),
        "wakeup_id": wakeup_id,
        "current_evaluator_sha256": evaluator_sha256,
        "current_remote_name": current_remote_name,
        **_observed(github, observed_at),
        "automations": sorted(automations, key=lambda record: record["id"]),
        **_NO_PLAN,
        "approved_plan_hash": approved_plan_hash,
    }
    return _ordered(state)


def bootstrap_state(
    initial_document: Mapping[str, Any],
    github: PullRequestObservation,
    automations: Sequence[AutomationRecord],
    *,
    owned_automation_id: str,
    evaluator_sha256: str,
    current_remote_name: str | None,
    observed_at: datetime,
) -> dict[str, Any]:
    """The state inside a bootstrap snapshot: identity from the approved initial plan."""
    snapshot, manifest = initial_document["initial_snapshot"], initial_document["initial_manifest"]
    pull = github["pull_request"]
    state = {
        "version": policy.MANIFEST_VERSION,
        "policy_schema_version": snapshot["policy_schema_version"],
        "mode": manifest["mode"],
        "run_id": manifest["run_id"],
        "host": snapshot["host"],
        "repository": snapshot["repository"],
        "pr_number": pull["number"],
        "pr_url": f"https://{policy.HOST}/{snapshot['repository']}/pull/{pull['number']}",
        "remote_name": snapshot["remote_name"],
        "base_branch": snapshot["base_branch"],
        "head_branch": snapshot["head_branch"],
        "authenticated_user_id": snapshot["authenticated_user_id"],
        "evaluator_sha256": evaluator_sha256,
        "owned_automation_id": owned_automation_id,
        "base_sha": snapshot["base_sha"],
        "expected_prompt_sha256": None,
        "wakeup_id": None,
        "current_evaluator_sha256": evaluator_sha256,
        "current_remote_name": current_remote_name,
        **_observed(github, observed_at),
        "automations": sorted(automations, key=lambda record: record["id"]),
        **_NO_PLAN,
    }
    return _ordered(state)


def report_state(github: PullRequestObservation, *, run_id: str, observed_at: datetime) -> dict[str, Any]:
    """A report-only state: GitHub alone; no checkout, remote or registry."""
    pull = github["pull_request"]
    state = {
        "version": policy.MANIFEST_VERSION,
        "policy_schema_version": policy.POLICY_SCHEMA_VERSION,
        "mode": "report-only",
        "run_id": run_id,
        "host": policy.HOST,
        "repository": pull["repository"],
        "pr_number": pull["number"],
        "pr_url": f"https://{policy.HOST}/{pull['repository']}/pull/{pull['number']}",
        "remote_name": None,
        "base_branch": pull["base_branch"],
        "head_branch": pull["head_branch"],
        "authenticated_user_id": github["authenticated_user_id"],
        "evaluator_sha256": None,
        "owned_automation_id": None,
        "base_sha": github["base_tip_sha"],
        "expected_prompt_sha256": None,
        "wakeup_id": None,
        "current_evaluator_sha256": None,
        "current_remote_name": None,
        **_observed(github, observed_at),
        "automations": [],
        **_NO_PLAN,
    }
    return _ordered(state)


# The recurring state's keys in the model's declaration order
# (evaluator/models/recurring.py), written out so that a wakeup never loads
# the models just to read an order; tests/test_collector.py checks they agree.
STATE_KEYS = (
    "version",
    "policy_schema_version",
    "mode",
    "run_id",
    "host",
    "repository",
    "pr_number",
    "pr_url",
    "remote_name",
    "base_branch",
    "head_branch",
    "authenticated_user_id",
    "evaluator_sha256",
    "expected_prompt_sha256",
    "owned_automation_id",
    "wakeup_id",
    "observed_at",
    "current_authenticated_user_id",
    "current_evaluator_sha256",
    "current_remote_name",
    "pr_repository",
    "pr_state",
    "pr_is_draft",
    "pr_same_repository",
    "current_base_branch",
    "current_head_branch",
    "current_base_sha",
    "current_head_sha",
    "remote_head_sha",
    "base_sha",
    "request_comment_id",
    "request_head_sha",
    "request_created_at",
    "request_deadline",
    "request_key",
    "fix_rounds",
    "completed_request_keys",
    "marker_anomalies",
    "claims",
    "responses",
    "plus_one_reactions",
    "summary_rows",
    "unavailable_replies",
    "unrecognized_replies",
    "actionable_codex_threads",
    "eligible_codex_threads",
    "non_codex_rooted_threads",
    "gates",
    "automations",
    "execution_boundary",
    "remediation_manifest",
    "remediation_plan_hash",
    "finalization_manifest",
    "finalization_plan_hash",
    "approved_plan_hash",
)


def _ordered(state: dict[str, Any]) -> dict[str, Any]:
    """Keys in the model's declaration order, so documents read the same way every time."""
    missing = set(STATE_KEYS) ^ set(state)
    if missing:
        raise AssertionError(f"collector and state model disagree on {sorted(missing)}")
    return {name: state[name] for name in STATE_KEYS}
