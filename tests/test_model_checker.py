"""The model checker (evaluator/models/common.py) against pydantic, and its own contract.

pydantic is the oracle: every model is rendered as a pydantic model
(tools/pydantic_mirror.py) and both must find exactly the same violations,
code, pointer and message, on every fixture, on every single-step mutation
of representative documents and on random values planted anywhere in them.
The one deliberate difference is tested by name: pydantic's ``Literal[1]``
accepts ``true`` and ``1.0``; in JSON neither is the integer 1.
"""

from __future__ import annotations

import copy
import functools
from pathlib import Path
from typing import Annotated, Any, Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.errors import Violation, sorted_violations
from evaluator.models.common import INVALID, Check, Strict, Timestamp, rule_for, validate
from evaluator.models.initial import InitialDocument
from evaluator.models.prompt import PromptDocument
from evaluator.models.recurring import Gates, RecurringState
from evaluator.models.risk import RiskAcceptance
from tests.helpers import FIXTURES, examples, load
from tools.mutations import mutations
from tools.pydantic_mirror import mirror, mirror_violations

MAXIMAL_INITIAL = FIXTURES / "initial" / "valid" / "new-pr-branch-validate-commit-push.json"
RISK_RECORD = FIXTURES / "initial" / "risk-acceptance-record.json"
STATE = FIXTURES / "state" / "scenarios" / "claim-plan--finalization.json"
REMEDIATION_STATE = FIXTURES / "state" / "scenarios" / "claim-plan--remediation-autonomous.json"
PROMPT = FIXTURES / "prompt" / "valid" / "new-pr.json"

DOCUMENTS: dict[str, tuple[type[Strict], Path]] = {
    "initial": (InitialDocument, MAXIMAL_INITIAL),
    "risk-record": (RiskAcceptance, RISK_RECORD),
    "state-finalization": (RecurringState, STATE),
    "state-remediation": (RecurringState, REMEDIATION_STATE),
    "prompt": (PromptDocument, PROMPT),
}
MODEL_OF_SUITE = {"initial": InitialDocument, "state": RecurringState, "prompt": PromptDocument}


def _pydantic_literal_quirk(model: type[Strict], document: Any, violations: list) -> bool:
    """pydantic accepts ``true``/``1.0`` for the risk record's ``Literal[1]`` version; the checker does not."""
    return (
        model is RiskAcceptance
        and isinstance(document, dict)
        and document.get("version") in (True, 1.0)
        and type(document.get("version")) is not int
        and [(v.code, v.path) for v in violations] == [("invalid-value", "/version")]
    )


def assert_same_verdict(model: type[Strict], document: Any, what: str) -> None:
    instance, found = validate(model, document)
    expected = mirror_violations(model, document)
    if _pydantic_literal_quirk(model, document, found) and not expected:
        return
    assert sorted_violations(found) == sorted_violations(expected), what
    assert (instance is None) == bool(found), what


def test_both_accept_every_valid_document():
    for model, path in DOCUMENTS.values():
        instance, found = validate(model, load(path))
        assert found == [] and isinstance(instance, model), path.name
        assert mirror_violations(model, load(path)) == []


@pytest.mark.parametrize("suite", sorted(MODEL_OF_SUITE))
def test_same_verdict_on_every_fixture(suite):
    paths = sorted((FIXTURES / suite).rglob("*.json"))
    assert len(paths) > 10
    for path in paths:
        if path.name == "expected.json":
            continue
        document = load(path)
        assert_same_verdict(MODEL_OF_SUITE[suite], document, path.name)


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_same_verdict_on_every_single_step_mutation(name):
    model, path = DOCUMENTS[name]
    count = 0
    for description, mutated in mutations(load(path)):
        assert_same_verdict(model, mutated, description)
        count += 1
    assert count > 100


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8) | st.sampled_from(["a" * 40, "f" * 64, "0" * 32]),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=6), children, max_size=3),
    max_leaves=8,
)


@functools.cache
def _places(name: str) -> list[tuple[Any, ...]]:
    """Every location in the document (each object key and list index), by path."""
    places: list[tuple[Any, ...]] = []

    def visit(value: Any, path: tuple[Any, ...]) -> None:
        places.append(path)
        children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in children:
            visit(child, (*path, key))

    visit(load(DOCUMENTS[name][1]), ())
    return places


