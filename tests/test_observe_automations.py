"""Reading the Codex automation registry and selecting a loop's own automations.

Every registry is built in tmp_path. Tests run as root, so an unreadable file
is simulated by what root cannot read either: a directory, a dangling symlink
or a FIFO under the name automation.toml.
"""

from __future__ import annotations

import copy
import json
import os
import signal
from pathlib import Path

import pytest

from evaluator import markers, policy
from evaluator.canonical import text_digest
from evaluator.checks import run_prompt, run_state
from observe.registry import (
    Observation,
    RegistryError,
    default_registry_root,
    owned_automations,
    read_automation,
    read_registry,
)
from tools import samples

RUN_ID = "0123456789abcdef0123456789abcdef"
KEY = markers.automation_key("github.com", "octo/widgets", 12, RUN_ID)
RECORD_KEYS = ["id", "directory", "name", "status", "rrule", "prompt_sha256", "readable", "problem"]


def rendered_prompt(key: str = KEY) -> str:
    return policy.AUTOMATION_PROMPT_TEMPLATE_V1.replace(policy.AUTOMATION_KEY_PLACEHOLDER, key).replace(
        policy.CHECKPOINT_PLACEHOLDER, '{"run_id":"' + RUN_ID + '"}'
    )


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a TOML basic string here


def write_automation(root: Path, directory: str, text: str | bytes | None = None, **fields: object) -> Path:
    folder = root / directory
    folder.mkdir(parents=True)
    if text is None:
        text = "".join(f"{name} = {toml_value(value)}\n" for name, value in fields.items())
    data = text.encode("utf-8") if isinstance(text, str) else text
    (folder / "automation.toml").write_bytes(data)
    return folder


def loop_fields(directory: str, **overrides: object) -> dict[str, object]:
    fields: dict[str, object] = {
        "version": 1,
        "id": directory,
        "name": KEY,
        "prompt": rendered_prompt(),
        "status": "PAUSED",
        "rrule": policy.HEARTBEAT_RRULE,
        "execution_environment": "local",
        "cwds": ["/work/checkout"],
        "created_at": 1781099457929,
        "updated_at": 1781710706120,
    }
    fields.update(overrides)
    return fields


def read_registry_records(root: Path) -> list[dict]:
    return [o.record for o in read_registry(root)]


def only(records: list[dict]) -> dict:
    assert len(records) == 1, records
    return records[0]


@pytest.fixture
def registry(tmp_path: Path) -> Path:
    root = tmp_path / "codex-home" / "automations"
    root.mkdir(parents=True)
    return root


# -- how many are owned -------------------------------------------------------


def test_empty_registry_owns_nothing(registry: Path) -> None:
    assert read_registry(registry) == []
    assert owned_automations(registry, KEY) == []


def test_one_owned_automation_gives_the_exact_record(registry: Path) -> None:
    write_automation(registry, "loop-stub", **loop_fields("loop-stub"))
    record = only(owned_automations(registry, KEY))
    assert list(record) == RECORD_KEYS
    assert record == {
        "id": "loop-stub",
        "directory": "loop-stub",
        "name": KEY,
        "status": "PAUSED",
        "rrule": policy.HEARTBEAT_RRULE,
        "prompt_sha256": text_digest(rendered_prompt()),
        "readable": True,
        "problem": None,
    }


def test_two_owned_automations_by_name_and_by_prompt_sorted_by_id(registry: Path) -> None:
    write_automation(registry, "zeta", **loop_fields("zeta"))
    write_automation(registry, "alpha", **loop_fields("alpha", name="PR loop (renamed by hand)", status="ACTIVE"))
    records = owned_automations(registry, KEY)
    assert [r["id"] for r in records] == ["alpha", "zeta"]
    assert [r["name"] for r in records] == ["PR loop (renamed by hand)", KEY]


