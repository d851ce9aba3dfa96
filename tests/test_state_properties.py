"""Properties of the recurring evaluator (hypothesis and exhaustive mutation)."""

from __future__ import annotations

import copy
import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.actions import WRITE_ACTIONS
from evaluator.canonical import digest
from evaluator.checks import run_state
from tests.helpers import FIXTURES, examples, load
from tools import samples, state_scenarios
from tools.mutations import mutation_recipes, mutations

SCENARIOS = FIXTURES / "state" / "scenarios"
EXPECTED = load(SCENARIOS / "expected.json")


def evaluate(state, approved=None, now=None):
    return run_state(state, approved_hash=approved, now=now)


# --- report-only never writes ---------------------------------------------

_signal = st.sampled_from(["none", "findings", "clean", "plus-one", "running", "failed", "completed", "unavailable"])


@settings(max_examples=examples(2))
@given(
    signal=_signal,
    pr_state=st.sampled_from(["open", "closed", "merged"]),
    draft=st.booleans(),
    minutes=st.integers(0, 120),
    user=st.sampled_from([samples.USER_ID, 7]),
)
def test_report_only_never_yields_a_write_action(signal, pr_state, draft, minutes, user):
    state = state_scenarios.report_state(pr_state=pr_state, pr_is_draft=draft, current_authenticated_user_id=user)
    state = _with_signal(state, signal)
    now = f"2026-11-29T{10 + minutes // 60:02d}:{minutes % 60:02d}:30Z"
    result = evaluate(state, now=now)
    assert result["ok"] is True and result["action"] == "report"


def _with_signal(state, signal):
    head = state["request_head_sha"]

    def row(status):
        summary = {"comment_id": "2000000002", "content_version_at": "2026-11-29T10:01:00Z", "head_sha": head}
        return [{**summary, "status": status}]

    if signal == "findings":
        return samples.with_findings(state)
    if signal == "clean":
        return samples.with_clean(state)
    if signal == "plus-one":
        return {**state, "plus_one_reactions": [{"created_at": "2026-11-29T10:03:00Z", "id": "1"}]}
    if signal in ("running", "failed", "completed"):
        return {**state, "summary_rows": row(signal)}
    if signal == "unavailable":
        return {
            **state,
            "unavailable_replies": [{"created_at": "2026-11-29T10:03:00Z", "id": "5", "kind": "usage-limit"}],
        }
    return state


# --- drift between a plan's snapshot and the state invalidates the plan -------

DRIFT = {
    "current_authenticated_user_id": 7,
    "current_evaluator_sha256": samples.hexdigest("edited"),
    "current_remote_name": "upstream",
    "pr_repository": "octo-org/fork",
    "pr_same_repository": False,
    "current_base_branch": "develop",
    "current_head_branch": "codex/other",
    "current_base_sha": samples.sha("moved-base"),
    "current_head_sha": samples.sha("moved-head"),
    "remote_head_sha": samples.sha("moved-remote"),
    "marker_anomalies": ["77"],
    "automations": [],
    "gates": samples.gates(checks="fail"),
    "pr_is_draft": False,
    "non_codex_rooted_threads": 3,
    "responses": [],
    "actionable_codex_threads": [samples.thread("zz9")],
    "eligible_codex_threads": [samples.thread("yy8")],
}

BRANCH_DRIFT_REASONS = {
    "remote-drift",
    "base-branch-drift",
    "base-tip-drift",
    "head-branch-drift",
    "remote-head-drift",
    "head-drift",
}

# Content each kind of plan binds (identity drift applies to both).
BOUND_CONTENT = {
    "remediation": {"responses", "actionable_codex_threads"},
    "finalization": {
        "gates",
        "pr_is_draft",
        "non_codex_rooted_threads",
        "responses",
        "eligible_codex_threads",
        "actionable_codex_threads",
    },
}
CONTENT = {
    "gates",
    "pr_is_draft",
    "non_codex_rooted_threads",
    "responses",
    "actionable_codex_threads",
    "eligible_codex_threads",
}

PLANNED = {
    "remediation": lambda: state_scenarios.remediation_claimed(),
    "finalization": lambda: state_scenarios.finalization_claimed(),
}


