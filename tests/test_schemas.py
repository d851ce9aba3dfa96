"""The published JSON Schemas (tier one) agree with the files, the fixtures and the evaluator."""

from __future__ import annotations

import functools
import subprocess
import sys

import pytest
from jsonschema import Draft202012Validator

from evaluator.models import common
from tests.helpers import FIXTURES, ROOT, invalid_fixtures, load, model_checker_accepts, valid_fixtures
from tools import build_schemas

SCHEMA_DIR = ROOT / "references" / "schemas"
SHAPE_CODES = {
    "missing-key",
    "unknown-key",
    "wrong-type",
    "invalid-sha",
    "invalid-digest",
    "invalid-run-id",
    "invalid-value",
}


@functools.cache  # checking a schema against the meta-schema takes ~0.2 s; once per schema is enough
def validator(name: str) -> Draft202012Validator:
    schema = load(SCHEMA_DIR / f"{name}.schema.json")
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


def test_committed_schemas_equal_the_generated_ones():
    generated = build_schemas.generate()
    committed = {path.name: path.read_text(encoding="utf-8") for path in SCHEMA_DIR.glob("*.schema.json")}
    assert sorted(committed) == sorted(generated), (
        "references/schemas/ holds other files than SCHEMAS names;"
        " rerun `python -m tools.build_schemas` (and delete stale files)"
    )
    for name, text in generated.items():
        assert committed[name] == text, f"references/schemas/{name} is stale; rerun `python -m tools.build_schemas`"


def test_a_model_that_does_not_import_stops_the_build(monkeypatch):
    monkeypatch.setitem(
        build_schemas.SCHEMAS, "not-yet", ("evaluator.models.not_yet:Nothing", "a model still being written")
    )
    with pytest.raises(SystemExit, match="cannot import evaluator.models.not_yet:Nothing"):
        build_schemas.generate()


def test_a_format_without_a_formats_row_stops_the_build():
    from typing import Annotated

    # Built with type(): this module postpones its annotations, and a model's must be types.
    unmapped = Annotated[str, common.Check("invented-format", lambda value: None)]
    Unmapped = type("Unmapped", (common.Strict,), {"__annotations__": {"code": unmapped}})

    with pytest.raises(SystemExit, match="checked for invented-format has no row in FORMATS"):
        Unmapped.model_json_schema(schema_generator=build_schemas._Generator)


@pytest.mark.parametrize("path", valid_fixtures("initial"), ids=lambda p: p.stem)
def test_schema_accepts_valid_initial_fixture(path):
    errors = [error.message for error in validator("initial-document").iter_errors(load(path))]
    assert errors == []


def test_schema_accepts_risk_acceptance_record():
    errors = [
        error.message
        for error in validator("risk-acceptance").iter_errors(
            load(FIXTURES / "initial" / "risk-acceptance-record.json")
        )
    ]
    assert errors == []


SHAPE_INVALID = [(path, codes) for path, codes in invalid_fixtures("initial") if set(codes) <= SHAPE_CODES]


def test_there_are_shape_invalid_fixtures_to_check():
    assert len(SHAPE_INVALID) >= 20


@pytest.mark.parametrize("path,codes", SHAPE_INVALID, ids=lambda value: getattr(value, "stem", ""))
def test_schema_rejects_shape_invalid_fixture(path, codes):
    assert not validator("initial-document").is_valid(load(path)), f"tier one accepts {path.name} ({codes})"


