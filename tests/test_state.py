"""The recurring evaluator: one fixture per action and reason, malformed states, stale plans."""

from __future__ import annotations

import json

import pytest

from evaluator.actions import WRITE_ACTIONS
from evaluator.checks import run_state
from evaluator.cli import main
from evaluator.machine import REPORT_ROWS, ROWS
from tests.helpers import FIXTURES, invalid_fixtures, load, run_cli

SCENARIOS = FIXTURES / "state" / "scenarios"
EXPECTED = load(SCENARIOS / "expected.json")


def cli(capsys, *args: str) -> tuple[int, dict]:
    status = main(list(args))
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 1
    return status, json.loads(lines[0])


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_scenario_yields_its_action(name, capsys):
    expected = EXPECTED[name]
    status, output = cli(capsys, "--state", str(SCENARIOS / f"{name}.json"), *expected["args"])
    assert status == 0
    assert output["ok"] is True and output["check"] == "state"
    assert (output["action"], output["reasons"]) == (expected["action"], expected["reasons"])
    assert name.split("--")[0] == expected["action"]


def test_every_action_and_reason_has_a_scenario():
    reasons = {row.reason for row in ROWS + REPORT_ROWS if row.reasons_from != "inconsistencies"}
    actions = {row.action for row in ROWS + REPORT_ROWS}
    covered_reasons = {reason for case in EXPECTED.values() for reason in case["reasons"]}
    assert reasons <= covered_reasons, reasons - covered_reasons
    assert actions <= {case["action"] for case in EXPECTED.values()}
    inconsistency_reasons = {
        "user-drift",
        "evaluator-digest-changed",
        "remote-drift",
        "repository-drift",
        "pr-cross-repository",
        "base-branch-drift",
        "head-branch-drift",
        "base-tip-drift",
        "remote-head-drift",
        "marker-anomaly",
        "approval-conflict",
        "head-drift",
        "claim-abandoned",
        "automation-missing",
        "automation-duplicate",
        "automation-id-mismatch",
        "automation-unreadable",
        "automation-name-mismatch",
        "automation-schedule-mismatch",
        "bootstrap-automation-paused",
        "automation-active-before-prompt",
        "automation-not-active",
        "automation-prompt-mismatch",
        "remediation-plan-stale",
        "finalization-plan-stale",
        "plan-kind-mismatch",
        "plan-without-signal",
        "response-edited-before-created",
        "response-trigger-mismatch",
    }
    assert inconsistency_reasons <= covered_reasons


def test_actions_carry_what_the_agent_needs(capsys):
    _, claim = cli(capsys, "--state", str(SCENARIOS / "claim-plan--remediation-autonomous.json"))
    assert claim["claim_comment_body"].startswith("<!-- github-codex-pr-loop-claim run=")
    assert claim["plan_hash"] in claim["claim_comment_body"]
    _, execute = cli(capsys, "--state", str(SCENARIOS / "execute-remediation--plan-claimed.json"))
    assert execute["operations"][0] == "edit-files" and "{{FINAL_HEAD_SHA}}" in execute["review_request_body_template"]
    _, phase_one = cli(capsys, "--state", str(SCENARIOS / "execute-finalization--plan-claimed.json"))
    assert phase_one["operations"] == ["mark-draft-ready", "resolve-codex-threads"]
    _, finish = cli(capsys, "--state", str(SCENARIOS / "finish-finalization--finalization-settled.json"))
    assert finish["operations"] == ["delete-owned-automation"] and finish["delete_automation_id"]
    assert (
        finish["original_plan_hash"] != finish["plan_hash"] and finish["original_request_key"] == finish["request_key"]
    )
    _, drift = cli(capsys, "--state", str(SCENARIOS / "state-inconsistency--user-drift.json"))
    assert drift["write_permitted"] is False and drift["user_must_delete_automation"].startswith(
        "github-codex-pr-loop:github.com/"
    )
    _, timeout = cli(
        capsys,
        "--state",
        str(SCENARIOS / "request-timeout--request-deadline-passed.json"),
        "--now",
        "2026-11-29T10:30:01Z",
    )
    assert timeout["delete_automation_id"] == "github-codex-pr-loop-42"


def test_no_scenario_inconsistency_permits_a_write():
    for expected in EXPECTED.values():
        if expected["action"] == "state-inconsistency":
            assert expected["action"] not in WRITE_ACTIONS


# Remote, base and PR branch drift, one field at a time: (field, value, the reason it gives).
BRANCH_DRIFT = [
    ("current_remote_name", "upstream", ["remote-drift"]),
    ("current_base_branch", "develop", ["base-branch-drift"]),
    ("current_base_sha", "b" * 40, ["base-tip-drift"]),
    ("current_head_branch", "codex/other", ["head-branch-drift"]),
    ("remote_head_sha", None, ["remote-head-drift"]),  # the branch was deleted
    ("current_head_sha", "c" * 40, ["head-drift", "remote-head-drift"]),
]


