"""The hands' builders against the evaluator: every built document is accepted, and
every single mutation of one is rejected (or, re-hashed, permits no write)."""

from __future__ import annotations

import copy
import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from act.build import initial, recurring
from act.core.errors import ActError
from act.edge import judge
from act.edge.diff import changes
from act.wakeup import checkpoint_from_prompt
from evaluator import markers, policy
from evaluator.actions import WRITE_ACTIONS
from evaluator.canonical import digest
from evaluator.checks import run_initial, run_state
from evaluator.models.recurring import RecurringState
from tests.helpers import FIXTURES, examples, load
from tools import samples, state_scenarios
from tools.mutations import mutation_recipes

RUN_ID = "00ff" * 8
FORMS = [
    dict(zip(("create_branch", "commands", "commit", "push", "reuse_pr"), flags, strict=True))
    for flags in itertools.product((True, False), repeat=5)
]


def build_initial(mode: str, form: dict) -> dict:
    return initial.initial_document(
        samples.initial_snapshot(**form),
        run_id=RUN_ID,
        mode=mode,
        pr_title="Fix greeting",
        pr_body="Fixes the greeting.\n",
        review_template=markers.default_review_template(RUN_ID, 0),
    )


@pytest.mark.parametrize("mode", policy.WRITE_MODES)
@pytest.mark.parametrize("form", FORMS, ids=lambda form: "-".join(k for k, v in form.items() if v) or "minimal")
def test_every_initial_form_is_accepted(mode, form):
    document = build_initial(mode, form)
    result = run_initial(document, approved_hash=document["initial_plan_hash"], risk_record=None)
    assert result["ok"] is True, result
    assert result["operations"] == initial.initial_operations(document["initial_snapshot"])
    assert result["initial_plan_hash"] == digest(document["initial_manifest"])


def test_the_judge_runs_the_evaluator_as_a_process():
    document = build_initial("approval-gated", FORMS[0])
    verdict = judge.evaluate("initial", document, approved_hash=document["initial_plan_hash"])
    assert judge.require_accepted(verdict, "the initial document").initial_plan_hash == document["initial_plan_hash"]
    wrong = judge.evaluate("initial", document, approved_hash="0" * 64)
    assert wrong.status == 1 and wrong.output["errors"][0]["code"] == "plan-hash-mismatch"
    with pytest.raises(ActError) as raised:
        judge.require_accepted(wrong, "the initial document")
    assert raised.value.code == "evaluator-rejected" and "plan-hash-mismatch" in raised.value.message


def test_run_ids_are_fresh_and_well_formed():
    ids = {initial.new_run_id() for _ in range(50)}
    assert len(ids) == 50 and all(len(i) == 32 and int(i, 16) >= 0 and i == i.lower() for i in ids)


@settings(max_examples=examples(4))
@given(data=st.data())
def test_any_single_mutation_of_a_built_initial_document_is_rejected(data):
    document = build_initial(data.draw(st.sampled_from(policy.WRITE_MODES)), data.draw(st.sampled_from(FORMS)))
    description, recipe = data.draw(st.sampled_from(mutation_recipes(document)))
    mutated = recipe()  # only the drawn mutation is built
    assert run_initial(mutated, approved_hash=None, risk_record=None)["ok"] is False, description


# --- recurring plans ------------------------------------------------------------------------

PLANNING = [
    (name, state, options, action)
    for name, state, options, action, _ in state_scenarios.scenarios()
    if action in ("plan-remediation", "plan-finalization")
]


def build_plan(state: dict, action: str) -> dict:
    if action == "plan-remediation":
        return recurring.remediation_manifest(
            RecurringState.model_validate(state),
            path_records=[samples.path_record(p) for p in reversed(samples.DEFAULT_PATHS)],
            commands=samples.DEFAULT_COMMANDS,
            execution=samples.execution_boundary(),
        )
    return recurring.finalization_manifest(RecurringState.model_validate(state))


def test_there_are_planning_scenarios_of_both_kinds():
    assert {action for *_, action in PLANNING} == {"plan-remediation", "plan-finalization"}


@pytest.mark.parametrize("mode", policy.WRITE_MODES)
@pytest.mark.parametrize("name, state, options, action", PLANNING, ids=[row[0] for row in PLANNING])
def test_every_planning_scenario_gives_an_accepted_plan(name, state, options, action, mode):
    state = {**copy.deepcopy(state), "mode": mode}
    assert run_state(state, approved_hash=None, now=options.get("now"))["action"] == action
    manifest = build_plan(state, action)
    planned = recurring.embed(state, manifest, approved_plan_hash=None)
    result = run_state(planned, approved_hash=None, now=options.get("now"))
    assert result["ok"] is True, result
    assert result["action"] == ("claim-plan" if mode == "autonomous" else "await-approval"), result
    approved = recurring.embed(state, manifest, approved_plan_hash=recurring.plan_hash(manifest))
    assert run_state(approved, approved_hash=None, now=options.get("now"))["action"] == "claim-plan"


