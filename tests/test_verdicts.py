"""The evaluator's output, parsed once into a typed verdict (act/core/verdicts.py, act/edge/judge.py).

Positive cases run the real evaluator (as a process through ``act.edge.judge``, or
its own check functions in-process for the whole fixture corpus) and parse
what it printed; negative cases feed a crafted output object to the parser,
the unit under test. The vocabularies are held equal to the evaluator's
registry and plan rules.
"""

from __future__ import annotations

import copy
import itertools
import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any, get_args

import pytest

from act import aftermath, execute, execute_cli, plans
from act.core import statedir, steps, verdicts
from act.core.errors import ActError
from act.core.state_models import NextAgenda
from act.edge import judge
from evaluator.actions import ACTIONS, CLEANUP_STOPS, WRITE_ACTIONS
from evaluator.canonical import parse_document
from evaluator.checks import run_initial, run_prompt, run_state
from evaluator.rules.initial import expected_operations
from evaluator.rules.manifests import expected_finalization_operations, expected_remediation_operations
from evaluator.vocabulary import ActionName, CleanupStopName, OperationName
from tests.helpers import ROOT

FIXTURES = ROOT / "fixtures"
SCENARIOS = FIXTURES / "state" / "scenarios"
EXPECTED = json.loads((SCENARIOS / "expected.json").read_text(encoding="utf-8"))
# One scenario per action the registry has (the first, by name).
ONE_PER_ACTION = {case["action"]: name for name, case in sorted(EXPECTED.items(), reverse=True)}


def _load(path: Path) -> Any:
    return parse_document(path.read_bytes())


def _flags(name: str) -> dict[str, str | None]:
    args = EXPECTED[name]["args"]
    given = {flag[2:].replace("-", "_"): value for flag, value in zip(args[::2], args[1::2], strict=True)}
    return {"approved_hash": given.get("approved_hash"), "now": given.get("now")}


def _state_output(name: str = "claim-plan--remediation-approved-in-state") -> dict[str, Any]:
    return run_state(_load(SCENARIOS / f"{name}.json"), **_flags(name))


def _failed(check: str, status: int, output: dict[str, Any]) -> ActError:
    with pytest.raises(ActError) as raised:
        verdicts.parse(check, status, output)
    assert raised.value.code == "evaluator-failed"
    assert "; no write is permitted" in raised.value.message
    return raised.value


# --- the vocabularies are the evaluator's -------------------------------------------------


def test_the_action_type_is_the_registry_exactly():
    names = get_args(ActionName)
    assert len(names) == len(set(names)) and set(names) == set(ACTIONS)


def test_the_cleanup_stop_type_is_the_registry_s_payloadless_cleanup_stops():
    assert set(get_args(CleanupStopName)) | {"stop-reviewer-unavailable"} == CLEANUP_STOPS
    assert {a for a, action in ACTIONS.items() if action.payload is ACTIONS["stop-pr-closed"].payload} == set(
        get_args(CleanupStopName)
    )


def test_every_registry_action_has_the_model_of_its_output():
    assert set(verdicts.STATE_VERDICTS) == set(ACTIONS)
    for action, model in verdicts.STATE_VERDICTS.items():
        assert action in get_args(model.__annotations__["action"]), action


def test_the_operation_type_is_every_operation_the_plan_rules_can_require():
    required: set[str] = set()
    for branch, validate_, commit, push, reuse in itertools.product((False, True), repeat=5):
        snapshot = SimpleNamespace(
            create_branch_required=branch,
            commands=[["/bin/true"]] if validate_ else [],
            commit_required=commit,
            push_required=push,
            existing_pr_number=7 if reuse else None,
        )
        required.update(expected_operations(snapshot))
    for commands in ([], [["/bin/true"]]):
        required.update(expected_remediation_operations(SimpleNamespace(commands=commands)))
    for draft, threads in itertools.product((False, True), repeat=2):
        manifest = SimpleNamespace(pr_is_draft=draft, eligible_threads=["PRRT_x"] if threads else [])
        required.update(expected_finalization_operations(manifest))
    names = get_args(OperationName)
    assert len(names) == len(set(names)) and set(names) == required


def test_the_hands_sets_of_actions_name_registry_actions():
    assert set(steps.WAKEUP) == set(ACTIONS)
    assert set(steps.CLEANUP_STOPS) == CLEANUP_STOPS
    # An action that ends the wakeup permits no write; finishing means finish-finalization or done.
    assert steps.ENDS_THE_WAKEUP <= set(ACTIONS) - WRITE_ACTIONS
    assert set(aftermath.FINISHING_ACTIONS) == {"finish-finalization", "done"}
    for kind, accepted in plans.PLAN_ACTIONS.items():
        assert accepted <= set(ACTIONS) and execute_cli.EXECUTING[kind] in accepted, kind
    assert set(execute_cli.EXECUTING.values()) <= WRITE_ACTIONS
    assert set(get_args(NextAgenda.__annotations__["row"])) == set(ACTIONS)


