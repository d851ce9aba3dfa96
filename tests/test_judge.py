"""One judgement, one interpreter: the hands start the evaluator already isolated, so it never re-executes itself."""

from __future__ import annotations

import json
import subprocess

from act.edge import judge
from evaluator.canonical import canonical_bytes
from tests.helpers import FIXTURES, load


def test_the_evaluator_runs_in_the_interpreter_the_hands_start():
    argv = judge.command("initial")
    assert argv[1:3] == ["-I", "-B"]
    document = load(FIXTURES / "initial" / "valid" / "new-pr-branch-validate-commit-push.json")
    # -X importtime makes this interpreter report every import on standard error; a re-executed
    # interpreter would not carry the option, so the evaluator's own imports would be missing.
    traced = [argv[0], "-X", "importtime", *argv[1:]]
    completed = subprocess.run(traced, input=canonical_bytes(document), capture_output=True, timeout=120)
    assert completed.returncode == 0 and json.loads(completed.stdout)["ok"] is True
    imported = completed.stderr.decode()
    assert "evaluator.redact" in imported and "pydantic" in imported


def test_a_judgement_through_the_hands_is_the_evaluator_s_own_verdict():
    document = load(FIXTURES / "initial" / "valid" / "new-pr-branch-validate-commit-push.json")
    verdict = judge.evaluate("initial", document)
    accepted = judge.require_accepted(verdict, "the initial document")
    assert accepted.initial_plan_hash == verdict.output["initial_plan_hash"] == document["initial_plan_hash"]
    tampered = {**document, "initial_plan_hash": "0" * 64}
    assert judge.evaluate("initial", tampered).status == 1