@settings(max_examples=examples(5))
@given(data=st.data())
def test_any_single_mutation_of_a_built_plan_is_rejected_or_permits_no_write(data):
    name, state, options, action = data.draw(st.sampled_from(PLANNING))
    state = {**copy.deepcopy(state), "mode": "approval-gated"}
    manifest = build_plan(state, action)
    approved = recurring.plan_hash(manifest)
    planned = recurring.embed(state, manifest, approved_plan_hash=approved)
    kind = manifest["kind"]
    description, recipe = data.draw(st.sampled_from(mutation_recipes(manifest)))
    mutated = recipe()
    as_built = {**copy.deepcopy(planned), f"{kind}_manifest": mutated}
    assert run_state(as_built, approved_hash=None, now=options.get("now"))["ok"] is False, (name, description)
    rehashed = {**as_built, f"{kind}_plan_hash": digest(mutated)}  # the approval still names the built plan
    result = run_state(rehashed, approved_hash=None, now=options.get("now"))
    assert result["ok"] is False or result["action"] not in WRITE_ACTIONS, (name, description, result.get("action"))


def test_a_re_embedded_plan_is_stale_when_the_fresh_boundary_differs():
    state = state_scenarios.findings_state()
    manifest = build_plan(state, "plan-remediation")
    fresh = samples.execution_boundary()
    fresh["git"]["config_snapshot_sha256"] = samples.hexdigest("config-changed")
    result = run_state(
        recurring.embed(state, manifest, approved_plan_hash=None, execution_boundary=fresh),
        approved_hash=None,
        now=None,
    )
    assert result["action"] == "state-inconsistency" and result["reasons"] == ["remediation-plan-stale"]


# --- what changed, and the prompt ---------------------------------------------------------------


def test_changes_name_every_difference_by_pointer():
    old = {"a": {"b": [1, 2], "c/d": "x"}, "gone": True}
    new = {"a": {"b": [1, 3, 4], "c/d": "y"}, "added": None}
    assert changes(old, new) == [
        {"path": "/a/b/1", "old": 2, "new": 3},
        {"path": "/a/b/2", "new": 4},
        {"path": "/a/c~1d", "old": "x", "new": "y"},
        {"path": "/added", "new": None},
        {"path": "/gone", "old": True},
    ]
    assert changes({"n": 1}, {"n": True}) == [{"path": "/n", "old": 1, "new": True}]
    assert changes(old, copy.deepcopy(old)) == []


def test_the_checkpoint_comes_from_the_prompt_exactly():
    prompt = samples.prompt_document()
    key, boot = checkpoint_from_prompt(prompt["rendered_prompt"])
    assert boot == prompt["bootstrap_snapshot"] and key.endswith(samples.RUN_ID)
    for broken in (
        prompt["rendered_prompt"] + "\n",
        prompt["rendered_prompt"].replace("\n", "\r\n"),
        prompt["rendered_prompt"].replace(" ", "  ", 1),
        prompt["rendered_prompt"].replace('":', '": ', 1),
        prompt["rendered_prompt"].replace(
            "Loop key: github-codex-pr-loop:github.com/octo-org", "Loop key: github-codex-pr-loop:github.com/octo-other"
        ),
    ):
        with pytest.raises(ActError) as raised:
            checkpoint_from_prompt(broken)
        assert raised.value.code == "prompt-not-rendered"


def pending_remediation(plan_hash: str, request_key: str) -> dict:
    """pending.json for a remediation plan, shaped as plan-remediation writes it (act/core/state_models.py)."""
    from tools.samples import WAKEUP_ID, remediation_manifest
    from tools.state_scenarios import findings_state

    manifest = remediation_manifest(findings_state())
    return {
        "kind": "remediation",
        "plan_hash": plan_hash,
        "mode": "approval-gated",
        "built_at": "2026-11-30T09:59:00Z",
        "request_key": request_key,
        "wakeup_id": WAKEUP_ID,
        "choices": {
            "paths": manifest["paths"],
            "commands": [],
            "review_request_body_template": manifest["review_request_body_template"],
        },
        "manifest": manifest,
        "executed_at": None,
    }


