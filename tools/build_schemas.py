"""Write the Draft 2020-12 JSON Schemas in references/schemas/ from the pydantic models.

Run: python -m tools.build_schemas   (tests/test_schemas.py fails when the files drift)

A schema is tier one: shape only (exact keys, JSON types, enums, the hex, id
and timestamp formats). Tier two, the evaluator's code, is authoritative for
everything else. pydantic does not see the formats our AfterValidators check,
so FORMATS below says, per constrained type of evaluator/models, which grammar
of evaluator/formats.py it checks (the grammar carries its own JSON Schema
pattern), or that only the code can check it. A constrained type missing from
FORMATS stops the build: a new format is never silently published as a plain
string.
"""

from __future__ import annotations

import importlib
import json
import sys
import typing
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import AfterValidator
from pydantic.json_schema import GenerateJsonSchema

ROOT = Path(__file__).resolve().parent.parent
# The skill's code directories hold no bytecode cache (references/automation-registry.md).
sys.dont_write_bytecode = True
sys.path.insert(0, str(ROOT))

from evaluator import formats  # noqa: E402
from evaluator.models import common  # noqa: E402
from evaluator.models.plan import Argument  # noqa: E402

OUTPUT = ROOT / "references" / "schemas"
ID_BASE = "https://github-codex-pr-loop.invalid/schemas/"
DIALECT = "https://json-schema.org/draft/2020-12/schema"

# One line per published schema: file stem -> ("module:Class", what the document is).
SCHEMAS: dict[str, tuple[str, str]] = {
    "initial-document": (
        "evaluator.models.initial:InitialDocument",
        "The initial document checked by `evaluate_state.py --initial`: initial_snapshot, initial_manifest"
        " and initial_plan_hash (references/manifest-schema.md).",
    ),
    "risk-acceptance": (
        "evaluator.models.risk:RiskAcceptance",
        "The canonical risk acceptance record whose digest execution_boundary.risk_acceptance_sha256 binds,"
        " checked by `--risk-acceptance PATH` (references/manifest-schema.md).",
    ),
    "recurring-state": (
        "evaluator.models.recurring:RecurringState",
        "The recurring wakeup state checked by `evaluate_state.py --state` (references/recurring-state.md).",
    ),
    "remediation-manifest": (
        "evaluator.models.recurring:RemediationManifest",
        "A remediation plan, carried in the state's remediation_manifest (references/recurring-state.md).",
    ),
    "finalization-manifest": (
        "evaluator.models.recurring:FinalizationManifest",
        "A finalization plan, carried in the state's finalization_manifest (references/recurring-state.md).",
    ),
    "prompt-document": (
        "evaluator.models.prompt:PromptDocument",
        "The bootstrap prompt document checked by `evaluate_state.py --prompt` (references/bootstrap.md).",
    ),
}

TWO_TIERS = (
    " Tier one: this schema checks shape only (exact keys, JSON types, enums, hex, id and timestamp formats)."
    " Tier two, the evaluator's code, is authoritative and also enforces strict JSON parsing"
    " (references/canonical-json.md),"
    " branch-name and path rules, calendar validity of timestamps, every cross-field rule and every digest"
    " (references/errors.md). A document this schema accepts may still be rejected; the reverse never happens."
)


def _tier_two(rule: str) -> dict[str, str]:
    return {"description": rule + " Tier two: enforced by the evaluator's code, not by this schema."}


