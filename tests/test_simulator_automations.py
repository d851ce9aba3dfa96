"""The simulated Codex automation host: automation_update semantics, the files it
writes, its documented defects (each switchable), and heartbeats on the
simulated clock."""

from __future__ import annotations

import time
import tomllib
from datetime import timedelta

import pytest

from evaluator import policy
from evaluator.canonical import text_digest
from observe.registry import read_registry
from simulator.automations import KEY_ORDER, AutomationError, AutomationHost, Defects
from simulator.clock import SimClock

RULE = "FREQ=MINUTELY;INTERVAL=2"


@pytest.fixture
def clock():
    return SimClock()


def host_with(tmp_path, clock, **options) -> AutomationHost:
    return AutomationHost(tmp_path / "codex-home", clock, **options)


def heartbeat(**extra) -> dict:
    return {
        "mode": "create",
        "kind": "heartbeat",
        "name": "Loop widgets 7",
        "prompt": "Continue the loop.",
        "rrule": RULE,
        "model": "gpt-5.5",
        "reasoningEffort": "high",
        "executionEnvironment": "local",
        "status": "ACTIVE",
        "destination": "thread",
        **extra,
    }


def test_create_writes_the_keys_codex_writes_in_its_order(tmp_path, clock):
    host = host_with(tmp_path, clock)
    answer = host.automation_update(heartbeat(cwds=["/work/checkout"]))
    assert answer == {"automationId": "loop-widgets-7", "mode": "create"}

    path = tmp_path / "codex-home" / "automations" / "loop-widgets-7" / "automation.toml"
    text = path.read_text(encoding="utf-8")
    record = tomllib.loads(text)
    assert list(record) == [key for key in KEY_ORDER if key in record]
    millis = int(clock.now.timestamp() * 1000)
    assert record == {
        "version": 1,
        "id": "loop-widgets-7",
        "kind": "heartbeat",
        "name": "Loop widgets 7",
        "prompt": "Continue the loop.",
        "status": "ACTIVE",
        "rrule": RULE,
        "target_thread_id": host.current_thread_id,
        "model": "gpt-5.5",
        "reasoning_effort": "high",
        "execution_environment": "local",
        "cwds": ["/work/checkout"],
        "created_at": millis,
        "updated_at": millis,
    }
    observed = read_registry(tmp_path / "codex-home" / "automations")[0].record
    assert (observed["id"], observed["name"], observed["status"], observed["rrule"]) == (
        "loop-widgets-7",
        "Loop widgets 7",
        "ACTIVE",
        RULE,
    )
    assert observed["prompt_sha256"] == text_digest("Continue the loop.")


def test_a_cron_record_reads_cleanly_and_ids_stay_unique(tmp_path, clock):
    host = host_with(tmp_path, clock)
    call = {
        "mode": "create",
        "kind": "cron",
        "name": "Nightly",
        "prompt": "p",
        "rrule": "RRULE:FREQ=DAILY",
        "status": "ACTIVE",
    }
    assert host.automation_update(call)["automationId"] == "nightly"
    assert host.automation_update(call)["automationId"] == "nightly-2"
    records = [o.record for o in read_registry(host.root)]
    assert [(r["id"], r["problem"], r["rrule"]) for r in records] == [
        ("nightly", None, "FREQ=DAILY"),
        ("nightly-2", None, "FREQ=DAILY"),
    ]


def test_view_update_and_delete(tmp_path, clock):
    host = host_with(tmp_path, clock)
    host.automation_update(heartbeat())
    clock.advance(90)
    assert host.automation_update(
        {"mode": "update", "automationId": "loop-widgets-7", "status": "PAUSED", "prompt": "Stop."}
    ) == {"automationId": "loop-widgets-7", "mode": "update"}
    viewed = host.automation_update({"mode": "view", "automationId": "loop-widgets-7"})["automation"]
    assert (viewed["status"], viewed["prompt"], viewed["updated_at"] - viewed["created_at"]) == (
        "PAUSED",
        "Stop.",
        90_000,
    )
    assert [a["id"] for a in host.automation_update({"mode": "view"})["automations"]] == ["loop-widgets-7"]

    assert host.automation_update({"mode": "delete", "automationId": "loop-widgets-7"})["mode"] == "delete"
    assert not (host.root / "loop-widgets-7").exists()
    for mode in ("view", "update", "delete"):
        with pytest.raises(AutomationError, match="not found"):
            host.automation_update({"mode": mode, "automationId": "loop-widgets-7"})
    with pytest.raises(AutomationError):
        host.automation_update({"mode": "view", "automationId": "../escape"})
    with pytest.raises(AutomationError, match="Unsupported mode"):
        host.automation_update({"mode": "run_now"})