def test_the_wakeup_ledger_keeps_one_id_per_wakeup(tmp_path):
    from act.core import ledger, statedir
    from act.wakeup import claimed_pending_plan

    directory = statedir.StateDir.create(tmp_path / "loop")
    first = ledger.start_wakeup(directory)
    assert ledger.current_wakeup(directory).wakeup_id == first.wakeup_id
    second = ledger.start_wakeup(directory)  # no claim yet: a new wakeup simply supersedes it
    assert second.wakeup_id != first.wakeup_id
    with pytest.raises(ActError) as raised:
        ledger.record_claim(directory, first.wakeup_id, "a" * 64, "remediation")
    assert raised.value.code == "wakeup-id-mismatch"
    ledger.record_claim(directory, second.wakeup_id, "a" * 64, "remediation", comment_id=17)
    with pytest.raises(ActError) as raised:
        ledger.start_wakeup(directory)
    assert raised.value.code == "wakeup-claim-open"
    assert ledger.current_wakeup(directory).wakeup_id == second.wakeup_id  # --continue keeps it
    directory.write(statedir.PENDING, pending_remediation("a" * 64, "5:" + "b" * 40))
    assert claimed_pending_plan(directory, ledger.current_wakeup(directory)).plan_hash == "a" * 64
    ledger.record_executed(directory, "a" * 64)
    assert claimed_pending_plan(directory, ledger.current_wakeup(directory)) is None
    ended = ledger.end_wakeup(directory, "done")
    assert ended is not None and ended.end_reason == "done" and ended.ended_at
    with pytest.raises(ActError) as raised:
        ledger.current_wakeup(directory)
    assert raised.value.code == "wakeup-not-open"
    assert ledger.start_wakeup(directory).wakeup_id not in (first.wakeup_id, second.wakeup_id)


def test_a_claim_plan_is_posted_by_loop_claim_then_the_same_wakeup_continues(tmp_path):
    from act import plans
    from act import wakeup as waking
    from act.core import statedir, steps, verdicts

    directory = statedir.StateDir.create(tmp_path / "loop")
    scenario = FIXTURES / "state" / "scenarios" / "claim-plan--remediation-approved-in-state.json"
    claim_plan = verdicts.parse("state", 0, run_state(load(scenario), approved_hash=None, now=None))
    assert isinstance(claim_plan, verdicts.ClaimPlan)
    here = plans.where(directory, key="KEY-1")
    for told in (steps.row("claim-plan", here), waking._next(claim_plan, directory, "KEY-1")):
        assert f"`loop.py claim --state-dir {directory.path}`" in told
        continued = f"`loop.py wakeup --state-dir {directory.path} --automation-key KEY-1 --continue`"
        assert told.index("loop.py claim") < told.index(continued)
    assert steps.after("claim-plan", "claim", here).startswith(continued)


def test_the_state_directory_is_private_and_refuses_to_be_shared(tmp_path):
    import os
    import stat as stat_module

    from act.core import statedir

    directory = statedir.StateDir.create(tmp_path / "loop")
    path = directory.write("x.json", {"a": 1})
    assert (
        stat_module.S_IMODE(os.stat(directory.path).st_mode) == 0o700
        and stat_module.S_IMODE(os.stat(path).st_mode) == 0o600
    )
    assert directory.read("x.json") == {"a": 1}
    with pytest.raises(ActError) as raised:
        statedir.StateDir.create(tmp_path / "loop")
    assert raised.value.code == "state-dir-exists"
    os.chmod(path, 0o644)
    with pytest.raises(ActError) as raised:
        directory.read("x.json")
    assert raised.value.code == "state-file-unsafe"
    os.chmod(path, 0o600)
    path.write_text('{"a": 1, "a": 2}')
    with pytest.raises(ActError) as raised:
        directory.read("x.json")
    assert raised.value.code == "state-file-invalid"
    os.chmod(directory.path, 0o755)
    with pytest.raises(ActError) as raised:
        directory.read("x.json")
    assert raised.value.code == "state-dir-unsafe"


def test_an_approval_is_carried_only_for_the_pending_unexecuted_plan_of_this_request(tmp_path):
    from act.core import statedir
    from act.plans import carried_approval

    directory = statedir.StateDir.create(tmp_path / "loop")
    pending = pending_remediation("a" * 64, "5:" + "b" * 40)
    directory.write(statedir.PENDING, pending)
    assert carried_approval(directory, pending["request_key"]) is None  # nobody approved yet
    directory.write(
        statedir.APPROVAL, {"plan_hash": "a" * 64, "kind": "remediation", "approved_at": "2026-11-30T10:00:00Z"}
    )
    assert carried_approval(directory, pending["request_key"]) == "a" * 64
    assert carried_approval(directory, "6:" + "c" * 40) is None  # a new round: the approval is spent
    directory.write(statedir.PENDING, {**pending, "executed_at": "2026-11-30T10:05:00Z"})
    assert carried_approval(directory, pending["request_key"]) is None
    directory.write(statedir.PENDING, {**pending, "plan_hash": "d" * 64})
    assert carried_approval(directory, pending["request_key"]) is None  # it names another plan