# Constrained type -> the JSON Schema keywords added to every field of that type.
FORMATS: dict[Any, dict[str, Any]] = {
    common.Sha: formats.SHA.json_schema(),
    common.Digest: formats.DIGEST.json_schema(),
    common.RunId: formats.RUN_ID.json_schema(),
    common.DecimalId: formats.DECIMAL_ID.json_schema(),
    common.NodeId: formats.NODE_ID.json_schema(),
    common.PositiveInt: {"minimum": 1},
    common.NonNegativeInt: {"minimum": 0},
    common.RemoteName: formats.REMOTE_NAME.json_schema(),
    common.Repository: formats.REPOSITORY.json_schema(),
    Argument: formats.ARGUMENT.json_schema(),
    common.Timestamp: {
        **formats.TIMESTAMP.json_schema(),
        "description": (
            "ISO-8601 with an explicit offset (Z or +HH:MM). The pattern checks the shape;"
            " that the date and time exist (no 2026-02-30, no 24:00) is tier two: enforced by the evaluator's code."
        ),
    },
    common.BranchName: _tier_two(
        "A branch name git check-ref-format --branch accepts, ASCII, at most 255 characters, no leading '-'."
    ),
    common.RepoPath: _tier_two(
        "A canonical repository-relative POSIX path in NFC: no empty, '.' or '..' component, no leading or"
        " trailing '/', no backslash or control character, nothing git's protectNTFS/protectHFS treat as .git."
    ),
}


def _validator_function(annotated: Any) -> Callable[..., Any]:
    (function,) = [m.func for m in typing.get_args(annotated)[1:] if isinstance(m, AfterValidator)]
    return function


_BY_FUNCTION = {_validator_function(annotated): keywords for annotated, keywords in FORMATS.items()}


class _Generator(GenerateJsonSchema):
    def function_after_schema(self, schema: Any) -> dict[str, Any]:
        inner = self.generate_inner(schema["schema"])
        if schema["schema"]["type"] in ("model", "model-fields"):
            return inner  # a model-level (cross-field) validator: tier two by definition
        function = schema["function"]["function"]
        if function not in _BY_FUNCTION:
            raise SystemExit(
                f"build_schemas: validator {function.__module__}.{function.__qualname__} has no row in FORMATS; add one"
            )
        return {**inner, **_BY_FUNCTION[function]}

    def _unsupported(self, schema: Any) -> dict[str, Any]:
        raise SystemExit(
            f"build_schemas: a {schema['type']} validator cannot be expressed in JSON Schema here;"
            " use AfterValidator and add a FORMATS row"
        )

    function_before_schema = function_plain_schema = function_wrap_schema = _unsupported


def _load(import_path: str) -> type:
    module_name, _, class_name = import_path.partition(":")
    try:
        return getattr(importlib.import_module(module_name), class_name)
    except (ImportError, AttributeError) as error:
        raise SystemExit(f"build_schemas: cannot import {import_path}: {error}") from error


def _tidy(node: Any, where: str) -> None:
    """Drop pydantic's generated property titles; insist on exact keys everywhere."""
    if isinstance(node, dict):
        if "properties" in node:
            if node.get("additionalProperties") is not False:
                raise SystemExit(f"build_schemas: {where} allows additional properties (model without extra='forbid'?)")
            if set(node.get("required", [])) != set(node["properties"]):
                raise SystemExit(f"build_schemas: {where} has optional properties; every key must be required")
            for prop in node["properties"].values():
                prop.pop("title", None)
        for key, child in node.items():
            _tidy(child, f"{where}/{key}")
    elif isinstance(node, list):
        for index, child in enumerate(node):
            _tidy(child, f"{where}/{index}")


def build(name: str) -> dict[str, Any]:
    import_path, summary = SCHEMAS[name]
    generated = _load(import_path).model_json_schema(schema_generator=_Generator)
    _tidy(generated, name)
    generated.pop("description", None)
    return {
        "$schema": DIALECT,
        "$id": f"{ID_BASE}{name}.schema.json",
        "title": generated.pop("title"),
        "description": summary + TWO_TIERS,
        **generated,
    }


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def generate() -> dict[str, str]:
    """File name -> exact file text, for every schema in SCHEMAS."""
    from jsonschema import Draft202012Validator

    files = {}
    for name in SCHEMAS:
        schema = build(name)
        Draft202012Validator.check_schema(schema)
        files[f"{name}.schema.json"] = render(schema)
    return files


def main() -> None:
    OUTPUT.mkdir(parents=True, exist_ok=True)
    for file_name, text in generate().items():
        (OUTPUT / file_name).write_text(text, encoding="utf-8")
        print(f"wrote references/schemas/{file_name}")


if __name__ == "__main__":
    main()