# The FORMATS rows must mean what the evaluator's validators mean. Each probe is
# checked by both; strings ending in a newline are left out on purpose, because
# Python's re.search lets `$` match before one (see references/canonical-json.md).
PROBES = {
    "Sha": (
        common.Sha,
        ["a" * 40, "0123456789abcdef0123456789abcdef01234567", "A" * 40, "a" * 39, "a" * 41, "g" * 40, ""],
    ),
    "Digest": (common.Digest, ["f" * 64, "F" * 64, "f" * 63, "sha256:" + "f" * 64]),
    "RunId": (common.RunId, ["0" * 32, "0" * 31, "0" * 33, "Z" * 32]),
    "DecimalId": (common.DecimalId, ["1", "42", "9" * 16, "9" * 17, "0", "01", "-1", "1.0", "\u0661"]),
    "NodeId": (common.NodeId, ["PRRT_kwDOAB", "a=", "a" * 128, "a" * 129, "", "a b", "\u00e9"]),
    "RemoteName": (common.RemoteName, ["origin", "up-stream_2", "-x", "a/b", "a.b", "a" * 63, "a" * 64, ""]),
    "Repository": (
        common.Repository,
        [
            "octo-org/hello-world",
            "a/.",
            "a/..",
            "a/...",
            "a/x.git",
            "a/x.gitx",
            "a-/b",
            "-a/b",
            "a--b/c",
            "A/b",
            "a/b/c",
            "a" * 39 + "/b",
            "a" * 40 + "/b",
        ],
    ),
    "Timestamp": (
        common.Timestamp,
        [
            "2026-11-29T09:15:00+01:00",
            "2026-11-29T09:15:00.123456Z",
            "2026-11-29T09:15:00",
            "2026-11-29 09:15:00Z",
            "2026-11-29T09:15:00.1234567Z",
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(PROBES))
def test_schema_formats_agree_with_the_evaluator(name):
    annotated, probes = PROBES[name]
    keywords = build_schemas.FORMATS[annotated]
    schema = Draft202012Validator({"type": "string", **{k: v for k, v in keywords.items() if k != "description"}})
    for probe in probes:
        evaluator_accepts = model_checker_accepts(annotated, probe)
        assert schema.is_valid(probe) == evaluator_accepts, f"{name}: schema and evaluator disagree on {probe!r}"


def test_fixed_length_formats_are_exact_even_with_a_final_newline():
    digest = load(SCHEMA_DIR / "initial-document.schema.json")["properties"]["initial_plan_hash"]
    assert not Draft202012Validator(digest).is_valid("a" * 64 + "\n")


def test_initial_cli_path_builds_only_the_initial_models():
    """Start-up (bench/README.md): pydantic is the one dependency; only the validators of the initial document and
    of its own result (evaluator/models/verdict.py, checked before it is printed) are built."""
    fixture = FIXTURES / "initial" / "valid" / "new-pr-branch-validate-commit-push.json"
    program = (
        "import contextlib, io, sys\n"
        f"sys.argv = ['evaluate_state.py', '--initial', {str(fixture)!r}]\n"
        "from evaluator.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()) as out:\n"
        "    status = main()\n"
        "assert status == 0 and '\"ok\":true' in out.getvalue(), out.getvalue()\n"
        "unwanted = ('ghapi', 'jsonschema', 'evaluator.models.risk', 'evaluator.models.recurring')\n"
        "loaded = sorted(name for name in unwanted if name in sys.modules)\n"
        "from evaluator.models import common\n"
        "built = sorted(m.__name__ for m in common.Strict.__subclasses__() if m.__pydantic_complete__)\n"
        "print(','.join(loaded) or 'none', ','.join(built))\n"
    )
    completed = subprocess.run([sys.executable, "-c", program], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.split() == ["none", "InitialDocument,InitialVerdict"]


@pytest.mark.parametrize("module", sorted((ROOT / "evaluator" / "models").glob("*.py")), ids=lambda p: p.name)
def test_model_modules_do_not_postpone_their_annotations(module):
    """The checker reads annotations as the types they name; postponed ones would be strings (models/__init__.py)."""
    assert "from __future__ import annotations" not in module.read_text(encoding="utf-8").splitlines()


SCENARIOS = sorted((FIXTURES / "state" / "scenarios").glob("*--*.json"))


def test_schema_accepts_every_state_scenario_and_its_plans():
    state, remediation, finalization = (
        validator("recurring-state"),
        validator("remediation-manifest"),
        validator("finalization-manifest"),
    )
    for path in SCENARIOS:
        document = load(path)
        assert [e.message for e in state.iter_errors(document)] == [], path.stem
        if document["remediation_manifest"] is not None:
            assert remediation.is_valid(document["remediation_manifest"]), path.stem
        if document["finalization_manifest"] is not None:
            assert finalization.is_valid(document["finalization_manifest"]), path.stem


@pytest.mark.parametrize("path", valid_fixtures("prompt"), ids=lambda p: p.stem)
def test_schema_accepts_valid_prompt_documents(path):
    assert [e.message for e in validator("prompt-document").iter_errors(load(path))] == []


STATE_SHAPE_INVALID = [
    (path, codes)
    for suite in ("state", "remediation", "finalization", "prompt")
    for path, codes in invalid_fixtures(suite)
    if set(codes) <= SHAPE_CODES
]


@pytest.mark.parametrize(
    "path,codes",
    STATE_SHAPE_INVALID,
    ids=lambda value: getattr(value, "parent", None) and f"{value.parent.parent.name}/{value.stem}" or "",
)
def test_schema_rejects_shape_invalid_state_and_prompt_fixtures(path, codes):
    name = "prompt-document" if path.parent.parent.name == "prompt" else "recurring-state"
    assert not validator(name).is_valid(load(path)), f"tier one accepts {path.name} ({codes})"