@pytest.mark.parametrize("pr_state", ["closed", "merged"])
@pytest.mark.parametrize("field, value, drift", BRANCH_DRIFT)
def test_a_closed_pr_whose_finalization_plan_drifted_permits_no_cleanup(pr_state, field, value, drift):
    from tools import state_scenarios

    planned = state_scenarios.finalization_claimed()
    unplanned = state_scenarios.clean_state(eligible_codex_threads=planned["eligible_codex_threads"])
    for state in (planned, unplanned):
        state.update({"pr_state": pr_state, field: value})
    stopped = run_state(planned, approved_hash=None, now=None)
    expected = sorted([*drift, "finalization-plan-stale"])
    assert (stopped["action"], stopped["reasons"]) == ("state-inconsistency", expected)
    assert stopped["write_permitted"] is False and "delete_automation_id" not in stopped
    assert {violation["code"] for violation in stopped["plan_violations"]} == {"plan-snapshot-mismatch"}
    # Without a plan the same drift still lets the closed PR's loop delete its own automation.
    cleaned = run_state(unplanned, approved_hash=None, now=None)
    assert (cleaned["action"], cleaned["reasons"]) == ("stop-pr-closed", [f"pr-{pr_state}", *drift])
    assert cleaned["delete_automation_id"] == planned["owned_automation_id"]


@pytest.mark.parametrize("suite", ["state", "remediation", "finalization"])
def test_malformed_documents_are_rejected_with_their_codes(suite):
    cases = invalid_fixtures(suite)
    assert cases
    for path, codes in cases:
        result = run_state(load(path), approved_hash=None, now=None)
        assert result["ok"] is False, path.stem
        assert sorted({e["code"] for e in result["errors"]}) == codes, path.stem
        assert path.stem.split("--")[0] in codes


def test_manifest_negative_fixture_count():
    stale = sum(len(load(FIXTURES / kind / "stale" / "expected.json")) for kind in ("remediation", "finalization"))
    invalid = len(invalid_fixtures("remediation")) + len(invalid_fixtures("finalization"))
    assert stale + invalid >= 40


@pytest.mark.parametrize("kind", ["remediation", "finalization"])
def test_stale_plans_are_an_accepted_inconsistency(kind):
    folder = FIXTURES / kind / "stale"
    for name, expected in load(folder / "expected.json").items():
        result = run_state(load(folder / f"{name}.json"), approved_hash=None, now=None)
        assert result["ok"] is True and result["action"] == "state-inconsistency", name
        assert result["reasons"] == expected["reasons"] == [f"{kind}-plan-stale"]
        assert sorted({v["path"] for v in result["plan_violations"]}) == expected["paths"]


def test_cli_state_subprocess_contract():
    status, output, _ = run_cli("--state", str(SCENARIOS / "wait--awaiting-codex-response.json"))
    assert status == 0 and output["action"] == "wait" and output["request_deadline"] == "2026-11-29T10:30:00Z"
    status, output, _ = run_cli("--state", str(FIXTURES / "state" / "invalid" / "missing-key--observed-at.json"))
    assert status == 1 and output["errors"][0] == {
        "code": "missing-key",
        "path": "/observed_at",
        "message": "required key 'observed_at' is missing",
    }
    assert run_cli("--state", str(SCENARIOS / "wait--awaiting-codex-response.json"), "--now", "yesterday")[0] == 2
    assert (
        run_cli("--state", str(SCENARIOS / "wait--awaiting-codex-response.json"), "--now", "2026-02-30T10:00:00Z")[0]
        == 2
    )


def test_now_defaults_to_observed_at_and_flag_overrides():
    state = load(SCENARIOS / "wait--awaiting-codex-response.json")
    assert run_state(state, approved_hash=None, now=None)["action"] == "wait"
    assert (
        run_state(state, approved_hash=None, now="2026-11-29T11:30:00+01:00")["action"] == "wait"
    )  # same instant as 10:30Z
    assert run_state(state, approved_hash=None, now="2026-11-29T11:30:01+01:00")["action"] == "request-timeout"


def test_risk_acceptance_record_is_verified_against_the_remediation_plan():
    import copy

    from evaluator import policy
    from evaluator.canonical import digest
    from tools import samples, state_scenarios

    state = state_scenarios.remediation_planned()
    manifest = state["remediation_manifest"]
    manifest["execution"]["isolation"] = policy.EXPLICIT_RISK
    manifest["execution"]["git"].update(
        profile=policy.EXPLICIT_RISK_PROFILE, hooks_disabled=False, active_clean_filters=["lfs"]
    )
    record = samples.risk_acceptance_record(
        {
            "authenticated_user_id": state["authenticated_user_id"],
            "commands": manifest["commands"],
            "execution_boundary": manifest["execution"],
        }
    )
    manifest["execution"]["risk_acceptance_sha256"] = digest(record)
    state["execution_boundary"] = copy.deepcopy(manifest["execution"])
    state["remediation_plan_hash"] = digest(manifest)
    assert run_state(state, approved_hash=None, now=None, risk_record=record)["action"] == "claim-plan"
    record["unavailable_guarantees"] = ["network-isolation"]
    codes = {e["code"] for e in run_state(state, approved_hash=None, now=None, risk_record=record)["errors"]}
    assert codes == {"risk-acceptance-digest-mismatch", "risk-guarantees-incomplete"}
    unplanned = run_state(state_scenarios.findings_state(), approved_hash=None, now=None, risk_record=record)
    assert [e["code"] for e in unplanned["errors"]] == ["risk-acceptance-unexpected"]