def test_the_executor_knows_every_operation_once():
    performed, handed = set(execute.OPERATIONS), set(execute.AGENT_OPERATIONS) | set(execute.HANDOFFS)
    assert not performed & handed and performed | handed == set(get_args(OperationName))


def test_the_typed_groups_of_verdicts_are_the_registry_s():
    def actions(models: tuple[type, ...]) -> set[str]:
        return {name for model in models for name in get_args(model.__annotations__["action"])}

    assert actions(verdicts.DELETES_AUTOMATION) == CLEANUP_STOPS | {"finish-finalization"}
    assert actions(verdicts.EXECUTES_PLAN) == {"execute-remediation", "execute-finalization", "finish-finalization"}


# --- real outputs parse ------------------------------------------------------------------


@pytest.mark.parametrize("action", sorted(ONE_PER_ACTION))
def test_the_real_evaluator_s_state_verdict_parses_into_its_action_s_model(action):
    name = ONE_PER_ACTION[action]
    verdict = judge.evaluate("state", _load(SCENARIOS / f"{name}.json"), **_flags(name))
    accepted = judge.require_accepted(verdict, "the state")
    stale = {verdicts.StalePlanInconsistency} if action == "state-inconsistency" else set()
    assert type(accepted) in {verdicts.STATE_VERDICTS[action], *stale}
    assert (accepted.action, accepted.reasons) == (action, EXPECTED[name]["reasons"])
    assert accepted.as_dict() == verdict.output  # the model holds the whole output, nothing more or less


def test_every_state_scenario_and_stale_plan_parses_exactly():
    seen = set()
    for name in EXPECTED:
        output = _state_output(name)
        parsed = verdicts.parse("state", 0, output)
        assert parsed.as_dict() == output and parsed.action == EXPECTED[name]["action"], name
        seen.add(type(parsed))
    stale = sorted((FIXTURES / "remediation" / "stale").glob("*.json"))
    assert stale
    for path in stale:
        output = run_state(_load(path), approved_hash=None, now=None)
        parsed = verdicts.parse("state", 0 if output["ok"] else 1, output)
        assert parsed.as_dict() == output, path.name
        seen.add(type(parsed))
    assert verdicts.StalePlanInconsistency in seen and verdicts.StateInconsistency in seen


def test_the_real_evaluator_s_initial_and_prompt_verdicts_parse():
    document = _load(FIXTURES / "initial" / "valid" / "new-pr-branch-validate-commit-push.json")
    initial = judge.require_accepted(judge.evaluate("initial", document), "the initial document")
    assert isinstance(initial, verdicts.InitialVerdict)
    assert initial.initial_plan_hash == document["initial_plan_hash"]
    assert initial.operations == document["initial_manifest"]["operations"]
    prompt = judge.require_accepted(judge.evaluate("prompt", _load(FIXTURES / "prompt" / "valid" / "new-pr.json")), "")
    assert isinstance(prompt, verdicts.PromptVerdict) and prompt.result == "prompt-ready"
    for path in sorted((FIXTURES / "initial" / "valid").glob("*.json")):
        output = run_initial(_load(path), approved_hash=None)
        assert verdicts.parse("initial", 0, output).as_dict() == output, path.name
    for path in sorted((FIXTURES / "prompt" / "valid").glob("*.json")):
        output = run_prompt(_load(path))
        assert verdicts.parse("prompt", 0, output).as_dict() == output, path.name


def test_every_rejection_of_the_fixture_corpus_parses():
    count = 0
    for check, folder in (("initial", "initial"), ("prompt", "prompt"), ("state", "state")):
        for path in sorted((FIXTURES / folder / "invalid").rglob("*.json")):
            try:
                document = _load(path)
            except Exception:  # not even JSON: the evaluator's parser rejects it before any check
                continue
            run = {"initial": run_initial, "prompt": run_prompt, "state": run_state}[check]
            output = run(document, approved_hash=None, now=None)
            parsed = verdicts.parse(check, 1, output)
            assert isinstance(parsed, verdicts.Rejection) and parsed.as_dict() == output, path.name
            count += 1
    assert count > 100


def test_a_rejection_is_the_same_evaluator_rejected_error_as_ever():
    document = _load(FIXTURES / "initial" / "valid" / "new-pr-branch-validate-commit-push.json")
    verdict = judge.evaluate("initial", {**document, "initial_plan_hash": "0" * 64})
    assert verdict.status == 1 and not verdict.accepted and isinstance(verdict.parsed, verdicts.Rejection)
    with pytest.raises(ActError) as raised:
        judge.require_accepted(verdict, "the initial document")
    errors = verdict.output["errors"]
    named = "; ".join(f"{e['code']} at {e['path'] or '/'}" for e in errors[:5])
    assert raised.value.code == "evaluator-rejected"
    assert raised.value.message.startswith(
        f"the evaluator rejected the initial document (exit 1): {named}; no write is permitted"
    )
    assert raised.value.details == {"evaluator": verdict.output}


