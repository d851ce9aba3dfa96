"""--prompt: the bootstrap checkpoint, its receipt, and the rendered automation prompt."""

from __future__ import annotations

import copy
import json

import pytest

from evaluator import markers, policy
from evaluator.canonical import canonical_text, parse_document, text_digest
from evaluator.checks import run_prompt, run_state
from tests.helpers import invalid_fixtures, load, run_cli, valid_fixtures
from tools import samples
from tools.mutations import mutations

VALID = valid_fixtures("prompt")
INVALID = invalid_fixtures("prompt")


def test_suite_sizes():
    assert {p.stem for p in VALID} >= {"new-pr", "reuse-pr", "no-commit-required"}
    assert len(INVALID) >= 30


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.stem)
def test_valid_prompt_document_is_prompt_ready(path):
    document = load(path)
    status, output, _ = run_cli("--prompt", str(path))
    assert status == 0
    assert output == {
        "ok": True,
        "check": "prompt",
        "result": "prompt-ready",
        "automation_key": markers.automation_key("github.com", "octo-org/hello-world", 42, samples.RUN_ID),
        "rendered_prompt": document["rendered_prompt"],
        "rendered_prompt_sha256": text_digest(document["rendered_prompt"]),
        "bootstrap_snapshot_sha256": document["bootstrap_snapshot_sha256"],
    }


@pytest.mark.parametrize("path, codes", INVALID, ids=lambda p: getattr(p, "stem", ""))
def test_invalid_prompt_document_is_rejected(path, codes):
    result = run_prompt(load(path))
    assert result["ok"] is False
    assert sorted({e["code"] for e in result["errors"]}) == codes
    assert path.stem.split("--")[0] in codes


def test_rendered_prompt_embeds_the_exact_checkpoint():
    document = load(valid_fixtures("prompt")[0])
    lines = document["rendered_prompt"].split("\n")
    assert len(lines) == 3 and not document["rendered_prompt"].endswith("\n")
    assert lines[0] == policy.AUTOMATION_PROMPT_TEMPLATE_V1.split("\n")[0]
    assert lines[1] == "Loop key: " + run_prompt(document)["automation_key"]
    prefix = "Bootstrap checkpoint JSON: "
    assert lines[2].startswith(prefix)
    embedded = parse_document(lines[2][len(prefix) :].encode("utf-8"))
    assert embedded == document["bootstrap_snapshot"]
    assert canonical_text(embedded) == lines[2][len(prefix) :]


def test_placeholder_text_inside_the_checkpoint_is_not_substituted_again():
    document = samples.prompt_document()
    boot = copy.deepcopy(document["bootstrap_snapshot"])
    boot["state"]["automations"][0]["directory"] = boot["state"]["automations"][0]["id"] = boot["state"][
        "owned_automation_id"
    ] = "{{AUTOMATION_KEY}}"
    sealed = samples.seal_prompt(document["initial_document"], boot)
    key_line, checkpoint_line = sealed["rendered_prompt"].split("\n")[1:]
    assert "{{" not in key_line
    assert checkpoint_line.count("{{AUTOMATION_KEY}}") == 3  # carried verbatim, never substituted
    assert parse_document(checkpoint_line.split(": ", 1)[1].encode()) == boot
    assert run_prompt(sealed)["ok"] is True


def test_first_wakeup_accepts_only_the_activated_prompt():
    document = samples.prompt_document()
    ready = run_prompt(document)
    state = copy.deepcopy(document["bootstrap_snapshot"]["state"])
    state.update(expected_prompt_sha256=ready["rendered_prompt_sha256"], wakeup_id=samples.WAKEUP_ID)
    record = state["automations"][0]
    record.update(status="ACTIVE", prompt_sha256=ready["rendered_prompt_sha256"])
    assert run_state(state, approved_hash=None, now=None)["action"] == "wait"
    for change, reason in (
        ({"status": "PAUSED"}, "automation-not-active"),
        ({"prompt_sha256": text_digest("inert")}, "automation-prompt-mismatch"),
        ({"rrule": "FREQ=MINUTELY;INTERVAL=1"}, "automation-schedule-mismatch"),
    ):
        drifted = copy.deepcopy(state)
        drifted["automations"][0].update(change)
        result = run_state(drifted, approved_hash=None, now=None)
        assert (result["action"], result["reasons"]) == ("state-inconsistency", [reason])


def test_every_mutation_of_a_prompt_document_is_rejected():
    document = load(valid_fixtures("prompt")[0])
    count = 0
    for description, mutated in mutations(document):
        assert run_prompt(mutated)["ok"] is False, description
        count += 1
    assert count > 500


# Fresh observations a bootstrap state may carry with any well-formed value:
# nothing the user approved or the receipt proves depends on them.
FREE_OBSERVATIONS = (
    "/state/observed_at",
    "/state/gates/",
    "/state/pr_is_draft",
    "/state/non_codex_rooted_threads",
    "/state/automations/0/prompt_sha256",
)


def test_every_resealed_mutation_of_the_bootstrap_snapshot_is_rejected_unless_free():
    # Re-sealing recomputes every digest and the rendering, so only the rules can catch it.
    document = samples.prompt_document()
    accepted = []
    for description, boot in mutations(document["bootstrap_snapshot"]):
        try:
            resealed = samples.seal_prompt(document["initial_document"], boot)
        except (KeyError, TypeError, AttributeError):
            resealed = {**document, "bootstrap_snapshot": boot}
        if run_prompt(resealed)["ok"]:
            accepted.append(description)
    assert accepted, "the free observations must stay free"
    for description in accepted:
        assert description.startswith("change ") and any(part in description for part in FREE_OBSERVATIONS), description


def test_cli_prompt_rejects_flags_that_do_not_apply(tmp_path):
    path = tmp_path / "prompt.json"
    path.write_text(json.dumps(samples.prompt_document()))
    assert run_cli("--prompt", str(path), "--approved-hash", "0" * 64)[0] == 2
    assert run_cli("--prompt", str(path), "--now", "2026-11-29T10:00:00Z")[0] == 2