def test_inert_stub_is_owned_by_its_name_alone(registry: Path) -> None:
    # At bootstrap the PAUSED stub carries the key as its name before its prompt is rendered.
    write_automation(registry, "stub", **loop_fields("stub", prompt="Inert placeholder."))
    record = only(owned_automations(registry, KEY))
    assert (record["id"], record["prompt_sha256"]) == ("stub", text_digest("Inert placeholder."))


def test_a_clean_record_is_not_owned_by_a_stray_mention(registry: Path) -> None:
    # Raw bytes decide only for records that could not be read cleanly.
    fields = loop_fields("other", name="Other", prompt="Other work.", cwds=[f"/tmp/{KEY}"])
    write_automation(registry, "other", **fields)
    assert only(read_registry_records(registry))["problem"] is None
    assert owned_automations(registry, KEY) == []


def test_unrelated_automations_are_not_selected(registry: Path) -> None:
    other_run = markers.automation_key("github.com", "octo/widgets", 12, "f" * 32)
    pr_1 = markers.automation_key("github.com", "octo/widgets", 1, RUN_ID)  # a prefix of nothing of ours
    write_automation(registry, "daily-scan", **loop_fields("daily-scan", name="Daily scan", prompt="Scan the repo."))
    write_automation(
        registry, "other-loop", **loop_fields("other-loop", name=other_run, prompt=rendered_prompt(other_run))
    )
    write_automation(registry, "ours", **loop_fields("ours"))
    assert [r["id"] for r in owned_automations(registry, KEY)] == ["ours"]
    assert owned_automations(registry, pr_1) == []
    assert [r["id"] for r in read_registry_records(registry)] == ["daily-scan", "other-loop", "ours"]


# -- values recorded as they are ----------------------------------------------


def test_paused_and_active_status_recorded_as_is(registry: Path) -> None:
    write_automation(registry, "a-paused", **loop_fields("a-paused"))
    write_automation(registry, "b-active", **loop_fields("b-active", status="ACTIVE"))
    write_automation(registry, "c-odd", **loop_fields("c-odd", status="paused"))
    assert [r["status"] for r in owned_automations(registry, KEY)] == ["PAUSED", "ACTIVE", "paused"]
    assert all(r["problem"] is None for r in owned_automations(registry, KEY))


def test_another_rrule_recorded_without_only_the_property_name(registry: Path) -> None:
    write_automation(registry, "loop", **loop_fields("loop", rrule="RRULE:FREQ=MINUTELY;INTERVAL=5"))
    record = only(owned_automations(registry, KEY))
    assert record["rrule"] == "FREQ=MINUTELY;INTERVAL=5"
    assert record["problem"] is None


def test_prompt_is_digested_never_carried(registry: Path) -> None:
    prompt = rendered_prompt() + "\nZürich ✓"  # non-ASCII: the digest is of the exact UTF-8 bytes
    write_automation(registry, "loop", **loop_fields("loop", prompt=prompt))
    record = only(owned_automations(registry, KEY))
    assert record["prompt_sha256"] == text_digest(prompt)
    assert record["prompt_sha256"] != text_digest(rendered_prompt())
    assert "Zürich" not in json.dumps(record, ensure_ascii=False)


def test_desktop_app_fields_are_known(registry: Path) -> None:
    write_automation(
        registry,
        "loop",
        **loop_fields("loop", kind="cron", model="gpt-5.4", reasoning_effort="medium"),
    )
    observation = only(read_registry(registry))
    assert observation.record["problem"] is None
    assert observation.unknown_fields == ()


def test_toml_datetime_timestamps_are_tolerated(registry: Path) -> None:
    text = "".join(f"{k} = {toml_value(v)}\n" for k, v in loop_fields("loop").items() if k != "created_at")
    write_automation(registry, "loop", text + "created_at = 2026-05-01T10:00:00Z\n")
    assert only(owned_automations(registry, KEY))["problem"] is None


# -- problems are observations ------------------------------------------------


