"""Valid and invalid bootstrap prompt documents."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from evaluator import markers, policy
from evaluator.canonical import text_digest
from tools import samples
from tools.mutations import both, setter
from tools.samples import sha


def valid_prompts() -> dict[str, dict[str, Any]]:
    explicit, _ = samples.explicit_risk_initial()
    return {
        "new-pr": samples.prompt_document(),
        "new-pr-autonomous": samples.prompt_document(samples.initial_document(mode="autonomous")),
        "reuse-pr": samples.prompt_document(samples.initial_document(reuse_pr=True, create_branch=False)),
        "no-commit-required": samples.prompt_document(samples.initial_document(commit=False, commands=False)),
        "explicit-risk-acceptance": samples.prompt_document(explicit),
    }


def on_boot(change: Callable[[dict], None]) -> Callable[[], dict]:
    """Change the bootstrap snapshot, then re-seal digests and the rendering."""

    def build() -> dict:
        document = samples.prompt_document()
        boot = copy.deepcopy(document["bootstrap_snapshot"])
        change(boot)
        return samples.seal_prompt(document["initial_document"], boot)

    return build


def on_document(change: Callable[[dict], None], initial: Callable[[], dict] | None = None) -> Callable[[], dict]:
    def build() -> dict:
        document = samples.prompt_document(initial() if initial else None)
        change(document)
        return document

    return build


def heads(head: str) -> Callable[[dict], None]:
    """Move every head field of the receipt and the state together."""

    def change(boot: dict) -> None:
        receipt, state = boot["post_write_receipt"], boot["state"]
        for field in ("final_head_sha", "pr_head_sha", "remote_head_sha"):
            receipt[field] = head
        for field in ("current_head_sha", "remote_head_sha", "request_head_sha"):
            state[field] = head
        state["request_key"] = f"{state['request_comment_id']}:{head}"
        body = receipt["review_request_body"].rsplit("sha=", 1)[0] + f"sha={head} -->"
        receipt["review_request_body"], receipt["review_request_body_sha256"] = body, text_digest(body)

    return change


def _rerun(boot: dict) -> None:
    boot["state"]["run_id"] = "0" * 32
    boot["state"]["automations"][0]["name"] = markers.automation_key(
        policy.HOST, samples.REPOSITORY, samples.PR_NUMBER, "0" * 32
    )


def _unexpected_commit() -> dict:
    """commit_required is false, yet the receipt reports a new head."""
    document = samples.prompt_document(samples.initial_document(commit=False, commands=False))
    boot = copy.deepcopy(document["bootstrap_snapshot"])
    heads(sha("surprise"))(boot)
    return samples.seal_prompt(document["initial_document"], boot)


R = ("post_write_receipt",)
S = ("state",)
HEAD1 = sha("head-1")
OTHER = sha("other")
PAUSED_RECORD = samples.automation_record(status="PAUSED", prompt_sha256=samples.hexdigest("inert-stub"))

INVALID_PROMPTS: list[tuple[str, list[str], Callable[[], dict]]] = [
    ("missing-key--rendered-prompt", ["missing-key"], on_document(lambda d: d.pop("rendered_prompt"))),
    ("missing-key--receipt-field", ["missing-key"], on_boot(lambda b: b["post_write_receipt"].pop("worktree_clean"))),
    ("unknown-key--bootstrap-extra", ["unknown-key"], on_boot(setter("automation_id", "x"))),
    ("unknown-key--receipt-extra", ["unknown-key"], on_boot(setter(*R, "merged", False))),
    ("wrong-type--worktree-clean-string", ["wrong-type"], on_boot(setter(*R, "worktree_clean", "true"))),
    (
        "invalid-timestamp--deadline-naive",
        ["invalid-timestamp"],
        on_boot(setter("request_deadline", "2026-11-29T10:30:00")),
    ),
    (
        "operations-mismatch--initial-rule",
        ["operations-mismatch"],
        on_document(
            lambda d: d.update(
                initial_document=samples.seal_initial(
                    d["initial_document"]["initial_snapshot"],
                    {**d["initial_document"]["initial_manifest"], "operations": ["fetch-base"]},
                )
            )
        ),
    ),
    (
        "mode-report-only-has-no-plan--report-only",
        ["mode-report-only-has-no-plan"],
        on_document(
            lambda d: d.update(
                initial_document=samples.seal_initial(
                    d["initial_document"]["initial_snapshot"],
                    {**d["initial_document"]["initial_manifest"], "mode": "report-only"},
                )
            )
        ),
    ),
    (
        "initial-plan-hash-mismatch--outer",
        ["initial-plan-hash-mismatch"],
        on_document(setter("initial_document", "initial_plan_hash", samples.hexdigest("x"))),
    ),
    (
        "bootstrap-plan-hash-mismatch--other",
        ["bootstrap-plan-hash-mismatch"],
        on_boot(setter("initial_plan_hash", samples.hexdigest("other-plan"))),
    ),
    (
        "pr-url-not-canonical--pulls",
        ["pr-url-not-canonical"],
        on_boot(setter("pr_url", "https://github.com/octo-org/hello-world/pulls/42")),
    ),
    (
        "pr-url-not-canonical--fork",
        ["pr-url-not-canonical"],
        on_boot(setter("pr_url", "https://github.com/someone/hello-world/pull/42")),
    ),
    (
        "bootstrap-snapshot-sha256-mismatch--stale",
        ["bootstrap-snapshot-sha256-mismatch"],
        on_document(setter("bootstrap_snapshot_sha256", samples.hexdigest("boot"))),
    ),
    (
        "request-deadline-not-policy--one-hour",
        ["bootstrap-identity-mismatch", "request-deadline-not-policy"],
        on_boot(setter("request_deadline", "2026-11-29T11:00:00Z")),
    ),
    ("receipt-base-sha-mismatch--moved", ["receipt-base-sha-mismatch"], on_boot(setter(*R, "base_sha", sha("base-2")))),
    (
        "receipt-diff-mismatch--other-diff",
        ["receipt-diff-mismatch"],
        on_boot(setter(*R, "pushed_diff_sha256", samples.hexdigest("other-diff"))),
    ),
    (
        "receipt-paths-mismatch--extra-path",
        ["receipt-paths-mismatch"],
        on_boot(setter(*R, "paths", ["src/app.py", "src/extra.py", "tests/test_app.py"])),
    ),
    (
        "receipt-initial-head-mismatch--other",
        ["receipt-initial-head-mismatch"],
        on_boot(setter(*R, "initial_head_sha", OTHER)),
    ),
    ("receipt-final-head-not-new--no-commit-made", ["receipt-final-head-not-new"], on_boot(heads(sha("head")))),
    ("receipt-final-head-changed--unexpected-commit", ["receipt-final-head-changed"], _unexpected_commit),
    (
        "receipt-head-not-descendant--force-push",
        ["receipt-head-not-descendant"],
        on_boot(setter(*R, "head_descends_from_initial", False)),
    ),
    ("receipt-head-mismatch--remote", ["receipt-head-mismatch"], on_boot(setter(*R, "remote_head_sha", OTHER))),
    ("receipt-head-mismatch--pr", ["receipt-head-mismatch"], on_boot(setter(*R, "pr_head_sha", OTHER))),
    (
        "receipt-head-mismatch--state-request",
        ["receipt-head-mismatch", "request-key-mismatch"],
        on_boot(setter(*S, "request_head_sha", OTHER)),
    ),
    ("receipt-worktree-dirty--dirty", ["receipt-worktree-dirty"], on_boot(setter(*R, "worktree_clean", False))),
    (
        "receipt-review-body-mismatch--edited",
        ["receipt-review-body-mismatch"],
        on_boot(
            both(
                setter(
                    *R,
                    "review_request_body",
                    "@codex review please\n"
                    + markers.request_marker(samples.RUN_ID, 0).replace("{{FINAL_HEAD_SHA}}", HEAD1),
                ),
                lambda b: b["post_write_receipt"].update(
                    review_request_body_sha256=text_digest(b["post_write_receipt"]["review_request_body"])
                ),
            )
        ),
    ),
    (
        "receipt-review-body-mismatch--placeholder-left",
        ["receipt-review-body-mismatch"],
        on_boot(
            both(
                setter(*R, "review_request_body", markers.default_review_template(samples.RUN_ID, 0)),
                lambda b: b["post_write_receipt"].update(
                    review_request_body_sha256=text_digest(b["post_write_receipt"]["review_request_body"])
                ),
            )
        ),
    ),
    (
        "receipt-review-body-sha256-mismatch--stale",
        ["receipt-review-body-sha256-mismatch"],
        on_boot(setter(*R, "review_request_body_sha256", samples.hexdigest("body"))),
    ),
    (
        "bootstrap-identity-mismatch--remote-name",
        ["bootstrap-identity-mismatch"],
        on_boot(both(setter(*S, "remote_name", "upstream"), setter(*S, "current_remote_name", "upstream"))),
    ),
    ("bootstrap-identity-mismatch--run", ["bootstrap-identity-mismatch"], on_boot(lambda b: _rerun(b))),
    ("bootstrap-identity-mismatch--mode", ["bootstrap-identity-mismatch"], on_boot(setter(*S, "mode", "autonomous"))),
    (
        "bootstrap-identity-mismatch--user",
        ["bootstrap-identity-mismatch"],
        on_boot(both(setter(*S, "authenticated_user_id", 77), setter(*S, "current_authenticated_user_id", 77))),
    ),
    (
        "bootstrap-identity-mismatch--base-moved",
        ["bootstrap-identity-mismatch"],
        on_boot(both(setter(*S, "base_sha", sha("base-2")), setter(*S, "current_base_sha", sha("base-2")))),
    ),
    (
        "bootstrap-identity-mismatch--head-branch",
        ["bootstrap-identity-mismatch"],
        on_boot(both(setter(*S, "head_branch", "codex/other"), setter(*S, "current_head_branch", "codex/other"))),
    ),
    (
        "bootstrap-state-not-fresh--fix-rounds",
        ["bootstrap-state-not-fresh"],
        on_boot(lambda b: b["state"].update(fix_rounds=1, completed_request_keys=["1800000000:" + OTHER])),
    ),
    ("bootstrap-state-not-fresh--pr-closed", ["bootstrap-state-not-fresh"], on_boot(setter(*S, "pr_state", "closed"))),
    (
        "bootstrap-state-not-fresh--approval",
        ["bootstrap-state-not-fresh"],
        on_boot(setter(*S, "approved_plan_hash", samples.hexdigest("plan"))),
    ),
    (
        "bootstrap-state-not-fresh--wakeup",
        ["bootstrap-state-not-fresh"],
        on_boot(setter(*S, "wakeup_id", samples.WAKEUP_ID)),
    ),
    (
        "bootstrap-state-not-fresh--prompt-digest",
        ["bootstrap-state-not-fresh"],
        on_boot(setter(*S, "expected_prompt_sha256", samples.PROMPT_SHA256)),
    ),
    (
        "rendered-prompt-mismatch--trailing-newline",
        ["rendered-prompt-mismatch"],
        on_document(
            lambda d: d.update(
                rendered_prompt=d["rendered_prompt"] + "\n",
                rendered_prompt_sha256=text_digest(d["rendered_prompt"] + "\n"),
            )
        ),
    ),
    (
        "rendered-prompt-mismatch--other-key",
        ["rendered-prompt-mismatch"],
        on_document(
            lambda d: d.update(
                rendered_prompt=d["rendered_prompt"].replace("#42@", "#43@"),
                rendered_prompt_sha256=text_digest(d["rendered_prompt"].replace("#42@", "#43@")),
            )
        ),
    ),
    (
        "rendered-prompt-sha256-mismatch--stale",
        ["rendered-prompt-sha256-mismatch"],
        on_document(setter("rendered_prompt_sha256", samples.hexdigest("prompt"))),
    ),
    (
        "prompt-state-not-bootstrap--active",
        ["prompt-state-not-bootstrap"],
        on_boot(setter(*S, "automations", [samples.automation_record(prompt_sha256=samples.hexdigest("inert-stub"))])),
    ),
    (
        "prompt-state-not-bootstrap--no-automation",
        ["prompt-state-not-bootstrap"],
        on_boot(setter(*S, "automations", [])),
    ),
    (
        "prompt-state-not-bootstrap--two-automations",
        ["prompt-state-not-bootstrap"],
        on_boot(setter(*S, "automations", [PAUSED_RECORD, {**PAUSED_RECORD, "id": "zz", "directory": "zz"}])),
    ),
    (
        "prompt-state-not-bootstrap--wrong-schedule",
        ["prompt-state-not-bootstrap"],
        on_boot(setter(*S, "automations", [{**PAUSED_RECORD, "rrule": "FREQ=HOURLY"}])),
    ),
    (
        "prompt-state-not-bootstrap--evaluator-edited",
        ["prompt-state-not-bootstrap"],
        on_boot(setter(*S, "current_evaluator_sha256", samples.hexdigest("edited"))),
    ),
    (
        "prompt-state-not-bootstrap--marker-anomaly",
        ["prompt-state-not-bootstrap"],
        on_boot(setter(*S, "marker_anomalies", ["1900000002"])),
    ),
    (
        "bootstrap-request-not-pending--observed-after-deadline",
        ["bootstrap-request-not-pending"],
        on_boot(setter(*S, "observed_at", "2026-11-29T11:00:00Z")),
    ),
    (
        "bootstrap-request-not-pending--observed-before-request",
        ["bootstrap-request-not-pending"],
        on_boot(setter(*S, "observed_at", "2026-11-29T09:59:59Z")),
    ),
    (
        "responses-not-sorted--state-rule",
        ["responses-not-sorted"],
        on_boot(
            setter(
                *S,
                "responses",
                [samples.response("review", 5, clean=False), samples.response("issue-comment", 4, clean=False)],
            )
        ),
    ),
]
