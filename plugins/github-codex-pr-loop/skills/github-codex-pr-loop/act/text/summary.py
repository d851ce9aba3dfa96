"""The approval summary: everything a person needs to decide on one plan, and how to approve it.

Printed with every plan the hands build, as the ``approval_summary`` field of
the JSON result and as a block of text with ``--format text``. It is drawn
from the very document that was hashed (plus the PR title and body, and the
planned diff, whose digests it carries), so what the person reads is what the
hash binds.

Every object in it has a ``coverage`` member saying, for each of its other
keys, how the hash covers what is shown (JSON Pointers into the hashed
document: the initial document, whose ``initial_manifest`` the hash digests
and which binds ``initial_snapshot`` by ``snapshot_sha256``; or the recurring
plan's manifest itself, pointer ""):

- ``{"covered_by": P}``: the value is the one at P (P may be a list or an
  object of pointers, one per element);
- ``{"covered_by": P, "sha256": H}``: the value is the text whose SHA-256 H is
  at P; with ``"shown": "excerpt"`` it is a cut (and redacted) excerpt of it;
- ``{"covered_by": P, "shown": "in words"}``: the value says in words what P holds;
- ``{"covered_by": P, "record_sha256": H}``: the value is the JSON record whose
  canonical digest H is at P (the risk acceptance record); with
  ``"shown": "in words"`` it says in words what that record holds;
- ``{"digest_of": P}``: the value is the digest of P (the plan hash);
- ``{"informational": WHY}``: not bound by the hash; WHY says where it comes from.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from act.core.jsonedge import Document, Output
from act.core.state_models import Finding, GateUnknown, build
from act.text import summary_diff
from evaluator import codex_text, markers, policy
from evaluator.canonical import digest, text_digest
from evaluator.models.initial import InitialDocument
from evaluator.models.recurring import RecurringState

# Each value shown, and its ``coverage`` entry (the module's docstring): both are what the command prints.
Shown = dict[str, tuple[object, Output]]

# What each guarantee means to the person who accepts to run without it.
GIVEN_UP = {
    "network-isolation": "the validation commands can reach the network (nothing cuts them off)",
    "minimal-environment": "no sandbox limits what the validation commands' environment can reach",
    "checkout-only-filesystem": "the validation commands can read and write outside the checkout",
    "no-active-clean-filters": "a clean filter of the checkout (such as Git LFS) runs when git stages a file",
    **{
        name.replace("_", "-"): f"git runs without the protection {name.replace('_', '-')}"
        for name in policy.GIT_PROTECTIONS
    },
}


def _at(pointer: str | list[str] | dict[str, str]) -> Output:
    return {"covered_by": pointer}


def _words(pointer: str) -> Output:
    return {"covered_by": pointer, "shown": "in words"}


def _informational(why: str) -> Output:
    return {"informational": why}


_HOW_TO_APPROVE = _informational("how approval works (policy); the hash it names is plan_hash")


def how_to_approve(mode: str, plan_hash: str) -> str:
    if mode == "autonomous":
        return "autonomous mode: this plan needs no approval; it runs once the evaluator accepts it."
    return (
        f"To approve, reply with exactly this hash: {plan_hash} "
        "(all 64 characters, as printed). A shortened, re-cased or older hash, or any other reply, is no approval."
    )


def _execution(isolation: str, git_profile: str, risk_acceptance_sha256: str | None, at: str) -> tuple[Output, Output]:
    shown = {"isolation": isolation, "git_profile": git_profile, "risk_acceptance_sha256": risk_acceptance_sha256}
    pointers = {"isolation": f"{at}/isolation", "git_profile": f"{at}/git/profile"}
    return shown, _at({**pointers, "risk_acceptance_sha256": f"{at}/risk_acceptance_sha256"})


def _risk(record: Document | None, at: str) -> Shown:
    """What the person accepted to run without (act/risk.py), in words and as the record the plan binds."""
    if record is None:
        return {}
    bound = {"covered_by": f"{at}/risk_acceptance_sha256", "record_sha256": digest(record)}
    words = [
        "this plan runs WITHOUT the isolation this machine cannot give, as the person accepted at init:",
        *(f"{name}: {GIVEN_UP[name]}" for name in record["unavailable_guarantees"]),
    ]
    return {
        "risk_accepted": (words, {**bound, "shown": "in words"}),
        "risk_acceptance_record": (dict(record), bound),
    }


def _commands(argvs: Sequence[Sequence[str]], at: str) -> tuple[list[list[str]], Output]:
    return [list(argv) for argv in argvs], _at([f"{at}/{i}/argv" for i in range(len(argvs))])


def initial_summary(
    document: Document,
    pr_title: str,
    pr_body: str,
    diff: tuple[Output, Output],
    *,
    commit_identity: str | None = None,
    draft_pr: bool = True,
    risk_record: Document | None = None,
    inferred: Mapping[str, str] | None = None,
) -> Output:
    """``diff``: the planned change as ``summary_diff`` shows it (or withholds it); ``commit_identity``: who
    every commit of the loop is by (the preflight found it; no digest binds it); ``draft_pr`` false: the
    repository has no drafts, so the new PR is ready for review from the start; ``inferred``: the repository,
    base or head init took from the checkout (act/edge/inference.py), shown as such. ``document`` is the
    initial document the evaluator accepted, read through its model."""
    judged = build(InitialDocument, document)
    snapshot, manifest = judged.initial_snapshot, judged.initial_manifest
    reuse = snapshot.existing_pr_number
    created = (
        "create a new pull request"
        if draft_pr
        else "create a new pull request, ready for review (this repository cannot have drafts, so finalization "
        "has none to mark ready)"
    )
    commands, commands_coverage = _commands([c.argv for c in snapshot.commands], "/initial_snapshot/commands")
    boundary = snapshot.execution_boundary
    execution, execution_coverage = _execution(
        boundary.isolation,
        boundary.git.profile,
        boundary.risk_acceptance_sha256,
        "/initial_snapshot/execution_boundary",
    )
    shown: Shown = {
        "plan_kind": ("initial", _at("/initial_manifest/kind")),
        "plan_hash": (judged.initial_plan_hash, {"digest_of": "/initial_manifest"}),
        "mode": (manifest.mode, _at("/initial_manifest/mode")),
        "operations": (list(manifest.operations), _at("/initial_manifest/operations")),
        "repository": (snapshot.repository, _at("/initial_snapshot/repository")),
        "remote_name": (snapshot.remote_name, _at("/initial_snapshot/remote_name")),
        "base_branch": (snapshot.base_branch, _at("/initial_snapshot/base_branch")),
        "base_sha": (snapshot.base_sha, _at("/initial_snapshot/base_sha")),
        "head_branch": (snapshot.head_branch, _at("/initial_snapshot/head_branch")),
        "head_sha": (snapshot.current_head_sha, _at("/initial_snapshot/current_head_sha")),
        **_inferred(inferred),
        "pull_request": (
            f"reuse #{reuse} (title and body unchanged)" if reuse is not None else created,
            _words("/initial_snapshot/existing_pr_number"),
        ),
        "draft_pr": (
            draft_pr and reuse is None,
            _informational("the preflight's finding that the repository can have drafts; execute checks it again"),
        ),
        "pr_title": (pr_title, {"covered_by": "/initial_manifest/pr_title_sha256", "sha256": text_digest(pr_title)}),
        "pr_body": (pr_body, {"covered_by": "/initial_manifest/pr_body_sha256", "sha256": text_digest(pr_body)}),
        "paths": (list(snapshot.paths), _at("/initial_snapshot/paths")),
        "diff": diff,
        "commands": (commands, commands_coverage),
        "commit_identity": (commit_identity, _informational("the author of the loop's commits; no digest binds it")),
        "review_request_text": (
            manifest.review_request_body_template,
            _at("/initial_manifest/review_request_body_template"),
        ),
        "review_request_note": (
            f"{policy.FINAL_HEAD_PLACEHOLDER} is replaced by the pushed head commit",
            _informational("what the executor does with the template's placeholder"),
        ),
        "threads": ([], _informational("an initial plan answers no thread")),
        "gates": (None, _informational("an initial plan checks no merge gate")),
        "execution": (execution, execution_coverage),
        **_risk(risk_record, "/initial_snapshot/execution_boundary"),
        "automation": (
            f"a heartbeat in this thread, {policy.HEARTBEAT_RRULE}, created PAUSED and activated only after the "
            "evaluator renders its prompt",
            _words("/initial_snapshot/heartbeat_rrule"),
        ),
        "how_to_approve": (how_to_approve(manifest.mode, judged.initial_plan_hash), _HOW_TO_APPROVE),
    }
    return _covered(shown)


def _inferred(inferred: Mapping[str, str] | None) -> Shown:
    """Which of the repository, base and head no flag gave: their values are the ones above, bound like the rest."""
    if not inferred:
        return {}
    why = (
        "inferred from the checkout, as no flag gave them: the current branch, the remote of its upstream (else "
        "origin) and that remote's default branch; the plan binds the values shown above"
    )
    return {"inferred_from_checkout": (dict(inferred), _informational(why))}


def _covered(shown: Shown) -> Output:
    """The values, and beside them one ``coverage`` entry per key: nothing is shown without one."""
    return {**{key: value for key, (value, _) in shown.items()}, "coverage": {k: c for k, (_, c) in shown.items()}}


# The reply the executor posts to each thread (act/execute.py, ``_reply_to_threads``).
REPLY_FORM = "Addressed in {final_head}.\n{marker}"


def remediation_summary(
    state: Document,
    manifest: Document,
    plan_hash: str,
    findings: Sequence[Mapping[str, object]] = (),
    risk_record: Document | None = None,
) -> Output:
    """``state``: the state the evaluator accepted (read through its model); ``manifest``: the plan built from it,
    not yet judged (so read as the document it is); ``findings``: what Codex wrote on each thread (wakeup notes),
    shown only where its digest is the one the plan binds; ``risk_record``: the acceptance record the plan's
    explicit-form boundary binds."""
    judged = build(RecurringState, state)
    round_number = judged.fix_rounds + 1
    read = [build(Finding, finding) for finding in findings]
    said = {(finding.thread_id, finding.body_sha256, finding.position_sha256): finding for finding in read}
    commands, commands_coverage = _commands([c["argv"] for c in manifest["commands"]], "/commands")
    boundary = manifest["execution"]
    execution, execution_coverage = _execution(
        boundary["isolation"], boundary["git"]["profile"], boundary["risk_acceptance_sha256"], "/execution"
    )
    replies = "/operations/" + str(manifest["operations"].index("reply-to-codex-threads"))
    marker = markers.reply_marker(judged.run_id, round_number)
    threads = [
        _covered(
            {
                "id": (t["id"], _at(f"/actionable_threads/{i}/id")),
                "do": ("reply", _words(replies)),
                **_finding(said.get((t["id"], t["body_sha256"], t["position_sha256"])), i),
                "reply_ends_with": (marker, _words("/review_request_body_template")),
                "reply": (
                    REPLY_FORM.format(final_head="<the pushed fix commit>", marker=marker),
                    _informational(
                        "the executor's fixed reply (the plan binds the operation and the thread it answers, "
                        f"/actionable_threads/{i}/root_comment_id; the marker's run and round are the request "
                        "template's)"
                    ),
                ),
            }
        )
        for i, t in enumerate(manifest["actionable_threads"])
    ]
    shown: Shown = {
        "plan_kind": ("remediation", _at("/kind")),
        "plan_hash": (plan_hash, {"digest_of": ""}),
        "mode": (judged.mode, _informational("the loop's mode, from the state the plan is embedded in")),
        "operations": (list(manifest["operations"]), _at("/operations")),
        "repository": (manifest["repository"], _at("/repository")),
        "pull_request": (judged.pr_url, _words("/pr_number")),
        "remote_name": (manifest["remote_name"], _at("/remote_name")),
        "base_branch": (manifest["base_branch"], _at("/base_branch")),
        "base_sha": (manifest["base_sha"], _at("/base_sha")),
        "head_branch": (manifest["head_branch"], _at("/head_branch")),
        "head_sha": (manifest["current_head_sha"], _at("/current_head_sha")),
        "request_key": (manifest["request_key"], _at("/request_key")),
        "round": (round_number, _words("/review_request_body_template")),
        "paths": (list(manifest["paths"]), _at("/paths")),
        "diff": summary_diff.withheld(
            "none yet: the fix is written after approval, into exactly these paths (their path records, "
            "/path_records, bind which files, not their new content); the pushed change is what Codex reviews next"
        ),
        "commands": (commands, commands_coverage),
        "review_request_text": (manifest["review_request_body_template"], _at("/review_request_body_template")),
        "review_request_note": (
            f"{policy.FINAL_HEAD_PLACEHOLDER} is replaced by the pushed fix commit",
            _informational("what the executor does with the template's placeholder"),
        ),
        "threads": (threads, {"covered_by": "/actionable_threads", "shown": "each item's coverage"}),
        "gates": (None, _informational("a remediation plan checks no merge gate")),
        "execution": (execution, execution_coverage),
        **_risk(risk_record, "/execution"),
        "how_to_approve": (how_to_approve(judged.mode, plan_hash), _HOW_TO_APPROVE),
    }
    return _covered(shown)


FINDING_SHOWN = 300  # characters of a finding in the summary; `findings` in the output holds up to 2,000


def _finding(finding: Finding | None, index: int) -> Shown:
    """Where and what Codex found: shown as covered only when the text read is the very body the plan binds."""
    at = f"/actionable_threads/{index}"
    if finding is None:
        return {"finding": ("(text not observed in this wakeup)", _informational("no text was read with this state"))}
    lines = finding.line if finding.start_line is None else f"{finding.start_line}-{finding.line}"
    position = _informational(f"read with the text; the plan binds the position by digest, {at}/position_sha256")
    # The stored text is the body after redacting known tokens, cut at 2,000 characters: only when neither
    # changed it does its digest prove it is the body the plan binds.
    whole = not finding.truncated and text_digest(finding.text) == finding.body_sha256
    text = finding_excerpt(finding.text) + ("..." if finding.truncated else "")
    return {
        "where": (f"{finding.path}:{lines}", position),
        "priority": (finding.priority, position),
        "finding": (
            text,
            {"covered_by": f"{at}/body_sha256", "sha256": finding.body_sha256, "shown": "excerpt"}
            if whole
            else _informational(
                f"an excerpt of Codex's text as observed with this state (cut or redacted when read, so its digest "
                f"cannot be checked against {at}/body_sha256)"
            ),
        ),
    }


def finding_excerpt(text: str) -> str:
    """Codex's text for a person: one line, links and credential-like runs replaced (the evaluator's excerpt
    policy), cut at ``FINDING_SHOWN`` characters."""
    shown = policy.CODEX_EXCERPT_LINK.sub("<link>", codex_text.normalise(text))
    shown = policy.CODEX_EXCERPT_SECRET.sub("[REDACTED]", shown)
    shown = "".join(character for character in shown if character.isprintable())
    return shown if len(shown) <= FINDING_SHOWN else shown[: FINDING_SHOWN - 3] + "..."


def finalization_summary(
    state: Document,
    manifest: Document,
    plan_hash: str,
    phase: str,
    gate_unknowns: Sequence[Mapping[str, object]] = (),
) -> Output:
    """``phase`` is "one" (the evaluator said codex-clean) or "two" (finalization-phase-two).

    ``state`` is the accepted state (read through its model), ``manifest`` the plan not yet judged.
    ``gate_unknowns`` is informational (wakeup notes): the plan binds the gates, not why one is unknown.
    """
    judged = build(RecurringState, state)
    unknowns = [build(GateUnknown, unknown) for unknown in gate_unknowns]
    operations = list(manifest["operations"])
    resolves = (
        "/operations/" + str(operations.index("resolve-codex-threads"))
        if "resolve-codex-threads" in operations
        else "/operations"
    )
    threads = [
        _covered({"id": (t["id"], _at(f"/eligible_threads/{i}/id")), "do": ("resolve", _words(resolves))})
        for i, t in enumerate(manifest["eligible_threads"])
    ]
    shown: Shown = {
        "plan_kind": ("finalization", _at("/kind")),
        "plan_hash": (plan_hash, {"digest_of": ""}),
        "phase": (
            "two: delete the automation"
            if phase == "two"
            else "one: the GitHub operations; the deletion needs a second plan",
            _informational("the evaluator's reason for asking for this plan"),
        ),
        "mode": (judged.mode, _informational("the loop's mode, from the state the plan is embedded in")),
        "operations": (operations, _at("/operations")),
        "repository": (manifest["repository"], _at("/repository")),
        "pull_request": (judged.pr_url, _words("/pr_number")),
        "base_branch": (manifest["base_branch"], _at("/base_branch")),
        "base_sha": (manifest["base_sha"], _at("/base_sha")),
        "head_branch": (manifest["head_branch"], _at("/head_branch")),
        "head_sha": (manifest["current_head_sha"], _at("/current_head_sha")),
        "request_key": (manifest["request_key"], _at("/request_key")),
        "mark_ready_for_review": (manifest["pr_is_draft"], _at("/pr_is_draft")),
        "threads": (threads, {"covered_by": "/eligible_threads", "shown": "each item's coverage"}),
        "non_codex_rooted_threads": (manifest["non_codex_rooted_threads"], _at("/non_codex_rooted_threads")),
        "gates": (dict(manifest["gates"]), _at("/gates")),
        "gates_unknown_because": (
            [f"{u.gate}: {u.rule} ({u.reason}; informational, not bound by the hash)" for u in unknowns],
            _informational("why a gate is unknown, read with the state; the plan binds the gates"),
        ),
        "automation_to_delete": (
            judged.owned_automation_id,
            _informational("the loop's own automation, as its state records it"),
        ),
        "merge": ("never: merging stays yours", _informational("policy: the loop never merges")),
        "how_to_approve": (how_to_approve(judged.mode, plan_hash), _HOW_TO_APPROVE),
    }
    return _covered(shown)


def text(summary: Output) -> str:
    """The summary as lines for people: informational items say so, and the hash stands once, on its own line."""
    coverage = summary.get("coverage", {})
    lines = [f"Plan ({summary['plan_kind']}), {summary['mode']}"]
    for key, value in summary.items():
        if key in ("plan_kind", "plan_hash", "mode", "how_to_approve", "coverage") or value is None or value == []:
            continue
        label = key.replace("_", " ") + (" (informational)" if "informational" in coverage.get(key, {}) else "")
        if key == "risk_acceptance_record":
            lines.append(f"  {label}: sha256 {coverage[key]['record_sha256']} (whole in the JSON summary)")
        elif key == "diff":
            lines += _diff_lines(value)
        elif isinstance(value, list):
            lines.append(f"  {label}:")
            for item in value:
                lines += _item_lines(item)
        elif isinstance(value, dict):
            lines.append(f"  {label}: " + ", ".join(f"{k}={v}" for k, v in value.items()))
        elif isinstance(value, str) and "\n" in value:
            lines.append(f"  {label}:")
            lines += [f"    | {line}" for line in value.split("\n")]
        else:
            lines.append(f"  {label}: {value}")
    if summary["mode"] == "autonomous":
        lines.append("autonomous mode: this plan needs no approval; it runs once the evaluator accepts it. Its hash:")
    else:
        lines.append(
            "To approve, reply with exactly this hash (all 64 characters, as printed; a shortened, re-cased or "
            "older hash, or any other reply, is no approval):"
        )
    lines.append(summary["plan_hash"])
    return "\n".join(lines) + "\n"


def _diff_lines(diff: Output) -> list[str]:
    if not diff["shown"]:
        return [f"  diff (informational): {diff['why']}"]
    files = f"{diff['files']} file" + ("" if diff["files"] == 1 else "s")
    lines = [f"  diff (covered by the plan hash): {files}, +{diff['added']} -{diff['removed']}"]
    lines += [
        f"    {file['path']} | " + ("binary" if file["binary"] else f"+{file['added']} -{file['removed']}")
        for file in diff["stat"]
    ]
    lines += [f"    | {line}" for line in diff["unified"]]
    return lines


def _item_lines(item: object) -> list[str]:
    """A list element: a dict's first value leads, each other shown key follows on its own line."""
    if isinstance(item, list):
        return [f"    - {' '.join(item)}"]
    if not isinstance(item, dict):
        return [f"    - {item}"]
    coverage = item.get("coverage", {})
    shown = [(k, v) for k, v in item.items() if k != "coverage"]
    (first, lead), others = shown[0], shown[1:]
    lines = [f"    - {lead}" if first == "id" else f"    - {first}: {lead}"]
    for key, value in others:
        mark = " (informational)" if "informational" in coverage.get(key, {}) else ""
        words = str(value).split("\n")
        lines.append(f"      {key.replace('_', ' ')}{mark}: {words[0]}")
        lines += [f"        {word}" for word in words[1:]]
    return lines
