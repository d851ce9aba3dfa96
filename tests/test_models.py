"""The evaluator's pydantic models (evaluator/models/): verdicts, messages, pointers and their contract.

Every document is checked by pydantic models (strict, extra keys forbidden,
frozen); ``validate`` words pydantic's errors as the evaluator publishes them
(references/errors.md). Verdicts are checked against two independent
oracles: the tier-one JSON Schemas (references/schemas/, checked by
jsonschema, not pydantic), which may accept what the models reject but never
the reverse, and the document itself: a value planted at one place can only
be wrong at that place. Messages and pointers are pinned by name below.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from evaluator.errors import Violation, sorted_violations
from evaluator.models import common, plan
from evaluator.models.common import Check, Strict, Timestamp, validate
from evaluator.models.initial import InitialDocument
from evaluator.models.prompt import PromptDocument
from evaluator.models.recurring import Gates, RecurringState
from evaluator.models.risk import RiskAcceptance
from tests.helpers import FIXTURES, ROOT, examples, load
from tools.mutations import mutations

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
SCHEMA_OF_MODEL = {
    InitialDocument: "initial-document",
    RiskAcceptance: "risk-acceptance",
    RecurringState: "recurring-state",
    PromptDocument: "prompt-document",
}
FIELD_CHECKS = [
    mark
    for module in (common, plan)
    for value in vars(module).values()
    for mark in get_args(value)[1:]
    if isinstance(mark, Check)
]
MODEL_CODES = {"missing-key", "unknown-key", "wrong-type", "invalid-value"} | {check.code for check in FIELD_CHECKS}


@functools.cache
def schema_of(model: type[Strict]) -> Draft202012Validator:
    return Draft202012Validator(load(ROOT / "references" / "schemas" / f"{SCHEMA_OF_MODEL[model]}.schema.json"))


def _exists(document: Any, path: str) -> bool:
    """Whether the JSON Pointer ``path`` (no escapes needed here) names a value of ``document``."""
    node = document
    for step in path.split("/")[1:]:
        step = step.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and step in node:
            node = node[step]
        elif isinstance(node, list) and step.isdigit() and int(step) < len(node):
            node = node[int(step)]
        else:
            return False
    return True


def assert_sound_verdict(model: type[Strict], document: Any, what: str) -> list[Violation]:
    """Checks the verdict against the oracles; returns the violations."""
    instance, found = validate(model, document)
    assert (instance is None) == bool(found), what
    assert {v.code for v in found} <= MODEL_CODES, what
    for violation in found:
        # Each pointer names the offending value; a missing key's names the place the key belongs.
        parent = violation.path.rpartition("/")[0]
        assert _exists(document, violation.path if violation.code != "missing-key" else parent), (what, violation)
    if schema_of(model).is_valid(document):
        pass  # tier one accepted: the models may still reject (formats the schema cannot express)
    else:
        assert found, f"{what}: the tier-one schema rejects what the models accept"
    if instance is not None:
        assert instance.as_dict() == document, what
    return found


def test_every_valid_document_is_accepted():
    for model, path in DOCUMENTS.values():
        instance, found = validate(model, load(path))
        assert found == [] and isinstance(instance, model), path.name


@pytest.mark.parametrize("suite", sorted(MODEL_OF_SUITE))
def test_sound_verdict_on_every_fixture(suite):
    paths = [path for path in sorted((FIXTURES / suite).rglob("*.json")) if path.name != "expected.json"]
    assert len(paths) > 10
    rejected = sum(bool(assert_sound_verdict(MODEL_OF_SUITE[suite], load(path), path.name)) for path in paths)
    assert rejected > 0


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_sound_verdict_on_every_single_step_mutation(name):
    model, path = DOCUMENTS[name]
    verdicts = [bool(assert_sound_verdict(model, mutated, what)) for what, mutated in mutations(load(path))]
    assert len(verdicts) > 100
    assert sum(verdicts) > len(verdicts) // 2  # most single steps break the document


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
def test_a_value_planted_anywhere_is_judged_there_and_only_there(name, data):
    model, path = DOCUMENTS[name]
    document = load(path)
    where = data.draw(st.sampled_from(_places(name)))
    value = data.draw(JSON_VALUES | st.just(copy.deepcopy(_at(document, where))))
    original = copy.deepcopy(_at(document, where))
    if not where:
        document = value
    else:
        _at(document, where[:-1])[where[-1]] = value
    found = assert_sound_verdict(model, document, f"{value!r} at {where}")
    planted = "".join(f"/{step}" for step in where)
    for violation in found:  # the rest of the document is valid: nothing else can be wrong
        assert violation.path == planted or violation.path.startswith(planted + "/"), (value, where, violation)
    if json.dumps(value) == json.dumps(original):
        assert found == [], (value, where)


def _at(document: Any, where: tuple[Any, ...]) -> Any:
    for step in where:
        document = document[step]
    return document


# --- the deliberate difference ------------------------------------------------


@pytest.mark.parametrize("version", [True, 1.0])
def test_a_literal_integer_is_not_a_boolean_or_a_float(version):
    record = load(RISK_RECORD)
    record["version"] = version
    instance, found = validate(RiskAcceptance, record)
    assert instance is None
    assert [(v.code, v.path, v.message) for v in found] == [("invalid-value", "/version", "Input should be 1")]


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
    Probe = type("Probe", (Strict,), {"__annotations__": {"at": Timestamp}})
    assert validate(Probe, {"at": 5})[1] == [
        Violation("wrong-type", "/at", "Input should be a valid string; observed integer")
    ]
    assert validate(Probe, {"at": "noon"})[1] == [
        Violation("invalid-timestamp", "/at", "'noon' is not ISO-8601 with an explicit offset")
    ]


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


# --- only the vocabulary spelled out in evaluator/models/common.py can be declared -----------------


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