def test_corrupt_toml_that_mentions_the_key_is_owned_drift(registry: Path) -> None:
    write_automation(registry, "broken", f'name = "{KEY}"\nprompt = """unterminated\n')
    record = only(owned_automations(registry, KEY))
    assert record == {
        "id": "broken",
        "directory": "broken",
        "name": None,
        "status": None,
        "rrule": None,
        "prompt_sha256": None,
        "readable": False,
        "problem": "automation-toml-malformed",
    }


def test_corrupt_toml_without_the_key_is_observed_but_not_owned(registry: Path) -> None:
    write_automation(registry, "someone-else", "name = = 'x'\n")
    assert only(read_registry_records(registry))["problem"] == "automation-toml-malformed"
    assert owned_automations(registry, KEY) == []


def test_invalid_utf8_is_malformed(registry: Path) -> None:
    write_automation(registry, "latin1", f'name = "{KEY}"\nstatus = "caf\xe9"\n'.encode("latin-1"))
    record = only(owned_automations(registry, KEY))
    assert (record["readable"], record["problem"]) == (False, "automation-toml-malformed")


def test_deeply_nested_toml_is_malformed_not_a_crash(registry: Path) -> None:
    write_automation(registry, "deep", f'name = "{KEY}"\nx = ' + "[" * 100_000 + "]" * 100_000 + "\n")
    assert only(owned_automations(registry, KEY))["problem"] == "automation-toml-malformed"


def test_directory_in_place_of_the_file_is_unreadable(registry: Path) -> None:
    (registry / "loop" / "automation.toml").mkdir(parents=True)
    record = only(read_registry_records(registry))
    assert (record["id"], record["readable"], record["problem"]) == ("loop", False, "automation-toml-unreadable")
    # No bytes to read, so it cannot be attributed to this loop (see the docs).
    assert owned_automations(registry, KEY) == []


def test_dangling_symlink_is_unreadable(registry: Path) -> None:
    (registry / "loop").mkdir()
    (registry / "loop" / "automation.toml").symlink_to(registry / "nowhere.toml")
    assert only(read_registry_records(registry))["problem"] == "automation-toml-unreadable"


