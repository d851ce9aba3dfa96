"""A whole loop as a sequence of wakeup states, each run through the CLI."""

from __future__ import annotations

import copy
import json

from evaluator import markers
from evaluator.canonical import digest
from evaluator.cli import main
from tools import samples
from tools.state_scenarios import bootstrap_state, edit


def step(capsys, tmp_path, state, *args):
    path = tmp_path / "state.json"
    path.write_text(json.dumps(state))
    status = main(["--state", str(path), *args])
    output = json.loads(capsys.readouterr().out)
    assert status == 0, output
    return output


def test_an_approval_gated_loop_from_bootstrap_to_done(capsys, tmp_path):
    walk = []

    def expect(state, action, reason, *args):
        output = step(capsys, tmp_path, state, *args)
        walk.append(output["action"])
        assert (output["action"], output["reasons"]) == (action, [reason]), output
        return output

    gated = dict(mode="approval-gated")
    boot = edit(bootstrap_state(), **gated)
    expect(boot, "state-inconsistency", "bootstrap-automation-paused")

    waiting = samples.recurring_state("approval-gated")
    expect(waiting, "wait", "awaiting-codex-response")

    findings = samples.with_findings(edit(waiting, observed_at="2026-11-29T10:06:00Z"))
    plan_action = expect(findings, "plan-remediation", "codex-findings")
    assert (
        plan_action["next_round"] == 1
        and markers.request_marker(samples.RUN_ID, 1) in plan_action["review_request_body_template"]
    )

    planned = samples.with_plan(findings, samples.remediation_manifest(findings))
    asked = expect(planned, "await-approval", "approval-required")
    plan_hash = asked["plan_hash"]
    claim_action = expect(planned, "claim-plan", "plan-unclaimed", "--approved-hash", plan_hash)

    claimed = copy.deepcopy(planned)
    claimed["claims"] = [samples.claim(planned, "remediation", plan_hash)]
    assert claim_action["claim_comment_body"] == markers.claim_marker(
        samples.RUN_ID, "remediation", plan_hash, planned["request_key"], samples.WAKEUP_ID
    )
    expect(claimed, "execute-remediation", "plan-claimed", "--approved-hash", plan_hash)

    # Pushed, the new request not yet posted: an overlapping wakeup must keep out.
    head2 = samples.sha("head-2")
    pushed = edit(
        claimed,
        current_head_sha=head2,
        remote_head_sha=head2,
        remediation_manifest=None,
        remediation_plan_hash=None,
        execution_boundary=None,
        wakeup_id=samples.OTHER_WAKEUP_ID,
    )
    expect(pushed, "wait", "remediation-in-progress")

    # Round 1 requested: progress rebuilt from the markers on GitHub.
    request2 = samples.REQUEST_ID + 10
    rerequested = edit(
        pushed,
        observed_at="2026-11-29T10:12:00Z",
        request_comment_id=request2,
        request_head_sha=head2,
        request_created_at="2026-11-29T10:11:00Z",
        request_deadline="2026-11-29T10:41:00Z",
        request_key=f"{request2}:{head2}",
        fix_rounds=1,
        completed_request_keys=[planned["request_key"]],
        actionable_codex_threads=[],
        eligible_codex_threads=planned["actionable_codex_threads"],
        wakeup_id=samples.WAKEUP_ID,
    )
    expect(rerequested, "wait", "awaiting-codex-response")

    clean = samples.with_clean(edit(rerequested, observed_at="2026-11-29T10:17:00Z"))
    expect(clean, "plan-finalization", "codex-clean")
    final_plan = samples.with_plan(clean, samples.finalization_manifest(clean))
    assert final_plan["finalization_manifest"]["operations"] == [
        "mark-draft-ready",
        "resolve-codex-threads",
        "delete-owned-automation",
    ]
    first_hash = expect(final_plan, "await-approval", "approval-required")["plan_hash"]
    expect(final_plan, "claim-plan", "plan-unclaimed", "--approved-hash", first_hash)
    final_claimed = copy.deepcopy(final_plan)
    final_claimed["claims"].append(samples.claim(final_plan, "finalization", first_hash, comment_id=2200000009))
    phase_one = expect(final_claimed, "execute-finalization", "plan-claimed", "--approved-hash", first_hash)
    assert "delete-owned-automation" not in phase_one["operations"]

    after = edit(
        final_claimed,
        observed_at="2026-11-29T10:19:00Z",
        pr_is_draft=False,
        eligible_codex_threads=[],
        finalization_manifest=None,
        finalization_plan_hash=None,
    )
    expect(after, "plan-finalization", "finalization-phase-two")
    phase_two = samples.with_plan(after, samples.finalization_manifest(after))
    second_hash = digest(phase_two["finalization_manifest"])
    assert second_hash != first_hash
    expect(phase_two, "await-approval", "approved-hash-mismatch", "--approved-hash", first_hash)
    expect(phase_two, "claim-plan", "plan-unclaimed", "--approved-hash", second_hash)
    phase_two["claims"].append(
        samples.claim(phase_two, "cleanup", second_hash, comment_id=2200000010, created_at="2026-11-29T10:19:30Z")
    )
    phase_two["observed_at"] = "2026-11-29T10:19:40Z"
    finish = expect(phase_two, "finish-finalization", "finalization-settled", "--approved-hash", second_hash)
    assert finish["original_plan_hash"] == first_hash and finish["delete_automation_id"] == samples.AUTOMATION_ID

    deleted = edit(after, automations=[], observed_at="2026-11-29T10:21:00Z")
    expect(deleted, "done", "loop-finished")
    assert walk[0] == "state-inconsistency" and walk[-1] == "done"