@settings(max_examples=examples(20))
@given(st.sampled_from(sorted(DOCUMENTS)), st.data())
def test_same_verdict_on_random_values_planted_anywhere(name, data):
    model, path = DOCUMENTS[name]
    document = load(path)
    where = data.draw(st.sampled_from(_places(name)))
    value = data.draw(JSON_VALUES)
    if not where:
        document = value
    else:
        parent = document
        for step in where[:-1]:
            parent = parent[step]
        parent[where[-1]] = value
    assert_same_verdict(model, document, f"{value!r} at {where}")


# --- the deliberate difference ------------------------------------------------


@pytest.mark.parametrize("version", [True, 1.0])
def test_a_literal_integer_is_not_a_boolean_or_a_float(version):
    record = load(RISK_RECORD)
    record["version"] = version
    instance, found = validate(RiskAcceptance, record)
    assert instance is None
    assert [(v.code, v.path, v.message) for v in found] == [("invalid-value", "/version", "Input should be 1")]
    assert mirror(RiskAcceptance).model_validate(record)  # pydantic would have accepted it


# --- messages, pointers and instances -------------------------------------------


def test_every_problem_of_one_object_is_reported_at_its_own_pointer():
    gates = {"approvals": "pass", "checks": 1, "mergeability": None, "extra": "x"}
    instance, found = validate(Gates, gates, base=("state", "gates"))
    assert instance is None
    assert sorted_violations(found) == sorted_violations(
        Violation(*row)
        for row in [
            ("missing-key", "/state/gates/branch_protection", "required key 'branch_protection' is missing"),
            ("invalid-value", "/state/gates/checks", "Input should be 'pass', 'fail', 'pending' or 'unknown'"),
            ("unknown-key", "/state/gates/extra", "key 'extra' is not part of the schema"),
            ("invalid-value", "/state/gates/mergeability", "Input should be 'pass', 'fail', 'pending' or 'unknown'"),
        ]
    )


@pytest.mark.parametrize(
    "value,observed",
    [([], "array"), ("x", "string"), (None, "null"), (True, "boolean"), (3, "integer")],
)
def test_a_model_given_another_json_type_names_what_it_got(value, observed):
    _, found = validate(Gates, value)
    assert [tuple(v) for v in found] == [
        ("wrong-type", "", f"Input should be a valid dictionary or instance of Gates; observed {observed}")
    ]


def test_a_format_is_checked_only_once_the_type_is_right():
    found: list = []
    assert rule_for(Timestamp, "probe")(5, (), found) is INVALID
    assert found == [((), "wrong-type", "Input should be a valid string; observed integer")]


def test_an_instance_is_frozen_comparable_and_dumps_to_its_document():
    document = load(STATE)
    state, found = validate(RecurringState, document)
    assert found == []
    assert state.as_dict() == document
    assert list(state.as_dict()) == list(RecurringState.field_names)
    assert state == validate(RecurringState, copy.deepcopy(document))[0]
    assert state.gates == validate(Gates, document["gates"])[0]
    assert state.gates != validate(Gates, {**document["gates"], "checks": "fail"})[0]
    with pytest.raises(AttributeError, match="frozen"):
        state.pr_number = 2
    assert hash(state.gates) == hash(validate(Gates, dict(document["gates"]))[0])
    assert repr(state.gates).startswith("Gates(approvals=")


# --- only the vocabulary the checker enforces can be declared -----------------


OUTSIDE_THE_VOCABULARY = {
    "float": float,
    "dict": dict,
    "postponed": "str",
    "union": str | int,
    "union with null": str | int | None,
    "bare list": list,
    "float literal": Literal[1.5],
    "annotated without a check": Annotated[str, "not a check"],
    "two checks": Annotated[str, Check("a-code", lambda v: None), Check("b-code", lambda v: None)],
}


@pytest.mark.parametrize("annotation", OUTSIDE_THE_VOCABULARY.values(), ids=OUTSIDE_THE_VOCABULARY)
def test_a_model_with_a_type_outside_the_vocabulary_is_refused_at_definition(annotation):
    with pytest.raises(TypeError, match="Unknowable.field"):
        type("Unknowable", (Strict,), {"__annotations__": {"field": annotation}})


def test_a_model_without_keys_is_refused_at_definition():
    with pytest.raises(TypeError, match="a model declares its keys"):
        type("Keyless", (Strict,), {})


def test_a_model_cannot_inherit_keys_from_another_model():
    with pytest.raises(TypeError, match="derives from Strict directly"):
        type("Wider", (Gates,), {"__annotations__": {"more": str}})
