"""Explicit risk acceptance: where the isolated form cannot hold, the person accepts exactly what is lost.

Two real ways a machine cannot give the isolated form: an active clean
filter in the checkout (Git LFS's kind; here ``cat``), and no
``/usr/bin/unshare`` (hidden by a bind mount in a private mount namespace,
so the command under test runs on a machine that truly lacks it). In each,
``init`` refuses before any plan and names the exact ``--accept-risk``; with
it, the plan binds an acceptance record the hands build, keep and show, the
evaluator verifies that record at every judgement (an autonomous plan is
refused without it), and later plans stay within what was accepted.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from act import risk
from act.core import statedir
from act.text import summary as summaries
from evaluator.canonical import digest
from simulator.fakegithub import BODIES, USERS, at
from tests import checkout_world
from tests.executor_stack import HEAD_BRANCH, TOKEN, Stack, git, init_args, start
from tests.test_approval_summary import check
from tests.test_hands_loop import bootstrap, loop

ROOT = Path(__file__).resolve().parent.parent
LOOP = ROOT / "scripts" / "loop.py"
EVALUATOR = ROOT / "scripts" / "evaluate_state.py"
FILTER_LOSSES = "checkout-only-filesystem,minimal-environment,network-isolation,no-active-clean-filters"
NAMESPACE_LOSSES = "checkout-only-filesystem,minimal-environment,network-isolation"


def activate_a_clean_filter(checkout: Path) -> None:
    """A clean filter on every Python file, as Git LFS sets one up (the driver here is a harmless ``cat``)."""
    git(checkout, "config", "filter.lfs.clean", "cat")
    (checkout / ".git" / "info").mkdir(exist_ok=True)
    (checkout / ".git" / "info" / "attributes").write_text("*.py filter=lfs\n")


@pytest.fixture
def stack(tmp_path, monkeypatch):
    made = start(tmp_path, monkeypatch)
    yield made
    made.stop()


def untouched(stack: Stack) -> tuple[str, str, list[Any]]:
    refs = git(stack.checkout, "for-each-ref", "--format=%(refname) %(objectname)")
    return refs, git(stack.checkout, "status", "--porcelain=v2"), stack.pulls()


def test_an_acceptance_where_the_isolated_form_holds_is_refused(stack, capsys):
    refused = stack.loop(capsys, *init_args(stack, "--accept-risk", NAMESPACE_LOSSES), status=1)
    assert refused["errors"][0]["code"] == "risk-acceptance-not-needed"
    assert refused["errors"][0]["path"] == "/accept_risk"


def test_an_unknown_guarantee_is_a_usage_error(stack, capsys):
    refused = stack.loop(capsys, *init_args(stack, "--accept-risk", "network-isolation,sandboxing"), status=2)
    assert refused["errors"][0]["code"] == "usage-error" and "'sandboxing'" in refused["errors"][0]["message"]


def test_an_active_clean_filter_is_refused_at_init_naming_the_exact_acceptance(stack, capsys, tmp_path):
    activate_a_clean_filter(stack.checkout)
    before = untouched(stack)
    state_dir = tmp_path / "this-loop"
    refused = stack.loop(capsys, *init_args(stack, "--state-dir", str(state_dir)), status=1)
    (error,) = refused["errors"]
    assert error["code"] == "git-isolation-unavailable"
    assert f"--accept-risk {FILTER_LOSSES}" in error["message"] and "Git LFS" in error["message"]
    assert "approval_summary" not in refused and not state_dir.exists() and untouched(stack) == before
    # Naming less (or more) than is lost is no acceptance.
    short = stack.loop(capsys, *init_args(stack, "--accept-risk", NAMESPACE_LOSSES), status=1)
    assert short["errors"][0]["code"] == "risk-acceptance-mismatch"
    assert f"--accept-risk {FILTER_LOSSES}" in short["errors"][0]["message"]
    assert not state_dir.exists() and untouched(stack) == before


def test_an_accepted_plan_binds_keeps_and_shows_its_record_and_runs(stack, capsys):
    activate_a_clean_filter(stack.checkout)
    made = stack.loop(capsys, *init_args(stack, "--accept-risk", FILTER_LOSSES))  # autonomous
    directory = statedir.StateDir(Path(made["state_dir"]))
    document = directory.read(statedir.INITIAL)
    boundary = document["initial_snapshot"]["execution_boundary"]
    assert boundary["isolation"] == "explicit-risk-acceptance"
    assert boundary["git"]["active_clean_filters"] == ["lfs"]
    record = directory.read(f"{risk.RECORDS}/{boundary['risk_acceptance_sha256']}.json")
    assert digest(record) == boundary["risk_acceptance_sha256"]
    assert record["unavailable_guarantees"] == FILTER_LOSSES.split(",")
    assert record["commands"] == document["initial_snapshot"]["commands"] != []
    assert record["run_id"] == made["run_id"]

    shown = made["approval_summary"]
    assert shown["risk_acceptance_record"] == record
    assert any("reach the network" in line for line in shown["risk_accepted"])
    assert any(line.startswith("no-active-clean-filters: ") for line in shown["risk_accepted"])
    check(shown, document)  # every item, the record and its words included, is what the hash covers
    assert f"sha256 {boundary['risk_acceptance_sha256']}" in summaries.text(shown)

    # The evaluator verifies the very record: a changed one is refused.
    kept = directory.file(f"{risk.RECORDS}/{boundary['risk_acceptance_sha256']}.json")
    assert evaluate(directory.file(statedir.INITIAL), kept)["ok"] is True
    forged = kept.parent / "forged.json"
    forged.write_text(json.dumps({**record, "unavailable_guarantees": ["network-isolation"]}))
    codes = {e["code"] for e in evaluate(directory.file(statedir.INITIAL), forged)["errors"]}
    assert "risk-acceptance-digest-mismatch" in codes

    result = stack.loop(capsys, "execute", "--state-dir", made["state_dir"])
    assert "run-validation" in [p["operation"] for p in result["performed"]]
    (pull,) = stack.pulls()
    assert pull["head"]["ref"] == HEAD_BRANCH and stack.remote_tip(HEAD_BRANCH) is not None


def test_the_rebuilt_initial_plan_makes_the_same_record_from_the_same_inputs(stack, capsys):
    activate_a_clean_filter(stack.checkout)
    made = stack.loop(capsys, *init_args(stack, "--accept-risk", FILTER_LOSSES))
    directory = statedir.StateDir(Path(made["state_dir"]))
    shutil.rmtree(directory.file(risk.RECORDS))
    # execute rebuilds the plan, its record included, and the evaluator verifies that record.
    result = stack.loop(capsys, "execute", "--state-dir", made["state_dir"], "--one")
    assert [p["operation"] for p in result["performed"]] == ["fetch-base"]


def test_a_checkout_that_changed_what_is_lost_is_a_changed_plan(stack, capsys):
    made = stack.loop(capsys, *init_args(stack, "--accept-risk", NAMESPACE_LOSSES), status=1)
    assert made["errors"][0]["code"] == "risk-acceptance-not-needed"
    activate_a_clean_filter(stack.checkout)
    made = stack.loop(capsys, *init_args(stack, "--accept-risk", FILTER_LOSSES))
    (stack.checkout / ".git" / "info" / "attributes").write_text("")  # the filter is no longer active
    before = untouched(stack)
    refused = stack.loop(capsys, "execute", "--state-dir", made["state_dir"], status=1)
    assert refused["errors"][0]["code"] == "plan-changed"
    assert untouched(stack) == before and stack.remote_tip(HEAD_BRANCH) is None


def evaluate(document: Path, record: Path) -> dict[str, Any]:
    completed = subprocess.run(
        [sys.executable, str(EVALUATOR), "--initial", str(document), "--risk-acceptance", str(record)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    return json.loads(completed.stdout)


# --- a machine without /usr/bin/unshare -------------------------------------------------------


def without_unshare(argv: list[str]) -> list[str]:
    """``argv`` in a private mount namespace where /usr/bin/unshare is an empty character device, not a program."""
    private = ["unshare", "--mount"] + ([] if os.geteuid() == 0 else ["--map-root-user"])
    return [*private, "sh", "-c", 'mount --bind /dev/null /usr/bin/unshare && exec "$@"', "sh", *argv]


def loop_without_unshare(stack: Stack, *args: str, status: int = 0) -> dict[str, Any]:
    argv = without_unshare([sys.executable, str(LOOP), *args, *stack.network_flags()])
    completed = subprocess.run(argv, capture_output=True, text=True, timeout=600)
    lines = completed.stdout.splitlines()
    assert len(lines) == 1, completed.stdout + completed.stderr
    assert TOKEN not in completed.stdout + completed.stderr
    assert completed.returncode == status, lines[0]
    return json.loads(lines[0])


def can_hide_unshare() -> bool:
    if not os.path.isfile("/usr/bin/unshare"):
        return True  # nothing to hide: this machine already lacks it
    probe = subprocess.run(without_unshare(["test", "!", "-f", "/usr/bin/unshare"]), capture_output=True)
    return probe.returncode == 0


needs_a_mount_namespace = pytest.mark.skipif(
    not can_hide_unshare(), reason="this machine can make no private mount namespace to hide /usr/bin/unshare in"
)


@needs_a_mount_namespace
def test_without_unshare_init_refuses_then_the_accepted_plan_runs_its_validation(stack, tmp_path):
    before = untouched(stack)
    state_dir = tmp_path / "this-loop"
    refused = loop_without_unshare(stack, *init_args(stack, "--state-dir", str(state_dir))[:], status=1)
    (error,) = refused["errors"]
    assert (error["code"], error["path"]) == ("isolation-unavailable", "/commands")
    assert f"--accept-risk {NAMESPACE_LOSSES}" in error["message"]
    assert not state_dir.exists() and untouched(stack) == before

    made = loop_without_unshare(
        stack, *init_args(stack, "--state-dir", str(state_dir), "--accept-risk", NAMESPACE_LOSSES)
    )
    assert made["approval_summary"]["execution"]["isolation"] == "explicit-risk-acceptance"
    assert made["approval_summary"]["risk_acceptance_record"]["unavailable_guarantees"] == NAMESPACE_LOSSES.split(",")
    result = loop_without_unshare(stack, "execute", "--state-dir", str(state_dir))
    assert "run-validation" in [p["operation"] for p in result["performed"]]
    assert len(stack.pulls()) == 1
    kept = sorted((state_dir / "validation").rglob("*"))
    assert kept, "the validation's output is kept"


# --- later rounds: the same acceptance, never more ----------------------------------------------


@pytest.fixture
def world(tmp_path, fake, monkeypatch):
    return checkout_world.build(tmp_path, fake, monkeypatch)


def findings_on(world: dict[str, Any], head: str) -> None:
    from simulator.fakegithub import codex_body

    codex = USERS["codex_bot"]
    world["fake"].add_review(codex, codex_body("findings_review", head), "COMMENTED", head, at(300))
    world["fake"].add_thread(codex, BODIES["finding_comment_p1"], at(301), path="src/app.py", line=1)


@pytest.mark.parametrize("mode", ["approval-gated", "autonomous"])
def test_a_remediation_plan_stays_within_the_acceptance_and_the_evaluator_verifies_it(capsys, world, mode):
    activate_a_clean_filter(world["repo"])
    live = bootstrap(capsys, world, mode, "--accept-risk", FILTER_LOSSES)
    where, key, directory = live["where"], live["key"], live["directory"]
    findings_on(world, live["head1"])
    woken = loop(capsys, world, "wakeup", "--observed-at", at(360), "--automation-key", key)
    assert woken["action"] == "plan-remediation"

    other = json.dumps(["/usr/bin/git", "status"])
    refused = loop(capsys, world, "plan-remediation", *where, "--path", "src/app.py", "--command", other, status=1)
    assert refused["errors"][0]["code"] == "risk-acceptance-exceeded"

    planned = loop(capsys, world, "plan-remediation", *where, "--path", "src/app.py")
    manifest = directory.read(statedir.STATE)["remediation_manifest"]
    bound = manifest["execution"]["risk_acceptance_sha256"]
    assert manifest["execution"]["isolation"] == "explicit-risk-acceptance"
    record = directory.read(f"{risk.RECORDS}/{bound}.json")
    assert record["commands"] == manifest["commands"] and digest(record) == bound
    assert planned["approval_summary"]["risk_acceptance_record"] == record
    check(planned["approval_summary"], manifest)
    initial_record = live["init"]["approval_summary"]["risk_acceptance_record"]
    assert record["accepted_at"] == initial_record["accepted_at"]  # the person's one acceptance
    if mode == "autonomous":  # nobody approves: the evaluator passed it only by verifying the record
        assert planned["action"] == "claim-plan"
        return
    assert planned["action"] == "await-approval"
    loop(capsys, world, "approve", *where, "--hash", planned["plan_hash"])
    again = loop(capsys, world, "wakeup", "--observed-at", at(420), "--automation-key", key)
    assert again["action"] == "plan-remediation"
    rebuilt = loop(capsys, world, "plan-remediation", *where, "--reuse-pending")
    assert (rebuilt["plan_hash"], rebuilt["action"]) == (planned["plan_hash"], "claim-plan")


def test_a_loop_without_an_acceptance_cannot_plan_a_fix_in_the_explicit_form(capsys, world):
    live = bootstrap(capsys, world, "approval-gated")
    activate_a_clean_filter(world["repo"])  # after init: nobody accepted it
    findings_on(world, live["head1"])
    loop(capsys, world, "wakeup", "--observed-at", at(360), "--automation-key", live["key"])
    refused = loop(capsys, world, "plan-remediation", *live["where"], "--path", "src/app.py", status=1)
    assert refused["errors"][0]["code"] == "git-isolation-unavailable"
    assert "accepted no risk" in refused["errors"][0]["message"]
