"""references/errors.md lists every error code the evaluator, the git observer and the hands can emit, and nothing else.

Codes are collected from the source, not from a list someone keeps: every
code literal given to Violation, the parser's _Reject or a field Check, every
literal written right before a JSON Pointer argument or recorded by the model
checker next to a location, and the CLI's own codes. Codes built at run time (a
table row, an f-string) are covered by the fixtures' expected codes and by
the f-string templates the stale check accepts.
"""

from __future__ import annotations

import ast
import re

import pytest

from tests.helpers import FIXTURES, ROOT, load

CATALOGUE = ROOT / "references" / "errors.md"
SOURCES = sorted((ROOT / "evaluator").rglob("*.py")) + sorted((ROOT / "act").rglob("*.py"))
# Git observation codes reach users through the collector; they are catalogued too (section 10).
GIT_SOURCES = sorted((ROOT / "observe" / "git").rglob("*.py")) + [ROOT / "observe" / "gh.py"]

_CODE = r"([a-z0-9]+(?:-[a-z0-9]+)+)"
EMITTING_CALL = re.compile(r"\b(?:Violation|Check|Check\.grammar|_Reject|ActError)\(\s*\"" + _CODE + '"')
# The model checker (evaluator/models/common.py) records (location, code, message).
CHECKER_RECORD = re.compile(r'(?:\bat|\)), "' + _CODE + '", ')
BEFORE_POINTER = re.compile('"' + _CODE + r'",\s*(?:at|pointer)\(')
FSTRING_CODE = re.compile(r'Violation\(\s*f"([a-z0-9{}_-]+)"')
CODE_CELL = re.compile(r"^\|\s*`" + _CODE + r"`\s*\|", re.MULTILINE)
FIXED = {"wrong-type", "internal-error", "usage-error"}
COLLECTOR_SECTION, GIT_SECTION = "\n## 9. Collector", "\n## 10. Git observation"


GIT_ERROR = re.compile(r"\b(?:GitObservationError|GhSetupError)\(\s*\"" + _CODE + '"')


def source_text() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in SOURCES + GIT_SOURCES)


def emitted_codes() -> set[str]:
    text = source_text()
    found = set(EMITTING_CALL.findall(text)) | set(BEFORE_POINTER.findall(text)) | set(GIT_ERROR.findall(text))
    return found | set(CHECKER_RECORD.findall(text)) | FIXED


def fixture_codes() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for expected in sorted(FIXTURES.glob("*/invalid/expected.json")):
        for name, codes in load(expected).items():
            for code in codes:
                found.setdefault(code, set()).add(f"{expected.parent.parent.name}/{name}")
    return found


def documented_codes() -> set[str]:
    """Every section but the collector's own table (tests/test_observe_errors.py checks that one)."""
    before, _, rest = CATALOGUE.read_text(encoding="utf-8").partition(COLLECTOR_SECTION)
    _, _, git_and_after = rest.partition(GIT_SECTION)
    return set(CODE_CELL.findall(before + git_and_after))


def test_the_collector_finds_codes_of_every_kind():
    codes = emitted_codes()
    assert {
        "json-duplicate-key",
        "invalid-sha",
        "missing-key",
        "operations-mismatch",
        "review-template-marker-missing",
        "risk-guarantees-incomplete",
    } <= codes
    assert {"git-command-failed", "git-path-hard-linked", "git-repository-not-owned"} <= codes


def test_every_emitted_code_is_catalogued():
    missing = sorted(emitted_codes() - documented_codes())
    assert not missing, f"add a `code` row to references/errors.md for: {missing}"


def test_every_fixture_code_is_catalogued():
    missing = {code: sorted(where) for code, where in fixture_codes().items() if code not in documented_codes()}
    assert not missing, f"fixtures expect codes references/errors.md does not list: {missing}"


def test_every_catalogued_code_is_still_emitted():
    text = source_text()
    templates = [
        re.compile(re.sub(r"\\\{[a-z_]+\\\}", "[a-z0-9-]+", re.escape(t)) + "$") for t in FSTRING_CODE.findall(text)
    ]
    stale = sorted(
        code for code in documented_codes() if f'"{code}"' not in text and not any(t.match(code) for t in templates)
    )
    assert not stale, f"references/errors.md lists codes the evaluator no longer emits: {stale}"


def hands_section_codes() -> set[str]:
    text = CATALOGUE.read_text(encoding="utf-8")
    _, _, section = text.partition("\n## 11. The hands")
    section, _, _ = section.partition("\n## 12.")
    return set(CODE_CELL.findall(section))


def test_every_hands_code_names_its_next_step_in_the_message():
    """A refusal is never a dead end: each catalogued code of the hands says how to go on."""
    from act.core.errors import ActError
    from act.core.next_steps import NEXT_STEPS

    assert set(NEXT_STEPS) == hands_section_codes()
    for code, step in NEXT_STEPS.items():
        assert step and step[0].islower() and not step.endswith("."), code
        assert ActError(code, "what happened").message == f"what happened; next: {step}"
    # An observer's error keeps the next step it already names, not a second one.
    observed = ActError("path-records-changed", "src/app.py changed; next: restore it")
    assert observed.message.count("; next: ") == 1


def _usage_error_classes(package: str) -> list[str]:
    """Every class defined under ``package`` whose name says it is a usage error."""
    found = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef) and "usage" in node.name.lower():
                found.append(f"{path.relative_to(ROOT)}:{node.name}")
    return found


@pytest.mark.parametrize(
    ("package", "expected"),
    [
        ("evaluator", ["evaluator/cli.py:UsageError"]),
        ("observe", ["observe/errors.py:UsageError"]),
        ("act", ["act/core/errors.py:UsageError"]),
    ],
)
def test_one_usage_error_class_per_side(package, expected):
    """Each command line has one way to say it was called wrongly (exit 2): the hands turn the
    collector's into theirs at the one place they share its flags (act/cli.py)."""
    assert _usage_error_classes(package) == expected
