"""The approval summary shows only what the plan hash covers, or says an item is informational.

Every object of a summary carries ``coverage``, one entry per shown key: a
JSON Pointer into the hashed document whose value (or digest) must be what is
shown, or ``informational``. ``check`` walks a summary and proves each
pointer against the document the plan hash digests; the negative cases show
that a changed file, a changed plan or an uncovered key fails it.
"""

from __future__ import annotations

import copy
import hashlib
from typing import Any

import pytest

from act.build import initial, recurring
from act.text import summary, summary_diff
from evaluator import markers
from evaluator.canonical import digest, text_digest
from evaluator.models.recurring import RecurringState
from tools import samples, state_scenarios

RUN_ID = "00ff" * 8
DIFF = (
    b"diff --git a/src/app.py b/src/app.py\n"
    b"index 380156dc8052fccd689b949d7e6f26c72a3f4e6c..b376c9941fda362c8d2c5c8ddb35db3e0b003402 100644\n"
    b"--- a/src/app.py\n"
    b"+++ b/src/app.py\n"
    b"@@ -1,2 +1,2 @@\n"
    b" import sys\n"
    b"-print('helo')\n"
    b"+print('hello')\n"
)


def resolve(document: Any, pointer: str) -> Any:
    """RFC 6901: the value ``pointer`` names; a pointer that names nothing fails the test."""
    value = document
    for part in pointer.split("/")[1:] if pointer else []:
        part = part.replace("~1", "/").replace("~0", "~")
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def check(shown: dict[str, Any], document: Any) -> list[tuple[str, Any, str]]:
    """Prove every coverage entry of ``shown`` against ``document``; return the excerpts, to be proved by caller."""
    excerpts: list[tuple[str, Any, str]] = []
    assert set(shown) - {"coverage"} == set(shown["coverage"]), "a shown key without a coverage entry"
    for key, spec in shown["coverage"].items():
        value = shown[key]
        if "informational" in spec:
            assert isinstance(spec["informational"], str) and spec["informational"], key
        elif "digest_of" in spec:
            assert digest(resolve(document, spec["digest_of"])) == value, key
        elif spec.get("shown") == "each item's coverage":
            assert len(resolve(document, spec["covered_by"])) == len(value), key
            for item in value:
                excerpts += check(item, document)
        elif "record_sha256" in spec:  # a JSON record bound by its canonical digest (the risk acceptance)
            assert resolve(document, spec["covered_by"]) == spec["record_sha256"], key
            if spec.get("shown") != "in words":
                assert digest(value) == spec["record_sha256"], key
        elif "sha256" in spec:
            assert resolve(document, spec["covered_by"]) == spec["sha256"], key
            if spec.get("shown") == "excerpt":
                excerpts.append((key, value, spec["sha256"]))
            else:
                assert text_digest(value) == spec["sha256"], key
        elif spec.get("shown") == "in words":
            resolve(document, spec["covered_by"])
        else:
            assert value == resolve_all(document, spec["covered_by"]), key
    return excerpts


def resolve_all(document: Any, pointers: str | list[str] | dict[str, str]) -> Any:
    """What one pointer, a list of pointers or an object of pointers names, in the same shape."""
    if isinstance(pointers, list):
        return [resolve(document, p) for p in pointers]
    if isinstance(pointers, dict):
        return {k: resolve(document, p) for k, p in pointers.items()}
    return resolve(document, pointers)


def initial_document(diff: bytes) -> dict[str, Any]:
    """An initial plan whose snapshot binds ``diff`` by its SHA-256, as the git observer would."""
    snapshot = {**samples.initial_snapshot(), "diff_sha256": hashlib.sha256(diff).hexdigest()}
    return initial.initial_document(
        snapshot,
        run_id=RUN_ID,
        mode="approval-gated",
        pr_title="Fix greeting",
        pr_body="Fixes the greeting.\n",
        review_template=markers.default_review_template(RUN_ID, 0),
    )


def initial_summary(document: dict[str, Any], diff: bytes) -> dict[str, Any]:
    bound = document["initial_snapshot"]["diff_sha256"]
    shown = summary_diff.shown_diff(diff, bound, "/initial_snapshot/diff_sha256")
    return summary.initial_summary(document, "Fix greeting", "Fixes the greeting.\n", shown)


def test_every_item_of_an_initial_summary_is_covered_or_informational():
    document = initial_document(DIFF)
    # The hashed document: the hash digests the manifest, and the manifest binds the snapshot.
    assert digest(document["initial_manifest"]) == document["initial_plan_hash"]
    assert digest(document["initial_snapshot"]) == document["initial_manifest"]["snapshot_sha256"]
    shown = initial_summary(document, DIFF)
    ((key, diff, bound),) = check(shown, document)
    assert key == "diff" and diff["shown"] is True and hashlib.sha256(DIFF).hexdigest() == bound == diff["sha256"]
    assert diff["unified"] == DIFF.decode().rstrip("\n").split("\n")  # small enough to be shown whole
    assert diff["stat"] == [{"path": "src/app.py", "added": 1, "removed": 1, "binary": False}]
    assert "covered_by" in shown["coverage"]["pr_title"] and "informational" in shown["coverage"]["how_to_approve"]


def test_a_diff_that_is_not_the_bound_one_is_not_shown():
    """The file changed after the plan was built: the diff read now is withheld, and that is said."""
    document = initial_document(DIFF)
    changed = DIFF.replace(b"hello", b"hello, world")
    shown = initial_summary(document, changed)
    assert shown["diff"]["shown"] is False and "not the planned change" in shown["diff"]["why"]
    assert "informational" in shown["coverage"]["diff"] and "unified" not in shown["diff"]
    assert check(shown, document) == []  # nothing left that claims to be covered
    assert "diff (informational): the change read now" in summary.text(shown)