def test_autonomous_remediation_in_explicit_form_needs_the_record():
    from evaluator import policy
    from evaluator.canonical import digest
    from tools import state_scenarios

    state = state_scenarios.remediation_planned()
    execution = state["remediation_manifest"]["execution"]
    execution.update(isolation=policy.EXPLICIT_RISK, risk_acceptance_sha256="ab" * 32)
    execution["git"]["profile"] = policy.EXPLICIT_RISK_PROFILE
    state["execution_boundary"] = execution
    state["remediation_plan_hash"] = digest(state["remediation_manifest"])
    result = run_state(state, approved_hash=None, now=None)
    assert [e["code"] for e in result["errors"]] == ["risk-acceptance-record-missing"]
    state["mode"] = "approval-gated"
    assert run_state(state, approved_hash=None, now=None)["action"] == "await-approval"


def test_findings_after_phase_one_still_lock_and_time_out():
    from tools import samples, state_scenarios

    state = samples.with_findings(state_scenarios.phase_one_done())
    state = samples.with_plan(state, samples.remediation_manifest(state))
    assert run_state(state, approved_hash=None, now=None)["action"] == "claim-plan"
    state["claims"].append(samples.claim(state, "remediation", state["remediation_plan_hash"], comment_id=2200000005))
    assert run_state(state, approved_hash=None, now=None)["action"] == "execute-remediation"
    other = {**state, "wakeup_id": samples.OTHER_WAKEUP_ID}
    assert run_state(other, approved_hash=None, now=None)["action"] == "wait"
    late = run_state(other, approved_hash=None, now="2026-11-29T11:00:00Z")
    assert (late["action"], late["reasons"]) == ("state-inconsistency", ["claim-abandoned"])


def test_an_approved_hash_outside_approval_gated_mode_must_name_the_plan(capsys):
    planned = SCENARIOS / "claim-plan--remediation-autonomous.json"
    plan_hash = load(planned)["remediation_plan_hash"]
    assert cli(capsys, "--state", str(planned), "--approved-hash", plan_hash) == (
        0,
        cli(capsys, "--state", str(planned))[1],
    )
    status, output, _ = run_cli("--state", str(planned), "--approved-hash", "0" * 64)
    assert status == 1 and [(e["code"], e["path"]) for e in output["errors"]] == [
        ("plan-hash-mismatch", "/remediation_plan_hash")
    ]
    for unplanned in ("wait--awaiting-codex-response", "plan-remediation--codex-findings", "report--clean"):
        status, output = cli(capsys, "--state", str(SCENARIOS / f"{unplanned}.json"), "--approved-hash", plan_hash)
        assert status == 1 and [(e["code"], e["path"]) for e in output["errors"]] == [
            ("approved-hash-without-plan", "")
        ], unplanned


def test_an_approval_gated_state_without_a_plan_carries_the_approval_without_effect():
    from tools.state_scenarios import findings_state

    state = findings_state("approval-gated")
    result = run_state(state, approved_hash="0" * 64, now=None)
    assert (result["action"], result["reasons"]) == ("plan-remediation", ["codex-findings"])


def test_an_unshown_risk_record_is_a_field_of_the_decision():
    from evaluator import policy
    from evaluator.canonical import digest
    from evaluator.checks import state_check
    from evaluator.decision import evaluate_state
    from tools import state_scenarios

    state = state_scenarios.remediation_planned()
    state["mode"] = "approval-gated"
    execution = state["remediation_manifest"]["execution"]
    execution.update(isolation=policy.EXPLICIT_RISK, risk_acceptance_sha256="ab" * 32)
    execution["git"]["profile"] = policy.EXPLICIT_RISK_PROFILE
    state["execution_boundary"] = execution
    state["remediation_plan_hash"] = digest(state["remediation_manifest"])
    decision, found = evaluate_state(state, None, None)
    assert found == [] and decision is not None and decision.risk_unverified
    assert state_check(state, None, None, None).risk_unverified
    isolated, _ = evaluate_state(state_scenarios.remediation_planned(), None, None)
    assert isolated is not None and not isolated.risk_unverified


@pytest.mark.parametrize(
    "impossible",
    [
        {"trigger_request_comment_id": None},
        {"created_at": "2026-11-29T10:05:00Z", "content_version_at": "2026-11-29T10:04:00Z"},
    ],
)
def test_an_answer_with_an_impossible_timeline_never_makes_clean(impossible):
    from tools.samples import with_clean
    from tools.state_scenarios import report_state

    for state in (
        with_clean(report_state()),
        with_clean(report_state(plus_one_reactions=[{"created_at": "2026-11-29T10:03:00Z", "id": "3000000001"}])),
    ):
        assert run_state(state, approved_hash=None, now=None)["reasons"] == ["clean"]
        state["responses"][0].update(impossible)
        assert run_state(state, approved_hash=None, now=None)["reasons"] == ["awaiting-response"]