# --- malformed outputs are no verdict ----------------------------------------------------


def test_an_output_missing_a_key_is_evaluator_failed():
    output = _state_output()
    del output["claim_comment_body"]
    assert "missing-key at /claim_comment_body" in _failed("state", 0, output).message


def test_an_output_with_an_extra_key_is_evaluator_failed():
    assert "unknown-key at /merge" in _failed("state", 0, {**_state_output(), "merge": True}).message
    initial = run_initial(
        _load(FIXTURES / "initial" / "valid" / "new-pr-branch-validate-commit-push.json"), approved_hash=None
    )
    _failed("initial", 0, {**initial, "note": "x"})


def test_an_output_with_a_wrong_type_is_evaluator_failed():
    assert "wrong-type at /fix_rounds" in _failed("state", 0, {**_state_output(), "fix_rounds": "0"}).message
    gates = {**_state_output("finish-finalization--finalization-settled")}
    gates["gates"] = {**gates["gates"], "checks": True}
    _failed("state", 0, gates)
    rejected = {"ok": False, "check": "state", "errors": [{"code": "x", "path": "", "message": 1}]}
    _failed("state", 1, rejected)


def test_an_unknown_action_is_evaluator_failed():
    message = _failed("state", 0, {**_state_output(), "action": "merge-anyway"}).message
    assert "'merge-anyway' is not an action of the registry" in message
    _failed("state", 0, {key: value for key, value in _state_output().items() if key != "action"})


def test_an_unknown_operation_is_evaluator_failed():
    output = _state_output()
    assert "invalid-value at /operations/0" in _failed("state", 0, {**output, "operations": ["force-push"]}).message


def test_an_exit_status_that_contradicts_ok_or_another_check_is_evaluator_failed():
    output = _state_output()
    _failed("state", 1, output)  # accepted, yet exit 1
    _failed("state", 0, {"ok": False, "check": "state", "errors": []})  # rejected, yet exit 0
    _failed("initial", 0, output)  # the verdict of another check
    _failed("state", 2, {"ok": False, "check": "prompt", "errors": []})


def test_a_well_formed_output_still_parses_after_the_crafted_ones():
    output = _state_output()
    assert isinstance(verdicts.parse("state", 0, copy.deepcopy(output)), verdicts.ClaimPlan)


# --- last-result.json is read through the same models ------------------------------------


def test_last_result_is_read_back_typed_and_refused_when_edited(tmp_path):
    directory = statedir.StateDir.create(tmp_path / "state")
    assert verdicts.read_last(directory) is None and verdicts.last_action(directory) is None
    output = _state_output()
    directory.write(statedir.LAST_RESULT, output)
    last = verdicts.read_last(directory)
    assert isinstance(last, verdicts.ClaimPlan) and last.plan_hash == output["plan_hash"]
    assert verdicts.plan_hash_of(last) == output["plan_hash"]
    directory.write(statedir.LAST_RESULT, {**output, "plan_hash": "not a hash"})
    with pytest.raises(ActError) as raised:
        verdicts.last_action(directory)
    assert (raised.value.code, raised.value.path) == ("state-file-invalid", "/plan_hash")


# --- the evaluator checks its own result against the same models before printing it ----------------------


def test_the_verdict_models_are_the_evaluator_s_own():
    from evaluator.models import state_verdict, verdict

    assert verdicts.InitialVerdict is verdict.InitialVerdict and verdicts.Rejection is verdict.Rejection
    assert verdicts.STATE_VERDICTS is state_verdict.STATE_VERDICTS


def test_the_evaluator_prints_a_result_that_fits_its_model_unchanged():
    from evaluator.cli import _fitted

    output = _state_output()
    assert _fitted("state", output, 0) == (output, 0)
    rejection = {"ok": False, "check": "prompt", "errors": [{"code": "c", "path": "", "message": "m"}]}
    assert _fitted("prompt", rejection, 1) == (rejection, 1)


@pytest.mark.parametrize(
    ("check", "status", "change"),
    [
        ("state", 0, {"unexpected": 1}),  # an extra key
        ("state", 0, {"action": "merge"}),  # an action the registry does not name
        ("state", 0, {"fix_rounds": "1"}),  # a wrong type
        ("state", 1, {}),  # an exit status that contradicts ok
        ("initial", 0, {}),  # the result of another check
    ],
)
def test_the_evaluator_never_prints_a_result_that_fits_no_model(check, status, change):
    """A result the evaluator built wrong is an internal error (exit 2), never printed as a verdict."""
    from evaluator.cli import EXIT_USAGE, _fitted

    result, code = _fitted(check, {**_state_output(), **change}, status)
    assert code == EXIT_USAGE and result["ok"] is False and result["check"] == check
    assert [error["code"] for error in result["errors"]] == ["internal-error"]
    assert result["errors"][0]["message"].endswith("; no write is permitted")
    assert verdicts.parse(check, code, result) == verdicts.Rejection.model_validate(result)