def test_a_large_diff_is_bounded_per_file_and_in_all():
    files = b"".join(
        f"diff --git a/f{n} b/f{n}\nnew file mode 100644\n--- /dev/null\n+++ b/f{n}\n@@ -0,0 +1,100 @@\n".encode()
        + b"".join(f"+line {i} {'x' * 300}\n".encode() for i in range(100))
        for n in range(4)
    )
    shown, coverage = summary_diff.shown_diff(files, hashlib.sha256(files).hexdigest(), "/d")
    assert (shown["files"], shown["added"], shown["truncated"]) == (4, 400, True)
    assert len([line for line in shown["unified"] if not line.startswith("... ")]) == summary_diff.DIFF_SHOWN_LINES
    assert "... 25 more lines of f0 not shown" in shown["unified"]  # 105 lines, 80 shown
    assert all(len(line) <= summary_diff.DIFF_LINE_CHARS for line in shown["unified"])
    assert coverage == {"covered_by": "/d", "sha256": hashlib.sha256(files).hexdigest(), "shown": "excerpt"}


PLANNING = {
    name: (state, action)
    for name, state, _options, action, _ in state_scenarios.scenarios()
    if action in ("plan-remediation", "plan-finalization")
}


def finding(thread: dict[str, Any], text: str, *, truncated: bool = False) -> dict[str, Any]:
    return {
        "thread_id": thread["id"],
        "path": "src/app.py",
        "start_line": None,
        "line": 10,
        "priority": "P1",
        "text": text,
        "truncated": truncated,
        "body_sha256": thread["body_sha256"],
        "position_sha256": thread["position_sha256"],
    }


def remediation(state: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    manifest = recurring.remediation_manifest(
        RecurringState.model_validate(state),
        path_records=[samples.path_record(p) for p in samples.DEFAULT_PATHS],
        commands=samples.DEFAULT_COMMANDS,
        execution=samples.execution_boundary(),
    )
    first, second = state["actionable_codex_threads"]
    label = first["id"].removeprefix("PRRT_kwDO")
    said = [finding(first, f"P1 finding {label}"), finding(second, "P1 finding, cut when read", truncated=True)]
    return manifest, summary.remediation_summary(state, manifest, recurring.plan_hash(manifest), said)


def test_every_item_of_a_remediation_summary_is_covered_or_informational():
    state, _ = PLANNING["plan-remediation--codex-findings"]
    manifest, shown = remediation(state)
    ((key, text, bound),) = check(shown, manifest)  # the second finding was cut: informational
    first = state["actionable_codex_threads"][0]
    body = f"P1 finding {first['id'].removeprefix('PRRT_kwDO')}"
    assert key == "finding" and text_digest(body) == bound and text == summary.finding_excerpt(body)
    second = shown["threads"][1]
    assert "informational" in second["coverage"]["finding"] and second["finding"].endswith("...")
    assert all(t["reply"].endswith(t["reply_ends_with"]) for t in shown["threads"])
    assert "informational" in shown["coverage"]["diff"] and shown["diff"]["shown"] is False


def test_a_summary_that_no_longer_matches_its_plan_fails_the_check():
    """The check can fail: a plan changed after its summary was built, or a key shown without coverage."""
    state, _ = PLANNING["plan-remediation--codex-findings"]
    manifest, shown = remediation(state)
    for pointer, value in (("/paths/0", "src/other.py"), ("/actionable_threads/0/body_sha256", "0" * 64)):
        changed = copy.deepcopy(manifest)
        parent, _, last = pointer.rpartition("/")
        resolve(changed, parent)[int(last) if last.isdigit() else last] = value
        with pytest.raises(AssertionError):
            check(shown, changed)
    with pytest.raises(AssertionError):
        check({**shown, "unbound": "shown without a coverage entry"}, manifest)


def test_a_finding_excerpt_is_redacted_and_bounded():
    text = "See https://user:pw@example.com/x and token ghp_" + "a" * 36 + ". " + "word " * 200
    shown = summary.finding_excerpt(text)
    assert "example.com" not in shown and "ghp_" not in shown and "<link>" in shown and "[REDACTED]" in shown
    assert len(shown) == summary.FINDING_SHOWN and shown.endswith("...")


@pytest.mark.parametrize("name", [n for n, (_, action) in PLANNING.items() if action == "plan-finalization"])
def test_every_item_of_a_finalization_summary_is_covered_or_informational(name):
    state, _ = PLANNING[name]
    state = {**copy.deepcopy(state), "eligible_codex_threads": [samples.thread("ccc3")]}
    manifest = recurring.finalization_manifest(RecurringState.model_validate(state))
    shown = summary.finalization_summary(state, manifest, recurring.plan_hash(manifest), "one")
    assert check(shown, manifest) == []
    assert [t["id"] for t in shown["threads"]] == ["PRRT_kwDOccc3"] and shown["gates"] == manifest["gates"]


def test_the_text_form_prints_the_hash_once_on_its_own_line():
    document = initial_document(DIFF)
    text = summary.text(initial_summary(document, DIFF))
    plan_hash = document["initial_plan_hash"]
    assert text.count(plan_hash) == 1 and text.endswith(f"):\n{plan_hash}\n")
    assert "  diff (covered by the plan hash): 1 file, +1 -1\n    src/app.py | +1 -1\n" in text
    assert "    | +print('hello')\n" in text and "review request note (informational):" in text
    state, _ = PLANNING["plan-remediation--codex-findings"]
    manifest, shown = remediation(state)
    text = summary.text(shown)
    assert text.count(shown["plan_hash"]) == 1 and "      finding (informational): P1 finding, cut" in text
    assert "      reply (informational): Addressed in <the pushed fix commit>." in text