DRIFT_CASES = [
    (kind, field) for kind in sorted(PLANNED) for field in sorted(DRIFT) if field not in CONTENT - BOUND_CONTENT[kind]
]


@pytest.mark.parametrize("kind, field", DRIFT_CASES)
def test_single_drift_field_invalidates_a_claimed_plan(kind, field):
    state = PLANNED[kind]()
    assert evaluate(state)["action"] == f"execute-{kind}"
    drifted = copy.deepcopy(state)
    drifted[field] = copy.deepcopy(DRIFT[field])
    result = evaluate(drifted)
    assert result["ok"] is False or result["action"] not in WRITE_ACTIONS, (field, result)


# --- every single mutation of a valid manifest is rejected ----------------------


@pytest.mark.parametrize("kind", sorted(PLANNED))
def test_every_mutation_of_an_approved_claimed_manifest_permits_no_write(kind):
    state = PLANNED[kind]()
    state["mode"] = "approval-gated"
    approved = state[f"{kind}_plan_hash"]
    assert evaluate(state, approved)["action"] == f"execute-{kind}"
    count = 0
    for description, mutated in mutations(state[f"{kind}_manifest"]):
        candidate = copy.deepcopy(state)
        candidate[f"{kind}_manifest"] = mutated
        candidate[f"{kind}_plan_hash"] = digest(
            mutated
        )  # re-hashed: the approval and the claim still name the original
        result = evaluate(candidate, approved)
        assert result["ok"] is False or result["action"] not in WRITE_ACTIONS, (description, result.get("action"))
        count += 1
    assert count > 150


# --- no inconsistent state yields a write action ---------------------------------

_scenario_names = sorted(EXPECTED)


@settings(max_examples=examples(3))
@given(name=st.sampled_from(_scenario_names), field=st.sampled_from(sorted(DRIFT)))
def test_no_state_with_an_inconsistency_yields_a_write(name, field):
    state = load(SCENARIOS / f"{name}.json")
    if state["mode"] == "report-only":
        return
    drifted = copy.deepcopy(state)
    drifted[field] = copy.deepcopy(DRIFT[field])
    args = EXPECTED[name]["args"]
    approved = args[args.index("--approved-hash") + 1] if "--approved-hash" in args else None
    now = args[args.index("--now") + 1] if "--now" in args else None
    result = evaluate(drifted, approved, now)
    if result["ok"] and result["action"] == "state-inconsistency":
        assert result["write_permitted"] is False
    reasons = result.get("reasons", []) if result["ok"] else []
    if any(r in ("evaluator-digest-changed", "user-drift") or r.startswith("automation-") for r in reasons):
        assert result["action"] not in WRITE_ACTIONS  # trust first: not even cleanup
    elif any(r.endswith("drift") for r in reasons):
        # Only a closed or merged PR's own automation may still be deleted, and
        # not when remote, base or PR branch drift invalidates a finalization plan.
        assert result["action"] not in WRITE_ACTIONS or result["action"] == "stop-pr-closed"
        if drifted["finalization_manifest"] is not None and BRANCH_DRIFT_REASONS & set(reasons):
            assert result["action"] not in WRITE_ACTIONS


def test_approval_gated_plans_need_the_exact_hash():
    state = state_scenarios.remediation_planned("approval-gated")
    plan_hash = state["remediation_plan_hash"]
    assert evaluate(state)["action"] == "await-approval"
    assert (
        evaluate(state, approved=plan_hash[:-1] + ("0" if plan_hash[-1] != "0" else "1"))["action"] == "await-approval"
    )
    assert evaluate(state, approved=plan_hash)["action"] == "claim-plan"


@functools.cache
def _scenario_recipes(name):
    return mutation_recipes(load(SCENARIOS / f"{name}.json"))


@settings(max_examples=examples(4))
@given(data=st.data())
def test_any_single_mutation_of_any_scenario_is_evaluated_without_an_exception(data):
    name = data.draw(st.sampled_from(_scenario_names))
    description, recipe = data.draw(st.sampled_from(_scenario_recipes(name)))
    result = evaluate(recipe())
    assert result["ok"] in (True, False) and result["check"] == "state"
    if not result["ok"]:
        assert result["errors"] and all(
            error["path"] == "" or error["path"].startswith("/") for error in result["errors"]
        )
