"""A simulated Codex automation host: the ``automation_update`` tool and the heartbeat clock.

``AutomationHost.automation_update(call)`` takes the tool's arguments as the
agent sends them (``mode`` ``create``/``view``/``update``/``delete``, camelCase
fields) and writes what Codex writes: ``$CODEX_HOME/automations/<id>/automation.toml``
with the keys ``version``, ``id``, ``kind``, ``name``, ``prompt``, ``status``,
``rrule``, ``target_thread_id`` (heartbeats), ``model``, ``reasoning_effort``,
``execution_environment``, ``cwds``, ``created_at`` and ``updated_at`` (epoch
milliseconds of the simulated clock). Ids are slugs of the name.

The known defects of the real host are reproduced, each switchable through
``Defects`` (all on by default, as shipped):

- ``create_paused_saved_active``: a create asking for PAUSED is saved ACTIVE;
- ``update_drops_model``: updating a heartbeat drops ``model`` and ``reasoning_effort``;
- ``accept_invented_thread_id``: a heartbeat ``targetThreadId`` naming no thread
  (such as ``"thread"``) is accepted; such a heartbeat then never runs.

Heartbeats wake on the simulated clock: each ACTIVE automation's next
occurrence of its RRULE (``dateutil.rrule``, counted from its creation) is
scheduled on ``SimClock``; when the clock passes it, ``on_wakeup(record, now)``
is called with the simulated ``now`` (what the evaluator's ``--now`` carries)
and the next occurrence is scheduled. Advancing the clock by ten minutes runs
five wakeups of ``FREQ=MINUTELY;INTERVAL=2`` in no real time.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from dateutil import rrule as dateutil_rrule

from simulator.clock import SimClock

KEY_ORDER = (
    "version",
    "id",
    "kind",
    "name",
    "prompt",
    "status",
    "rrule",
    "target_thread_id",
    "model",
    "reasoning_effort",
    "execution_environment",
    "cwds",
    "created_at",
    "updated_at",
)
_CAMEL = {
    "reasoningEffort": "reasoning_effort",
    "executionEnvironment": "execution_environment",
    "targetThreadId": "target_thread_id",
}


class AutomationError(Exception):
    """The tool's refusal, with the host's message."""


@dataclass
class Defects:
    create_paused_saved_active: bool = True
    update_drops_model: bool = True
    accept_invented_thread_id: bool = True


@dataclass
class Wakeup:
    automation_id: str
    at: datetime
    thread_id: str | None


def toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(item) for item in value) + "]"
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def slug(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "automation"


class AutomationHost:
    """The Codex app's automation store under ``codex_home``, driven by the simulated clock."""

    def __init__(
        self,
        codex_home: Path,
        clock: SimClock,
        *,
        defects: Defects | None = None,
        on_wakeup: Callable[[dict[str, Any], datetime], None] | None = None,
        current_thread_id: str | None = None,
    ):
        self.codex_home = Path(codex_home)
        self.root = self.codex_home / "automations"
        self.root.mkdir(parents=True, exist_ok=True)
        self.clock = clock
        self.defects = defects or Defects()
        self.on_wakeup = on_wakeup
        self.current_thread_id = current_thread_id or str(uuid.UUID(int=0x019F5836_8AFE_7091_956E_219F62F903B1))
        self.threads = {self.current_thread_id}
        self.wakeups: list[Wakeup] = []
        self._generation: dict[str, int] = {}

    # -- the tool ------------------------------------------------------------

    def automation_update(self, call: dict[str, Any]) -> dict[str, Any]:
        mode = call.get("mode")
        handlers = {"create": self._create, "view": self._view, "update": self._update, "delete": self._delete}
        if mode not in handlers:
            raise AutomationError(f"Unsupported mode: {mode}")
        return handlers[mode](call)

    def path(self, automation_id: str) -> Path:
        return self.root / automation_id / "automation.toml"

    def read(self, automation_id: str) -> dict[str, Any] | None:
        try:
            return tomllib.loads(self.path(automation_id).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def _create(self, call: dict[str, Any]) -> dict[str, Any]:
        kind = call.get("kind", "cron")
        for required in ("name", "prompt", "rrule"):
            if not isinstance(call.get(required), str) or not call[required]:
                raise AutomationError(f"Missing {required}")
        record: dict[str, Any] = {
            "version": 1,
            "kind": kind,
            "name": call["name"],
            "prompt": call["prompt"],
            "status": call.get("status", "ACTIVE"),
            "rrule": call["rrule"],
        }
        if kind == "heartbeat":
            record["target_thread_id"] = self._target_thread(call)
        elif kind != "cron":
            raise AutomationError(f"Unsupported kind: {kind}")
        if record["status"] not in ("ACTIVE", "PAUSED"):
            raise AutomationError(f"Invalid status: {record['status']}")
        if record["status"] == "PAUSED" and self.defects.create_paused_saved_active:
            record["status"] = "ACTIVE"
        self._rule(record["rrule"])  # refuse a rule the scheduler cannot read
        for camel in ("model", "reasoningEffort", "executionEnvironment"):
            if call.get(camel) is not None:
                record[_CAMEL.get(camel, camel)] = call[camel]
        record["cwds"] = list(call.get("cwds") or [])
        automation_id = slug(call["name"])
        suffix = 2
        while self.path(automation_id).exists():
            automation_id, suffix = f"{slug(call['name'])}-{suffix}", suffix + 1
        now = self._millis()
        record.update({"id": automation_id, "created_at": now, "updated_at": now})
        self._write(record)
        return {"automationId": automation_id, "mode": "create"}

    def _target_thread(self, call: dict[str, Any]) -> str:
        if call.get("destination") == "thread":
            return self.current_thread_id
        target = call.get("targetThreadId")
        if not target:
            raise AutomationError("Missing targetThreadId or destination=thread")
        if target not in self.threads and not self.defects.accept_invented_thread_id:
            raise AutomationError(f"Unknown thread: {target}")
        return target

    def _existing(self, call: dict[str, Any]) -> dict[str, Any]:
        automation_id = call.get("automationId") or call.get("id")
        record = self.read(automation_id) if isinstance(automation_id, str) and "/" not in automation_id else None
        if record is None:
            raise AutomationError(f"Automation not found: {automation_id}")
        return record

    def _view(self, call: dict[str, Any]) -> dict[str, Any]:
        if not (call.get("automationId") or call.get("id")):
            found = [
                self.read(folder.name) for folder in sorted(self.root.iterdir()) if self.path(folder.name).is_file()
            ]
            return {"mode": "view", "automations": [record for record in found if record is not None]}
        return {"mode": "view", "automation": self._existing(call)}

    def _update(self, call: dict[str, Any]) -> dict[str, Any]:
        record = self._existing(call)
        for camel in ("name", "prompt", "status", "rrule", "model", "reasoningEffort", "executionEnvironment", "cwds"):
            if camel in call:
                record[_CAMEL.get(camel, camel)] = call[camel]
        if record["kind"] == "heartbeat":
            if "destination" in call or "targetThreadId" in call:
                record["target_thread_id"] = self._target_thread(call)
            if self.defects.update_drops_model:
                record.pop("model", None)
                record.pop("reasoning_effort", None)
        if record["status"] not in ("ACTIVE", "PAUSED"):
            raise AutomationError(f"Invalid status: {record['status']}")
        self._rule(record["rrule"])
        record["updated_at"] = self._millis()
        self._write(record)
        return {"automationId": record["id"], "mode": "update"}

    def _delete(self, call: dict[str, Any]) -> dict[str, Any]:
        record = self._existing(call)
        shutil.rmtree(self.root / record["id"])
        self._generation[record["id"]] = self._generation.get(record["id"], 0) + 1  # cancels its scheduled wakeup
        return {"automationId": record["id"], "mode": "delete"}

    # -- disk ------------------------------------------------------------------

    def _millis(self) -> int:
        return int(self.clock.now.timestamp() * 1000)

    def _write(self, record: dict[str, Any]) -> None:
        folder = self.root / record["id"]
        folder.mkdir(parents=True, exist_ok=True)
        lines = [f"{key} = {toml_value(record[key])}" for key in KEY_ORDER if key in record and record[key] is not None]
        temporary = folder / ".automation.toml.tmp"
        temporary.write_text("\n".join(lines) + "\n", encoding="utf-8")
        temporary.replace(folder / "automation.toml")
        self._reschedule(record)

    # -- the heartbeat clock -----------------------------------------------------

    @staticmethod
    def _rule(text: str) -> str:
        rule = text.removeprefix("RRULE:")
        try:
            dateutil_rrule.rrulestr(rule, dtstart=datetime(2026, 1, 1))
        except (ValueError, TypeError) as error:
            raise AutomationError(f"Invalid rrule: {text}") from error
        return rule

    def next_wakeup(self, automation_id: str, after: datetime | None = None) -> datetime | None:
        """The first occurrence of the automation's rule strictly after ``after`` (default: now).

        Occurrences are counted from the automation's creation.
        """
        record = self.read(automation_id)
        if record is None or record["status"] != "ACTIVE":
            return None
        start = datetime.fromtimestamp(record["created_at"] / 1000, self.clock.now.tzinfo).replace(microsecond=0)
        rule = dateutil_rrule.rrulestr(self._rule(record["rrule"]), dtstart=start)
        return rule.after(after or self.clock.now)

    def _reschedule(self, record: dict[str, Any]) -> None:
        automation_id = record["id"]
        generation = self._generation.get(automation_id, 0) + 1
        self._generation[automation_id] = generation  # any wakeup scheduled before this write is void
        due = self.next_wakeup(automation_id)
        if due is not None:
            self.clock.schedule(due, lambda now: self._wake(automation_id, generation, now))

    def _wake(self, automation_id: str, generation: int, now: datetime) -> None:
        if self._generation.get(automation_id) != generation:
            return
        record = self.read(automation_id)
        if record is None or record["status"] != "ACTIVE":
            return
        thread = record.get("target_thread_id")
        # A heartbeat whose thread does not exist is skipped by the scheduler, as the real one logs "thread missing".
        if record["kind"] != "heartbeat" or thread in self.threads:
            self.wakeups.append(Wakeup(automation_id, now, thread))
            if self.on_wakeup is not None:
                self.on_wakeup(record, now)
        due = self.next_wakeup(automation_id, now)
        if due is not None and self._generation.get(automation_id) == generation:
            self.clock.schedule(due, lambda later: self._wake(automation_id, generation, later))


__all__ = ["AutomationError", "AutomationHost", "Defects", "KEY_ORDER", "Wakeup", "slug"]