def test_fifo_is_unreadable_and_does_not_hang(registry: Path) -> None:
    (registry / "loop").mkdir()
    os.mkfifo(registry / "loop" / "automation.toml")

    def hung(signum: int, frame: object) -> None:
        raise AssertionError("reading a FIFO blocked the wakeup")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(5)
    try:
        assert only(read_registry_records(registry))["problem"] == "automation-toml-unreadable"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def test_oversized_file_is_not_parsed(registry: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(policy, "MAX_DOCUMENT_BYTES", 128)
    write_automation(registry, "loop", f'name = "{KEY}"\n' + "# padding\n" * 20)
    record = only(owned_automations(registry, KEY))  # the key is within the first 128 bytes
    assert (record["readable"], record["problem"]) == (False, "automation-toml-too-large")


def test_id_mismatch_is_flagged_and_both_ids_kept(registry: Path) -> None:
    write_automation(registry, "folder-id", **loop_fields("declared-id"))
    record = only(owned_automations(registry, KEY))
    assert (record["id"], record["directory"]) == ("declared-id", "folder-id")
    assert record["problem"] == "automation-id-mismatch"
    assert record["readable"] is True


def test_records_sort_by_declared_id_not_folder(registry: Path) -> None:
    write_automation(registry, "a-folder", **loop_fields("zz-declared"))
    write_automation(registry, "b-folder", **loop_fields("b-folder"))
    assert [r["id"] for r in owned_automations(registry, KEY)] == ["b-folder", "zz-declared"]


def test_wrong_type_nulls_the_field_and_falls_back_to_bytes(registry: Path) -> None:
    write_automation(registry, "loop", **loop_fields("loop", prompt=42, status=True))
    record = only(owned_automations(registry, KEY))  # owned by name; the prompt is unusable
    assert record["problem"] == "automation-field-wrong-type"
    assert (record["status"], record["prompt_sha256"], record["name"]) == (None, None, KEY)


def test_wrong_type_outranks_id_mismatch(registry: Path) -> None:
    write_automation(registry, "folder", **loop_fields("declared", version=True))
    assert only(owned_automations(registry, KEY))["problem"] == "automation-field-wrong-type"


def test_wrong_typed_name_still_owned_through_raw_bytes(registry: Path) -> None:
    write_automation(registry, "loop", f'id = "loop"\nname = ["{KEY}"]\nprompt = 1\nstatus = "PAUSED"\nrrule = "x"\n')
    record = only(owned_automations(registry, KEY))
    assert (record["name"], record["problem"]) == (None, "automation-field-wrong-type")


def test_missing_required_field(registry: Path) -> None:
    fields = loop_fields("loop")
    del fields["rrule"]
    write_automation(registry, "loop", **fields)
    record = only(owned_automations(registry, KEY))
    assert (record["rrule"], record["problem"]) == (None, "automation-field-missing")


def test_unknown_fields_are_tolerated_and_named(registry: Path) -> None:
    text = "".join(f"{k} = {toml_value(v)}\n" for k, v in loop_fields("loop").items())
    write_automation(registry, "loop", text + 'color = "red"\n[extra]\nx = 1\n')
    observation = only(read_registry(registry))
    assert observation.unknown_fields == ("color", "extra")
    assert observation.record["problem"] == "automation-unknown-fields"
    assert (observation.record["status"], observation.record["rrule"]) == ("PAUSED", policy.HEARTBEAT_RRULE)
    assert only(owned_automations(registry, KEY))["id"] == "loop"


# -- the registry itself ------------------------------------------------------


def test_folders_without_a_file_and_stray_files_are_skipped(registry: Path) -> None:
    (registry / "empty-dir").mkdir()
    (registry / ".DS_Store").write_bytes(b"\0")
    write_automation(registry, "loop", **loop_fields("loop"))
    assert [r["id"] for r in read_registry_records(registry)] == ["loop"]
    assert read_automation(registry / "empty-dir") is None


def test_missing_registry_is_an_error_not_zero_automations(tmp_path: Path) -> None:
    with pytest.raises(RegistryError, match="cannot list"):
        owned_automations(tmp_path / "absent", KEY)


@pytest.mark.parametrize(
    "bad_key",
    [
        "",
        "github-codex-pr-loop",
        f"github-codex-pr-loop:github.com/octo/widgets#12@{RUN_ID[:-1]}",
        KEY.upper(),
        KEY + "\n",
    ],
)
def test_a_key_that_is_not_canonical_is_refused(registry: Path, bad_key: str) -> None:
    write_automation(registry, "loop", **loop_fields("loop"))
    with pytest.raises(ValueError, match="not a canonical loop key"):
        owned_automations(registry, bad_key)


def test_default_registry_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert default_registry_root({"CODEX_HOME": str(tmp_path)}) == tmp_path / "automations"
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_registry_root({}) == tmp_path / "home" / ".codex" / "automations"
    assert default_registry_root({"CODEX_HOME": ""}) == tmp_path / "home" / ".codex" / "automations"


# -- the schedule: read with python-dateutil, compared by occurrences -----------

# Spellings of the heartbeat's cadence: the same occurrences from the anchor on.
HEARTBEAT_SPELLINGS = [
    "INTERVAL=2;FREQ=MINUTELY",
    "RRULE:FREQ=MINUTELY;INTERVAL=2",
    "RRULE:INTERVAL=2;FREQ=MINUTELY",
    "rrule:freq=minutely;interval=2",
    "FREQ=MINUTELY;INTERVAL=2;BYSECOND=0",
    "FREQ=SECONDLY;INTERVAL=120",
    " FREQ=MINUTELY;INTERVAL=2\n",
]
# Readable rules with another cadence, or one that may part from the heartbeat
# after the window (an end, a month left out), or more than one rule line.
OTHER_CADENCES = [
    "FREQ=MINUTELY;INTERVAL=1",
    "FREQ=MINUTELY;INTERVAL=0",
    "FREQ=MINUTELY;INTERVAL=3",
    "FREQ=MINUTELY;INTERVAL=2;BYSECOND=30",
    "FREQ=MINUTELY;INTERVAL=2;BYDAY=MO,TU,WE,TH,FR,SA",
    "FREQ=MINUTELY;INTERVAL=2;BYHOUR=0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22",
    "FREQ=MINUTELY;INTERVAL=2;COUNT=100000",
    "FREQ=MINUTELY;INTERVAL=2;UNTIL=20991231T000000",
    "FREQ=MINUTELY;INTERVAL=2;BYMONTH=1,2,3,4,5,6,7,8,9,10,11",
    "FREQ=DAILY",
    "FREQ=SECONDLY;BYDAY=SU;BYHOUR=23;BYMINUTE=59",
    "DTSTART:20010101T000000\nRRULE:FREQ=MINUTELY;INTERVAL=2",
    "FREQ=MINUTELY;INTERVAL=2\nEXDATE:20010101T000200",
    # dateutil also takes a DTSTART before the rule on the same line, split by
    # any whitespace: the rule's own parts must still be seen (an end, a month).
    "DTSTART:20010101T000000 RRULE:UNTIL=20010120T000000;FREQ=MINUTELY;INTERVAL=2",
    "DTSTART:20010101T000000\tRRULE:COUNT=10000;FREQ=MINUTELY;INTERVAL=2",
    "DTSTART:20010101T000000\x0cRRULE:BYMONTH=1;FREQ=MINUTELY;INTERVAL=2",
]
UNREADABLE_RULES = [
    "",
    "x",
    "FREQ=MINUTELY;INTERVAL=two",
    "FREQ=FORTNIGHTLY",
    "FREQ=MINUTELY;INTERVAL=2;TZID=Europe/Paris",
    "FREQ=MINUTELY;INTERVAL=2;",
    "RRULE:RRULE:FREQ=MINUTELY;INTERVAL=2",
    "FREQ=MINUTELY;INTERVAL=2;BYHOUR=25",
    "FREQ=MINUTELY;" + "INTERVAL=2;" * 100,
]


def first_wakeup_state(**record: object) -> dict:
    """A first-wakeup state the evaluator lets go on, its one automation record changed by ``record``."""
    document = samples.prompt_document()
    rendered_sha256 = run_prompt(document)["rendered_prompt_sha256"]
    state = copy.deepcopy(document["bootstrap_snapshot"]["state"])
    state.update(expected_prompt_sha256=rendered_sha256, wakeup_id=samples.WAKEUP_ID)
    state["automations"][0].update(status="ACTIVE", prompt_sha256=rendered_sha256, **record)
    return state


def read_rule(registry: Path, rrule: str) -> Observation:
    write_automation(registry, "loop", **loop_fields("loop", rrule=rrule))
    return only(read_registry(registry))


@pytest.mark.parametrize("rrule", HEARTBEAT_SPELLINGS)
def test_every_spelling_of_the_heartbeat_cadence_is_the_heartbeat(registry: Path, rrule: str) -> None:
    observation = read_rule(registry, rrule)
    assert (observation.record["rrule"], observation.record["problem"]) == (policy.HEARTBEAT_RRULE, None)
    # And the evaluator, comparing the record with its policy, lets the wakeup go on.
    result = run_state(first_wakeup_state(rrule=observation.record["rrule"]), approved_hash=None, now=None)
    assert (result["action"], result["reasons"]) == ("wait", ["awaiting-codex-response"])


@pytest.mark.parametrize("rrule", OTHER_CADENCES)
def test_another_cadence_is_reported_as_written_and_refused(registry: Path, rrule: str) -> None:
    observation = read_rule(registry, rrule)
    assert (observation.record["rrule"], observation.record["problem"]) == (rrule.removeprefix("RRULE:"), None)
    result = run_state(first_wakeup_state(rrule=observation.record["rrule"]), approved_hash=None, now=None)
    assert (result["action"], result["reasons"]) == ("state-inconsistency", ["automation-schedule-mismatch"])


@pytest.mark.parametrize("rrule", UNREADABLE_RULES)
def test_a_rule_dateutil_cannot_read_is_a_structured_problem(registry: Path, rrule: str) -> None:
    observation = read_rule(registry, rrule)
    assert (observation.record["rrule"], observation.record["problem"]) == (None, "automation-rrule-invalid")
    assert observation.record["readable"] is True  # the file is fine; the rule in it is not
    assert observation.problem is not None
    assert (observation.problem.code, observation.problem.path) == ("automation-rrule-invalid", "/rrule")
    assert only(owned_automations(registry, KEY))["problem"] == "automation-rrule-invalid"
    state = first_wakeup_state(rrule=None, problem="automation-rrule-invalid")
    result = run_state(state, approved_hash=None, now=None)
    assert (result["action"], result["reasons"]) == ("state-inconsistency", ["automation-unreadable"])


def test_an_unreadable_rule_ranks_after_the_file_s_structure_and_before_unknown_fields(registry: Path) -> None:
    write_automation(registry, "a", **loop_fields("a-declared", rrule="x"))
    write_automation(registry, "b", **loop_fields("b", rrule="x", color="red"))
    assert [o.record["problem"] for o in read_registry(registry)] == [
        "automation-id-mismatch",
        "automation-rrule-invalid",
    ]


def test_every_problem_is_explained_with_a_pointer(registry: Path) -> None:
    write_automation(registry, "a", **loop_fields("a", status=True))
    write_automation(registry, "b", **{k: v for k, v in loop_fields("b").items() if k != "prompt"})
    write_automation(registry, "c", **loop_fields("c", **{'"a/b"': 1}))
    write_automation(registry, "d", "not toml [")
    write_automation(registry, "e", **loop_fields("e"))
    problems = [o.problem for o in read_registry(registry)]
    assert [(e.code, e.path) if e else None for e in problems] == [
        ("automation-field-wrong-type", "/status"),
        ("automation-field-missing", "/prompt"),
        ("automation-unknown-fields", "/a~1b"),
        ("automation-toml-malformed", ""),
        None,
    ]
    assert all(e.message for e in problems if e)


def test_real_heartbeat_records_with_every_key_codex_writes_are_owned_and_clean(registry: Path) -> None:
    # A heartbeat as Codex saves it: every key it writes, target_thread_id included.
    heartbeat = loop_fields(
        "github-codex-pr-loop-octo-widgets-12",
        status="ACTIVE",
        rrule="RRULE:" + policy.HEARTBEAT_RRULE,
        kind="heartbeat",
        model="gpt-5.4",
        reasoning_effort="high",
        target_thread_id="019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b",
    )
    assert set(heartbeat) == {
        "version",
        "id",
        "kind",
        "name",
        "prompt",
        "status",
        "rrule",
        "model",
        "reasoning_effort",
        "execution_environment",
        "cwds",
        "created_at",
        "updated_at",
        "target_thread_id",
    }
    write_automation(registry, "github-codex-pr-loop-octo-widgets-12", **heartbeat)
    # The same stub as the create call describes it, with destination = "thread".
    write_automation(registry, "stub-thread", **loop_fields("stub-thread", kind="heartbeat", destination="thread"))
    observations = read_registry(registry)
    assert [o.unknown_fields for o in observations] == [(), ()]
    records = owned_automations(registry, KEY)
    assert [r["id"] for r in records] == ["github-codex-pr-loop-octo-widgets-12", "stub-thread"]
    assert all(r["problem"] is None and r["readable"] for r in records)
    assert records[0]["rrule"] == policy.HEARTBEAT_RRULE and records[0]["status"] == "ACTIVE"


@pytest.mark.parametrize("field", ["target_thread_id", "destination"])
def test_heartbeat_fields_must_be_strings(registry: Path, field: str) -> None:
    write_automation(registry, "loop", **loop_fields("loop", **{field: 7}))
    assert only(owned_automations(registry, KEY))["problem"] == "automation-field-wrong-type"
