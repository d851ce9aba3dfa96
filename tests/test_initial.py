"""The initial document: named fixtures, rules, approved hash and risk acceptance."""

from __future__ import annotations

import copy

import pytest

from evaluator.canonical import digest
from evaluator.checks import run_initial
from tests.helpers import FIXTURES, invalid_fixtures, load, run_cli, valid_fixtures
from tools import samples

VALID = valid_fixtures("initial")
INVALID = invalid_fixtures("initial")


def check(document, approved_hash=None, risk_record=None):
    return run_initial(document, approved_hash=approved_hash, risk_record=risk_record)


def test_suite_sizes():
    assert len(VALID) >= 8 and len(INVALID) >= 60


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_fixture_is_accepted(path):
    document = load(path)
    result = check(document)
    assert result["ok"] is True, result
    assert result["initial_plan_hash"] == digest(document["initial_manifest"]) == document["initial_plan_hash"]
    assert result["snapshot_sha256"] == digest(document["initial_snapshot"])
    assert result["operations"] == document["initial_manifest"]["operations"]


@pytest.mark.parametrize("path, codes", INVALID, ids=lambda p: getattr(p, "stem", ""))
def test_invalid_fixture_is_rejected_with_its_codes(path, codes):
    result = check(load(path))
    assert result["ok"] is False
    assert sorted({e["code"] for e in result["errors"]}) == codes
    assert path.stem.split("--")[0] in codes, "a negative fixture is named by the rule it breaks"
    assert result["errors"] == sorted(result["errors"], key=lambda e: (e["path"], e["code"], e["message"]))
    for error in result["errors"]:
        assert set(error) == {"code", "path", "message"}
        assert error["path"] == "" or error["path"].startswith("/")


def test_every_optional_operation_combination_is_covered():
    operation_lists = {tuple(load(path)["initial_manifest"]["operations"]) for path in VALID}
    assert len(operation_lists) == 32


def test_approved_hash_must_equal_computed_plan_hash():
    document = samples.initial_document()
    assert check(document, approved_hash=document["initial_plan_hash"])["ok"] is True
    other = samples.initial_document(mode="autonomous")["initial_plan_hash"]
    result = check(document, approved_hash=other)
    assert [e["code"] for e in result["errors"]] == ["plan-hash-mismatch"]


def test_rebuilt_plan_hashes_to_the_same_value():
    # The skill runs --initial twice; an identical rebuild must give an identical hash.
    assert (
        check(samples.initial_document())["initial_plan_hash"] == check(samples.initial_document())["initial_plan_hash"]
    )


def test_any_snapshot_drift_changes_the_plan_hash():
    first = samples.initial_document()
    snapshot = copy.deepcopy(first["initial_snapshot"])
    snapshot["worktree_status_sha256"] = samples.hexdigest("dirty")
    drifted = samples.seal_initial(snapshot, first["initial_manifest"])
    assert check(drifted, approved_hash=first["initial_plan_hash"])["errors"][0]["code"] == "plan-hash-mismatch"


class TestRiskAcceptance:
    def setup_method(self):
        self.document, self.record = samples.explicit_risk_initial()

    def codes(self, record):
        result = check(self.document, risk_record=record)
        return sorted({e["code"] for e in result.get("errors", [])})

    def test_matching_record_is_accepted(self):
        assert check(self.document, risk_record=self.record)["ok"] is True

    def test_bundled_record_matches_bundled_fixture(self):
        document = load(FIXTURES / "initial" / "valid" / "explicit-risk-acceptance.json")
        record = load(FIXTURES / "initial" / "risk-acceptance-record.json")
        assert check(document, risk_record=record)["ok"] is True

    @pytest.mark.parametrize(
        "field, value, code",
        [
            ("run_id", "0" * 32, "risk-acceptance-run-mismatch"),
            ("accepted_by_user_id", 1, "risk-acceptance-user-mismatch"),
            ("commands", [], "risk-acceptance-commands-mismatch"),
            ("unavailable_guarantees", ["network-isolation"], "risk-guarantees-incomplete"),
            (
                "unavailable_guarantees",
                ["network-isolation", "hooks-disabled", "no-active-clean-filters"],
                "risk-guarantees-invalid",
            ),
            (
                "unavailable_guarantees",
                ["hooks-disabled", "network-isolation", "no-active-clean-filters", "telepathy"],
                "risk-guarantees-invalid",
            ),
        ],
    )
    def test_record_that_differs_is_rejected(self, field, value, code):
        record = copy.deepcopy(self.record)
        record[field] = value
        assert code in self.codes(record)
        assert "risk-acceptance-digest-mismatch" in self.codes(record)

    def test_record_for_another_boundary_is_rejected(self):
        record = copy.deepcopy(self.record)
        record["execution_boundary"]["git"]["hooks_disabled"] = True
        assert "risk-acceptance-boundary-mismatch" in self.codes(record)

    def test_malformed_record_is_rejected(self):
        record = copy.deepcopy(self.record)
        record["extra"] = 1
        assert self.codes(record) == ["risk-acceptance-invalid"]

    def test_record_for_isolated_boundary_is_unexpected(self):
        result = check(samples.initial_document(), risk_record=self.record)
        assert [e["code"] for e in result["errors"]] == ["risk-acceptance-unexpected"]

    def test_cli_flag_verifies_record(self, tmp_path):
        import json

        record_path = tmp_path / "record.json"
        record_path.write_text(json.dumps(self.record))
        document_path = tmp_path / "document.json"
        document_path.write_text(json.dumps(self.document))
        status, output, _ = run_cli("--initial", str(document_path), "--risk-acceptance", str(record_path))
        assert status == 0 and output["ok"] is True
        self.record["run_id"] = "1" * 32
        record_path.write_text(json.dumps(self.record))
        status, output, _ = run_cli("--initial", str(document_path), "--risk-acceptance", str(record_path))
        assert status == 1 and "risk-acceptance-run-mismatch" in {e["code"] for e in output["errors"]}


def test_autonomous_explicit_risk_needs_the_record():
    document, record = samples.explicit_risk_initial()
    manifest = {**document["initial_manifest"], "mode": "autonomous"}
    autonomous = samples.seal_initial(document["initial_snapshot"], manifest)
    result = check(autonomous)
    assert [(e["code"], e["path"]) for e in result["errors"]] == [
        ("risk-acceptance-record-missing", "/initial_snapshot/execution_boundary/risk_acceptance_sha256")
    ]
    assert check(autonomous, risk_record=record)["ok"] is True
    assert check(document)["ok"] is True  # approval-gated: the user approves the hash that binds the record