def test_defect_create_paused_is_saved_active_and_can_be_switched_off(tmp_path, clock):
    shipped = host_with(tmp_path / "a", clock)
    shipped.automation_update(heartbeat(status="PAUSED"))
    assert shipped.read("loop-widgets-7")["status"] == "ACTIVE"
    shipped.automation_update({"mode": "update", "automationId": "loop-widgets-7", "status": "PAUSED"})
    assert shipped.read("loop-widgets-7")["status"] == "PAUSED"  # update with PAUSED works

    fixed = host_with(tmp_path / "b", clock, defects=Defects(create_paused_saved_active=False))
    fixed.automation_update(heartbeat(status="PAUSED"))
    assert fixed.read("loop-widgets-7")["status"] == "PAUSED"


def test_defect_updating_a_heartbeat_drops_model_and_reasoning_effort(tmp_path, clock):
    shipped = host_with(tmp_path / "a", clock)
    shipped.automation_update(heartbeat())
    shipped.automation_update(
        {"mode": "update", "automationId": "loop-widgets-7", "model": "gpt-5.5", "reasoningEffort": "high"}
    )
    record = shipped.read("loop-widgets-7")
    assert "model" not in record and "reasoning_effort" not in record

    fixed = host_with(tmp_path / "b", clock, defects=Defects(update_drops_model=False))
    fixed.automation_update(heartbeat())
    fixed.automation_update({"mode": "update", "automationId": "loop-widgets-7", "prompt": "x"})
    assert (fixed.read("loop-widgets-7")["model"], fixed.read("loop-widgets-7")["reasoning_effort"]) == (
        "gpt-5.5",
        "high",
    )


def test_heartbeat_targets_missing_invented_and_refused(tmp_path, clock):
    host = host_with(tmp_path / "a", clock)
    with pytest.raises(AutomationError, match="Missing targetThreadId or destination=thread"):
        host.automation_update(heartbeat(destination=None))
    host.automation_update(heartbeat(destination=None, targetThreadId="thread"))  # accepted, as shipped
    assert host.read("loop-widgets-7")["target_thread_id"] == "thread"
    clock.advance(timedelta(minutes=10))
    assert host.wakeups == []  # and it never runs: no such thread

    strict = host_with(tmp_path / "b", clock, defects=Defects(accept_invented_thread_id=False))
    with pytest.raises(AutomationError, match="Unknown thread"):
        strict.automation_update(heartbeat(destination=None, targetThreadId="thread"))
    strict.automation_update(heartbeat(destination=None, targetThreadId=strict.current_thread_id))


def test_heartbeats_run_on_the_compressed_clock_with_the_simulated_now(tmp_path, clock):
    seen = []
    host = host_with(tmp_path, clock, on_wakeup=lambda record, now: seen.append((record["id"], now)))
    host.automation_update(heartbeat())
    created = clock.now

    started = time.perf_counter()
    clock.advance(timedelta(minutes=10, seconds=30))
    elapsed = time.perf_counter() - started

    assert [now - created for _, now in seen] == [timedelta(minutes=m) for m in (2, 4, 6, 8, 10)]
    assert {automation for automation, _ in seen} == {"loop-widgets-7"}
    assert elapsed < 5  # five two-minute intervals, no real waiting
    assert host.next_wakeup("loop-widgets-7") == created + timedelta(minutes=12)


def test_pausing_or_deleting_stops_wakeups_and_a_new_rule_takes_over(tmp_path, clock):
    seen = []
    host = host_with(tmp_path, clock, on_wakeup=lambda record, now: seen.append(now))
    host.automation_update(heartbeat())
    created = clock.now
    clock.advance(timedelta(minutes=3))
    host.automation_update({"mode": "update", "automationId": "loop-widgets-7", "status": "PAUSED"})
    clock.advance(timedelta(minutes=10))
    assert seen == [created + timedelta(minutes=2)]

    host.automation_update(
        {"mode": "update", "automationId": "loop-widgets-7", "status": "ACTIVE", "rrule": "FREQ=MINUTELY;INTERVAL=5"}
    )
    clock.advance(timedelta(minutes=5))
    assert seen[1:] == [
        created + timedelta(minutes=15)
    ]  # counted from creation: 15 is the first multiple of 5 after 13

    host.automation_update({"mode": "delete", "automationId": "loop-widgets-7"})
    clock.advance(timedelta(hours=1))
    assert len(seen) == 2


def test_a_wakeup_may_change_its_own_automation(tmp_path, clock):
    """The loop's own wakeup pauses the heartbeat it runs in (the bootstrap's first step)."""
    host = host_with(tmp_path, clock)
    host.on_wakeup = lambda record, now: host.automation_update(
        {"mode": "update", "automationId": record["id"], "status": "PAUSED"}
    )
    host.automation_update(heartbeat())
    clock.advance(timedelta(minutes=20))
    assert len(host.wakeups) == 1 and host.read("loop-widgets-7")["status"] == "PAUSED"


def test_the_loop_rule_is_the_policy_rule_and_bad_rules_are_refused(tmp_path, clock):
    host = host_with(tmp_path, clock)
    host.automation_update(heartbeat(rrule=policy.HEARTBEAT_RRULE))
    assert host.next_wakeup("loop-widgets-7") is not None
    with pytest.raises(AutomationError, match="Invalid rrule"):
        host.automation_update(heartbeat(name="Other", rrule="EVERY TWO MINUTES"))
