"""Negative fixtures for the recurring state and for both manifests inside it."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from evaluator import markers, policy
from evaluator.canonical import digest, text_digest
from tools import samples
from tools.mutations import Mutation, both, deleter, setter
from tools.samples import response, sha, thread
from tools.state_scenarios import LATER, edit, finalization_planned, recurring_state, remediation_planned, report_state

Case = tuple[str, list[str], Callable[[], dict[str, Any]]]


def state_change(base: Callable[[], dict], *path_and_value: Any) -> Callable[[], dict]:
    return _on_state(base, setter(*path_and_value))


def state_delete(base: Callable[[], dict], *path: Any) -> Callable[[], dict]:
    return _on_state(base, deleter(*path))


def _on_state(base: Callable[[], dict], change: Mutation) -> Callable[[], dict]:
    def build() -> dict:
        state = base()
        change(state)
        return state

    return build


def plan_change(
    base: Callable[[], dict], kind: str, change: Callable[[dict], None], *, reseal: bool = True
) -> Callable[[], dict]:
    """Edit the manifest inside a planned state and (by default) re-hash it."""

    def build() -> dict:
        state = base()
        manifest = state[f"{kind}_manifest"]
        change(manifest)
        if reseal:
            state[f"{kind}_plan_hash"] = digest(manifest)
        if kind == "remediation" and reseal:
            state["execution_boundary"] = copy.deepcopy(manifest["execution"])
        return state

    return build


def template(text: str) -> Callable[[dict], None]:
    return both(
        setter("review_request_body_template", text), setter("review_request_body_template_sha256", text_digest(text))
    )


def records(paths: list[str], recorded: list[str] | None = None) -> Callable[[dict], None]:
    recorded = paths if recorded is None else recorded
    return both(setter("paths", paths), setter("path_records", [samples.path_record(p) for p in recorded]))


def two_responses(planned: Callable[[], dict]) -> Callable[[], dict]:
    def build() -> dict:
        state = planned()
        extra = response(
            "review-comment",
            2100000002,
            clean=False,
            commit=state["request_head_sha"],
            created_at="2026-11-29T10:05:30Z",
        )
        state["responses"].append(extra)
        kind = "remediation" if state["remediation_manifest"] else "finalization"
        state[f"{kind}_manifest"]["responses"] = copy.deepcopy(state["responses"])
        state[f"{kind}_plan_hash"] = digest(state[f"{kind}_manifest"])
        return state

    return build


def state_with_boundary(planned: Callable[[], dict], change: Callable[[dict], None]) -> Callable[[], dict]:
    """Change the execution boundary in both the manifest and the state (no drift)."""

    def build() -> dict:
        state = planned()
        change(state["remediation_manifest"]["execution"])
        state["remediation_plan_hash"] = digest(state["remediation_manifest"])
        state["execution_boundary"] = copy.deepcopy(state["remediation_manifest"]["execution"])
        return state

    return build


R, F = "remediation", "finalization"
rem = remediation_planned
fin = finalization_planned
RUN = samples.RUN_ID
MARK1 = markers.request_marker(RUN, 1)
HEAD1 = sha("head-1")
OPS = [
    "edit-files",
    "run-validation",
    "commit",
    "push",
    "reply-to-codex-threads",
    "request-codex-review",
    "update-automation",
]

# Rejected: the manifest is malformed in itself.
REMEDIATION_INVALID: list[Case] = [
    ("missing-key--paths", ["missing-key"], plan_change(rem, R, deleter("paths"))),
    ("unknown-key--extra", ["unknown-key"], plan_change(rem, R, setter("approved_by", "me"))),
    ("wrong-type--pr-number-string", ["wrong-type"], plan_change(rem, R, setter("pr_number", "42"))),
    ("invalid-value--kind", ["invalid-value"], plan_change(rem, R, setter("kind", "finalization"))),
    ("version-unsupported--zero", ["version-unsupported"], plan_change(rem, R, setter("version", 0))),
    (
        "policy-schema-version-unsupported--two",
        ["policy-schema-version-unsupported"],
        plan_change(rem, R, setter("policy_schema_version", 2)),
    ),
    (
        "operations-mismatch--validation-missing",
        ["operations-mismatch"],
        plan_change(rem, R, setter("operations", [op for op in OPS if op != "run-validation"])),
    ),
    (
        "operations-mismatch--push-before-commit",
        ["operations-mismatch"],
        plan_change(rem, R, setter("operations", OPS[:2] + ["push", "commit"] + OPS[4:])),
    ),
    (
        "operations-mismatch--validation-without-commands",
        ["operations-mismatch"],
        plan_change(rem, R, setter("commands", [])),
    ),
    (
        "operations-mismatch--finalization-operation",
        ["operations-mismatch"],
        plan_change(rem, R, setter("operations", OPS + ["delete-owned-automation"])),
    ),
    (
        "paths-not-sorted--reversed",
        ["path-records-not-sorted", "paths-not-sorted"],
        plan_change(rem, R, records(["tests/test_app.py", "src/app.py"])),
    ),
    (
        "paths-not-unique--twice",
        ["path-records-mismatch", "paths-not-unique"],
        plan_change(rem, R, records(["src/app.py", "src/app.py"])),
    ),
    (
        "path-records-mismatch--other",
        ["path-records-mismatch"],
        plan_change(rem, R, records(["src/app.py"], ["src/other.py"])),
    ),
    (
        "path-record-outside-worktree--escape",
        ["path-record-outside-worktree"],
        plan_change(rem, R, setter("path_records", 0, "inside_worktree", False)),
    ),
    (
        "path-record-in-git-metadata--git",
        ["path-record-in-git-metadata"],
        plan_change(rem, R, setter("path_records", 0, "outside_git_metadata", False)),
    ),
    ("paths-empty--nothing-to-edit", ["paths-empty"], plan_change(rem, R, records([]))),
    ("invalid-path--git-dir", ["invalid-path"], plan_change(rem, R, records([".git/hooks/pre-push"]))),
    ("invalid-path--gitattributes", ["invalid-path"], plan_change(rem, R, records([".gitattributes"]))),
    (
        "command-argv-not-absolute--relative",
        ["command-argv-not-absolute"],
        plan_change(rem, R, setter("commands", 0, "argv", ["./run-tests"])),
    ),
    ("command-argv-empty--empty", ["command-argv-empty"], plan_change(rem, R, setter("commands", 1, "argv", []))),
    (
        "review-template-marker-mismatch--round-zero",
        ["review-template-marker-mismatch"],
        plan_change(rem, R, template("@codex review\n" + markers.request_marker(RUN, 0))),
    ),
    (
        "review-template-marker-mismatch--round-two",
        ["review-template-marker-mismatch"],
        plan_change(rem, R, template("@codex review\n" + markers.request_marker(RUN, 2))),
    ),
    (
        "review-template-sha256-mismatch--stale",
        ["review-template-sha256-mismatch"],
        plan_change(rem, R, setter("review_request_body_template", "@codex review again\n" + MARK1)),
    ),
    (
        "review-template-missing-mention--none",
        ["review-template-missing-mention"],
        plan_change(rem, R, template("review please\n" + MARK1)),
    ),
    (
        "review-template-unknown-placeholder--head",
        ["review-template-unknown-placeholder"],
        plan_change(rem, R, template("@codex review {{HEAD}}\n" + MARK1)),
    ),
    (
        "request-key-invalid--no-colon",
        ["request-key-invalid"],
        plan_change(rem, R, setter("request_key", "1900000001-" + HEAD1)),
    ),
    (
        "request-key-head-mismatch--other-sha",
        ["request-key-head-mismatch"],
        plan_change(rem, R, setter("request_key", "1900000001:" + sha("elsewhere"))),
    ),
    (
        "responses-not-sorted--reversed",
        ["responses-not-sorted"],
        plan_change(two_responses(rem), R, lambda m: m["responses"].reverse()),
    ),
    (
        "threads-not-sorted--reversed",
        ["threads-not-sorted"],
        plan_change(rem, R, lambda m: m["actionable_threads"].reverse()),
    ),
    (
        "boundary-protection-disabled--hooks",
        ["boundary-protection-disabled"],
        state_with_boundary(rem, setter("git", "hooks_disabled", False)),
    ),
    (
        "risk-acceptance-missing--explicit",
        ["risk-acceptance-missing"],
        state_with_boundary(
            rem, both(setter("isolation", policy.EXPLICIT_RISK), setter("git", "profile", policy.EXPLICIT_RISK_PROFILE))
        ),
    ),
    ("invalid-sha--base", ["invalid-sha"], plan_change(rem, R, setter("base_sha", "main"))),
    (
        "remediation-plan-hash-mismatch--not-resealed",
        ["remediation-plan-hash-mismatch"],
        plan_change(rem, R, setter("commands", 0, "definition_sha256", samples.hexdigest("other")), reseal=False),
    ),
    ("plan-hash-missing--null-hash", ["plan-hash-missing"], state_change(rem, "remediation_plan_hash", None)),
    (
        "execution-boundary-presence--null-boundary",
        ["execution-boundary-presence"],
        state_change(rem, "execution_boundary", None),
    ),
]


def _execution_drift() -> Callable[[], dict]:
    def build() -> dict:
        state = rem()
        state["remediation_manifest"]["execution"]["filesystem_write_scope_sha256"] = samples.hexdigest("wider")
        state["remediation_plan_hash"] = digest(state["remediation_manifest"])
        return state

    return build


# Accepted as a state-inconsistency: the manifest is well formed but was not built from this snapshot.
REMEDIATION_STALE: list[Case] = [
    ("base-sha", ["/remediation_manifest/base_sha"], plan_change(rem, R, setter("base_sha", sha("base-0")))),
    (
        "current-head-sha",
        ["/remediation_manifest/current_head_sha", "/remediation_manifest/request_key"],
        plan_change(
            rem,
            R,
            both(setter("current_head_sha", sha("head-0")), setter("request_key", "1900000001:" + sha("head-0"))),
        ),
    ),
    ("remote-name", ["/remediation_manifest/remote_name"], plan_change(rem, R, setter("remote_name", "upstream"))),
    ("head-branch", ["/remediation_manifest/head_branch"], plan_change(rem, R, setter("head_branch", "codex/other"))),
    ("base-branch", ["/remediation_manifest/base_branch"], plan_change(rem, R, setter("base_branch", "develop"))),
    ("pr-number", ["/remediation_manifest/pr_number"], plan_change(rem, R, setter("pr_number", 43))),
    ("repository", ["/remediation_manifest/repository"], plan_change(rem, R, setter("repository", "octo-org/fork"))),
    (
        "run-id",
        ["/remediation_manifest/run_id"],
        plan_change(
            rem, R, both(setter("run_id", "0" * 32), template("@codex review\n" + markers.request_marker("0" * 32, 1)))
        ),
    ),
    (
        "responses",
        ["/remediation_manifest/responses"],
        plan_change(two_responses(rem), R, lambda m: m["responses"].pop()),
    ),
    (
        "actionable-threads",
        ["/remediation_manifest/actionable_threads"],
        plan_change(rem, R, lambda m: m["actionable_threads"].pop()),
    ),
    ("execution", ["/remediation_manifest/execution"], _execution_drift()),
    (
        "request-key",
        ["/remediation_manifest/request_key"],
        plan_change(rem, R, setter("request_key", "1900000000:" + HEAD1)),
    ),
]

FIN_OPS = ["mark-draft-ready", "delete-owned-automation"]
FINALIZATION_INVALID: list[Case] = [
    (
        "operations-mismatch--draft-not-readied",
        ["operations-mismatch"],
        plan_change(fin, F, setter("operations", ["delete-owned-automation"])),
    ),
    (
        "operations-mismatch--delete-first",
        ["operations-mismatch"],
        plan_change(fin, F, setter("operations", FIN_OPS[::-1])),
    ),
    (
        "operations-mismatch--resolve-without-threads",
        ["operations-mismatch"],
        plan_change(
            fin, F, setter("operations", ["mark-draft-ready", "resolve-codex-threads", "delete-owned-automation"])
        ),
    ),
    (
        "operations-mismatch--merge",
        ["operations-mismatch"],
        plan_change(fin, F, setter("operations", ["mark-draft-ready", "merge-pr", "delete-owned-automation"])),
    ),
    ("missing-key--gates-checks", ["missing-key"], plan_change(fin, F, deleter("gates", "checks"))),
    ("invalid-value--gate-green", ["invalid-value"], plan_change(fin, F, setter("gates", "checks", "green"))),
    (
        "wrong-type--non-codex-count-string",
        ["wrong-type"],
        plan_change(fin, F, setter("non_codex_rooted_threads", "0")),
    ),
    (
        "negative-integer--non-codex-count",
        ["negative-integer"],
        plan_change(fin, F, setter("non_codex_rooted_threads", -1)),
    ),
    ("wrong-type--draft-integer", ["wrong-type"], plan_change(fin, F, setter("pr_is_draft", 1))),
    ("unknown-key--merge-method", ["unknown-key"], plan_change(fin, F, setter("merge_method", "squash"))),
    (
        "finalization-plan-hash-mismatch--not-resealed",
        ["finalization-plan-hash-mismatch"],
        plan_change(fin, F, setter("gates", "approvals", "fail"), reseal=False),
    ),
    ("plans-conflict--both-plans", ["execution-boundary-presence", "plans-conflict"], lambda: _both_plans()),
    ("threads-not-sorted--eligible", ["threads-not-sorted"], lambda: _eligible_reversed()),
    ("request-key-invalid--empty", ["request-key-invalid"], plan_change(fin, F, setter("request_key", ""))),
]

FINALIZATION_STALE: list[Case] = [
    ("gates", ["/finalization_manifest/gates"], plan_change(fin, F, setter("gates", "checks", "pending"))),
    (
        "pr-is-draft",
        ["/finalization_manifest/pr_is_draft"],
        plan_change(fin, F, both(setter("pr_is_draft", False), setter("operations", ["delete-owned-automation"]))),
    ),
    (
        "non-codex-rooted-threads",
        ["/finalization_manifest/non_codex_rooted_threads"],
        plan_change(fin, F, setter("non_codex_rooted_threads", 2)),
    ),
    (
        "eligible-threads",
        ["/finalization_manifest/eligible_threads"],
        plan_change(
            fin,
            F,
            both(
                setter("eligible_threads", [thread("ddd4")]),
                setter("operations", ["mark-draft-ready", "resolve-codex-threads", "delete-owned-automation"]),
            ),
        ),
    ),
    ("responses", ["/finalization_manifest/responses"], plan_change(fin, F, setter("responses", []))),
    ("base-sha", ["/finalization_manifest/base_sha"], plan_change(fin, F, setter("base_sha", sha("base-0")))),
    ("remote-name", ["/finalization_manifest/remote_name"], plan_change(fin, F, setter("remote_name", "fork"))),
]


def _both_plans() -> dict:
    state = fin()
    remediation = samples.remediation_manifest(state)
    state["remediation_manifest"], state["remediation_plan_hash"] = remediation, digest(remediation)
    return state


def _eligible_reversed() -> dict:
    state = finalization_planned(eligible_codex_threads=[thread("a1"), thread("b2")])
    state["finalization_manifest"]["eligible_threads"].reverse()
    state["finalization_plan_hash"] = digest(state["finalization_manifest"])
    return state


base = recurring_state


def _unrecognized(
    replies: list[tuple[str, int]], *, excerpt: str = "Codex said something new.", listed_source: str | None = None
) -> dict:
    """A state whose unrecognised replies are ``replies`` (each also a response, as the collector writes it)."""
    state = base()
    state["responses"] = sorted(
        (response(source, identifier, clean=False, created_at=LATER) for source, identifier in replies),
        key=lambda r: (r["source"], int(r["id"])),
    )
    state["unrecognized_replies"] = [
        {"created_at": LATER, "excerpt": excerpt, "id": str(identifier), "source": listed_source or source}
        for source, identifier in replies
    ]
    return state


STATE_INVALID: list[Case] = [
    ("missing-key--observed-at", ["missing-key"], state_delete(base, "observed_at")),
    ("missing-key--claims", ["missing-key"], state_delete(base, "claims")),
    ("unknown-key--checkpoint-extra", ["unknown-key"], state_change(base, "automation_key", "x")),
    ("wrong-type--fix-rounds-string", ["wrong-type"], state_change(base, "fix_rounds", "0")),
    ("wrong-type--draft-null", ["wrong-type"], state_change(base, "pr_is_draft", None)),
    ("negative-integer--fix-rounds", ["negative-integer"], state_change(base, "fix_rounds", -1)),
    ("invalid-timestamp--naive", ["invalid-timestamp"], state_change(base, "observed_at", "2026-11-29T10:02:00")),
    ("invalid-timestamp--date-only", ["invalid-timestamp"], state_change(base, "request_created_at", "2026-11-29")),
    (
        "invalid-timestamp--impossible-date",
        ["invalid-timestamp"],
        state_change(base, "observed_at", "2026-02-30T10:00:00Z"),
    ),
    ("invalid-value--mode", ["invalid-value"], state_change(base, "mode", "yolo")),
    ("invalid-value--pr-state", ["invalid-value"], state_change(base, "pr_state", "draft")),
    ("invalid-value--bot-type-user", ["invalid-value"], lambda: _with_response(bot_type="User")),
    ("response-bot-untrusted--look-alike", ["response-bot-untrusted"], lambda: _with_response(bot_id=199175423)),
    (
        "response-signal-source-invalid--clean-review",
        ["response-signal-source-invalid"],
        lambda: _with_response(source="review"),
    ),
    (
        "invalid-timestamp--end-of-calendar",
        ["invalid-timestamp"],
        state_change(base, "request_created_at", "9999-12-31T23:50:00Z"),
    ),
    ("invalid-value--response-source", ["invalid-value"], lambda: _with_response(source="commit-comment")),
    ("invalid-id--leading-zero", ["invalid-id"], lambda: _with_response(id="0012")),
    ("wrong-type--response-id-integer", ["wrong-type"], lambda: _with_response(id=2000000003)),
    ("unknown-key--response-login", ["unknown-key"], lambda: _with_response(login="chatgpt-codex-connector[bot]")),
    ("invalid-sha--current-head", ["invalid-sha"], state_change(base, "current_head_sha", HEAD1[:39])),
    (
        "invalid-digest--evaluator",
        ["invalid-digest"],
        state_change(base, "current_evaluator_sha256", "sha256-" + "0" * 57),
    ),
    ("version-unsupported--two", ["version-unsupported"], state_change(base, "version", 2)),
    ("host-not-policy--enterprise", ["host-not-policy"], state_change(base, "host", "ghe.example.com")),
    (
        "pr-url-not-canonical--http",
        ["pr-url-not-canonical"],
        state_change(base, "pr_url", "http://github.com/octo-org/hello-world/pull/42"),
    ),
    (
        "pr-url-not-canonical--other-number",
        ["pr-url-not-canonical"],
        state_change(base, "pr_url", "https://github.com/octo-org/hello-world/pull/41"),
    ),
    ("head-branch-equals-base--main", ["head-branch-equals-base"], state_change(base, "head_branch", "main")),
    ("responses-not-sorted--by-id", ["responses-not-sorted"], lambda: _responses([2000000009, 2000000003])),
    (
        "responses-not-sorted--by-source",
        ["responses-not-sorted"],
        lambda: _responses([2000000003, 2000000004], sources=["review", "issue-comment"]),
    ),
    ("responses-not-sorted--numeric-not-lexical", ["responses-not-sorted"], lambda: _responses([10, 9])),
    (
        "threads-not-sorted--actionable",
        ["threads-not-sorted"],
        state_change(base, "actionable_codex_threads", [thread("b"), thread("a")]),
    ),
    (
        "threads-overlap--both-lists",
        ["threads-overlap"],
        lambda: edit(base(), actionable_codex_threads=[thread("a")], eligible_codex_threads=[thread("a")]),
    ),
    ("claims-not-sorted--descending", ["claims-not-sorted"], lambda: _claims([2, 1])),
    (
        "unrecognized-replies-not-sorted--descending",
        ["unrecognized-replies-not-sorted"],
        lambda: _unrecognized([("issue-comment", 11), ("issue-comment", 9)]),
    ),
    (
        "excerpt-invalid--too-long",
        ["excerpt-invalid"],
        lambda: _unrecognized([("issue-comment", 9)], excerpt="word " * 20),
    ),
    (
        "excerpt-invalid--link-left-in",
        ["excerpt-invalid"],
        lambda: _unrecognized([("issue-comment", 9)], excerpt="see https://example.invalid/x"),
    ),
    (
        "excerpt-invalid--credential-left-in",
        ["excerpt-invalid"],
        lambda: _unrecognized([("issue-comment", 9)], excerpt="token ghp_" + "A" * 36),
    ),
    (
        "excerpt-invalid--control-character",
        ["excerpt-invalid"],
        lambda: _unrecognized([("issue-comment", 9)], excerpt="Codex\u202esays"),
    ),
    (
        "unrecognized-reply-not-a-response--no-response",
        ["unrecognized-reply-not-a-response"],
        lambda: edit(_unrecognized([("issue-comment", 9)]), responses=[]),
    ),
    (
        "unrecognized-reply-not-a-response--other-source",
        ["unrecognized-reply-not-a-response"],
        lambda: _unrecognized([("issue-comment", 9)], listed_source="review"),
    ),
    (
        "invalid-value--unavailable-kind-retired",
        ["invalid-value"],
        state_change(base, "unavailable_replies", [{"created_at": LATER, "id": "9", "kind": "no-environment"}]),
    ),
    (
        "unacknowledged-not-current-request--another-comment",
        ["unacknowledged-not-current-request"],
        state_change(base, "unavailable_replies", [{"created_at": LATER, "id": "9", "kind": "unacknowledged"}]),
    ),
    (
        "reactions-not-sorted--descending",
        ["reactions-not-sorted"],
        state_change(base, "plus_one_reactions", [{"created_at": LATER, "id": "10"}, {"created_at": LATER, "id": "9"}]),
    ),
    (
        "automations-not-sorted--descending",
        ["automations-not-sorted"],
        state_change(
            base,
            "automations",
            [samples.automation_record(id="b", directory="b"), samples.automation_record(id="a", directory="a")],
        ),
    ),
    (
        "marker-anomalies-not-sorted--descending",
        ["marker-anomalies-not-sorted"],
        state_change(base, "marker_anomalies", ["20", "3"]),
    ),
    (
        "request-key-mismatch--other-sha",
        ["request-key-mismatch"],
        state_change(base, "request_key", "1900000001:" + sha("other")),
    ),
    (
        "request-key-invalid--completed",
        ["request-key-invalid"],
        lambda: edit(base(), fix_rounds=1, completed_request_keys=["abc"]),
    ),
    (
        "completed-request-keys-not-sorted--descending",
        ["completed-request-keys-not-sorted"],
        lambda: edit(base(), fix_rounds=2, completed_request_keys=["20:" + sha("a"), "3:" + sha("b")]),
    ),
    ("fix-rounds-mismatch--too-many", ["fix-rounds-mismatch"], state_change(base, "fix_rounds", 1)),
    (
        "request-checkpoint-partial--no-deadline",
        ["request-checkpoint-partial"],
        state_change(base, "request_deadline", None),
    ),
    (
        "request-deadline-not-policy--one-hour",
        ["request-deadline-not-policy"],
        state_change(base, "request_deadline", "2026-11-29T11:00:00Z"),
    ),
    ("report-only-field-not-null--remote", ["report-only-field-not-null"], lambda: report_state(remote_name="origin")),
    (
        "report-only-field-not-null--automations",
        ["report-only-field-not-null"],
        lambda: report_state(automations=[samples.automation_record()]),
    ),
    (
        "write-mode-field-null--automation-id",
        ["write-mode-field-null"],
        state_change(base, "owned_automation_id", None),
    ),
    (
        "write-mode-field-null--no-request",
        ["write-mode-field-null"],
        lambda: edit(
            base(),
            request_comment_id=None,
            request_head_sha=None,
            request_created_at=None,
            request_deadline=None,
            request_key=None,
        ),
    ),
]


def _with_response(**changes: Any) -> dict:
    state = base(observed_at=LATER)
    state["responses"] = [{**response("issue-comment", 2000000003, clean=True), **changes}]
    return state


def _responses(ids: list[int], sources: list[str] | None = None) -> dict:
    sources = sources or ["issue-comment"] * len(ids)
    state = base(observed_at=LATER)
    state["responses"] = [
        response(source, identifier, clean=False) for source, identifier in zip(sources, ids, strict=True)
    ]
    return state


def _claims(ids: list[int]) -> dict:
    state = base()
    state["claims"] = [samples.claim(state, "remediation", samples.hexdigest("plan"), comment_id=i) for i in ids]
    return state
