"""Read the Codex automation registry and select the automations a loop owns.

Layout: ``$CODEX_HOME/automations/<id>/automation.toml`` (``CODEX_HOME``
defaults to ``~/.codex``). Each file becomes one exact-key record (see
``AutomationRecord`` and references/automation-registry.md). The prompt text
never leaves this module: a record carries its SHA-256 only.

A broken file is an observation, not a crash: unreadable, malformed, mistyped
or surprising content yields a record with a ``problem`` code, so the evaluator
sees the drift and stops the loop instead of the collector dying on it.

Ownership. A loop owns the automations whose ``name`` equals its key or whose
prompt contains the key (the bootstrap names the stub after the key and the
rendered prompt carries it on its ``Loop key:`` line). A record that could not
be read cleanly is owned when its raw bytes contain the key: an automation
that mentions this loop's key but cannot be read is this loop's drift, not
someone else's business. Dropping it would let a corrupted copy of our own
automation keep waking up unseen, while the evaluator, counting one clean
automation, believed the loop was healthy. Containment is safe because the
key ends in the run's 32-hex run id, so no other loop's key contains ours.
"""

from __future__ import annotations

import datetime
import functools
import itertools
import os
import stat
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

from dateutil.rrule import rrule, rrulestr

from evaluator import policy
from evaluator.canonical import text_digest
from evaluator.markers import parse_automation_key
from observe.errors import REGISTRY_CODES, ObserveError

TOML_NAME = "automation.toml"

# Every key Codex writes into automation.toml. kind, model and
# reasoning_effort come with desktop-created automations; target_thread_id
# (and destination, the create call's way of naming the current thread) with
# every heartbeat. Without them every real automation, and so the loop's own
# heartbeat, would read as drift.
_STRING_FIELDS = (
    "id",
    "name",
    "prompt",
    "status",
    "rrule",
    "kind",
    "model",
    "reasoning_effort",
    "execution_environment",
    "target_thread_id",
    "destination",
)
_KNOWN_FIELDS = frozenset(_STRING_FIELDS + ("version", "cwds", "created_at", "updated_at"))
# Without these a record cannot be judged as a loop automation at all.
_REQUIRED_FIELDS = ("id", "name", "prompt", "status", "rrule")

# Cadences are compared by their occurrences from this fixed start (a Monday,
# midnight, no time zone) over this window: long enough for every weekday and
# every time of day, the largest repeating unit a comparable rule may have.
CADENCE_ANCHOR = datetime.datetime(2001, 1, 1)
CADENCE_WINDOW = datetime.timedelta(days=8)
# A rule that holds any of these parts may agree with the heartbeat over the
# window and differ after it (an end, a month or a year left out), so it is
# never taken as the heartbeat, whatever its occurrences in the window.
_UNBOUNDED_BY_THE_WINDOW = frozenset({"COUNT", "UNTIL", "BYMONTH", "BYMONTHDAY", "BYYEARDAY", "BYWEEKNO", "BYEASTER"})
_CALENDAR_FREQUENCIES = frozenset({"MONTHLY", "YEARLY"})
# Longer than any rule Codex writes; a bigger value is refused before it is parsed.
_MAX_RRULE_LENGTH = 1000


class RegistryError(ObserveError):
    """The registry directory itself cannot be listed (never raised for one bad file)."""

    codes = REGISTRY_CODES


class AutomationRecord(TypedDict):
    id: str  # the file's id field when it is a string, else the folder name
    directory: str  # the folder name under automations/
    name: str | None
    status: str | None
    rrule: str | None
    prompt_sha256: str | None
    readable: bool  # False when the file could not be read or parsed as TOML
    problem: str | None


class RecordProblem(NamedTuple):
    """The record's problem, for people: its code, the JSON Pointer of the field concerned, and why."""

    code: str
    path: str  # a JSON Pointer into the file's TOML document ("" for the whole file)
    message: str  # built from field names and limits only, never from the file's values


class Observation(NamedTuple):
    """One automation as read: the record plus what the record deliberately leaves out."""

    record: AutomationRecord
    unknown_fields: tuple[str, ...]  # sorted top-level keys this reader does not know
    prompt: str | None  # kept in memory for ownership only; never serialized
    raw: bytes | None  # the file's bytes (capped); None when nothing could be read
    problem: RecordProblem | None = None  # the record's problem explained; None when it has none


def default_registry_root(environ: Mapping[str, str] = os.environ) -> Path:
    """``$CODEX_HOME/automations``, with CODEX_HOME defaulting to ``~/.codex``."""
    codex_home = environ.get("CODEX_HOME") or str(Path.home() / ".codex")
    return Path(codex_home) / "automations"


def read_registry(root: Path) -> list[Observation]:
    """Every automation folder under ``root`` (the automations directory), sorted by id.

    A missing or unlistable root raises ``RegistryError``: reporting it as "no
    automations" would read like a completed deletion. A folder without an
    automation.toml is skipped, as Codex itself skips it.
    """
    try:
        with os.scandir(root) as entries:
            folders = sorted(entry.name for entry in entries if entry.is_dir())
    except OSError as error:
        raise RegistryError(
            "registry-unreadable", f"cannot list the automation registry at {root}: {error.strerror}"
        ) from error
    observations = []
    for folder in folders:
        observation = read_automation(root / folder)
        if observation is not None:
            observations.append(observation)
    return sorted(observations, key=lambda o: (o.record["id"], o.record["directory"]))


def owned_automations(root: Path, automation_key: str) -> list[AutomationRecord]:
    """The records of ``root`` that belong to the loop named by ``automation_key``, sorted by id."""
    # The ownership rule relies on the fixed-length run id that ends every
    # canonical key (see the module docstring).
    if parse_automation_key(automation_key) is None:
        raise ValueError(f"{automation_key!r} is not a canonical loop key (see evaluator.markers.automation_key)")
    return [o.record for o in read_registry(root) if _is_owned(o, automation_key)]


def _is_owned(observation: Observation, automation_key: str) -> bool:
    record = observation.record
    if record["name"] == automation_key:
        return True
    if observation.prompt is not None and automation_key in observation.prompt:
        return True
    # Anything not read cleanly falls back to its bytes (see the module docstring).
    return (
        record["problem"] is not None
        and observation.raw is not None
        and automation_key.encode("utf-8") in observation.raw
    )


def read_automation(folder: Path) -> Observation | None:
    """Observe ``folder/automation.toml``; None when no such entry exists."""
    path = folder / TOML_NAME
    try:
        os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError:
        pass  # something is there but cannot be examined: _read_capped reports it
    raw, problem = _read_capped(path)
    if problem is not None or raw is None:  # no problem means bytes were read
        return _unparsed(folder.name, problem or "automation-toml-unreadable", raw)
    try:
        document = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):  # tomllib recurses on nesting
        return _unparsed(folder.name, "automation-toml-malformed", raw)
    return _from_document(folder.name, document, raw)


def _read_capped(path: Path) -> tuple[bytes | None, str | None]:
    """The file's bytes, or the problem that prevented reading them."""
    try:
        with open(path, "rb", opener=_open_nonblocking) as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
                return None, "automation-toml-unreadable"
            raw = handle.read(policy.MAX_DOCUMENT_BYTES + 1)
    except OSError:  # includes a directory under the name (IsADirectoryError)
        return None, "automation-toml-unreadable"
    if len(raw) > policy.MAX_DOCUMENT_BYTES:
        return raw[: policy.MAX_DOCUMENT_BYTES], "automation-toml-too-large"
    return raw, None


def _open_nonblocking(path: str, flags: int) -> int:
    # O_NONBLOCK so a FIFO planted under the name cannot hang the wakeup.
    return os.open(path, flags | os.O_NONBLOCK)


_UNPARSED_MESSAGES = {
    "automation-toml-unreadable": "automation.toml is not a regular file that can be read",
    "automation-toml-too-large": f"automation.toml is larger than {policy.MAX_DOCUMENT_BYTES} bytes",
    "automation-toml-malformed": "automation.toml is not UTF-8 TOML",
}


def _unparsed(directory: str, problem: str, raw: bytes | None) -> Observation:
    record = AutomationRecord(
        id=directory,
        directory=directory,
        name=None,
        status=None,
        rrule=None,
        prompt_sha256=None,
        readable=False,
        problem=problem,
    )
    return Observation(record, (), None, raw, RecordProblem(problem, "", _UNPARSED_MESSAGES[problem]))


def _well_typed(field: str, value: Any) -> bool:
    if field in _STRING_FIELDS:
        return isinstance(value, str)
    if field == "version":
        return type(value) is int  # bool is an int subclass; true is not a version
    if field == "cwds":
        return isinstance(value, list) and all(isinstance(item, str) for item in value)
    # created_at / updated_at: epoch milliseconds in the wild, a TOML datetime tolerated.
    return type(value) is int or isinstance(value, (datetime.datetime, datetime.date))


def _schedule(written: str) -> tuple[str | None, RecordProblem | None]:
    """The schedule the record reports, or why the written rule cannot be read.

    A rule with the heartbeat's occurrences (``same_cadence``) is reported as
    ``policy.HEARTBEAT_RRULE``, however it is spelled; any other readable rule
    as written, less one leading ``RRULE:`` (Codex writes the rule with or
    without that iCalendar property name). Judging the report stays the
    evaluator's: it compares it with the policy's rule.
    """
    if len(written) > _MAX_RRULE_LENGTH:
        return None, RecordProblem(
            "automation-rrule-invalid", "/rrule", f"the rule is longer than {_MAX_RRULE_LENGTH} characters"
        )
    try:
        heartbeat = same_cadence(written, rrulestr(written, dtstart=CADENCE_ANCHOR))
    except Exception:  # noqa: BLE001 - dateutil fails on bad rules with ValueError, TypeError, OverflowError...
        message = "the rule is not an iCalendar recurrence rule that python-dateutil can read and expand"
        return None, RecordProblem("automation-rrule-invalid", "/rrule", message)
    return (policy.HEARTBEAT_RRULE if heartbeat else written.removeprefix("RRULE:")), None


def same_cadence(written: str, parsed: Any) -> bool:
    """Whether ``written`` (parsed by ``rrulestr`` from ``CADENCE_ANCHOR``) fires when the heartbeat does.

    Both rules start at the anchor; their occurrences must be the same up to
    the end of ``CADENCE_WINDOW``. Only a single rule whose pattern repeats
    within that window qualifies: no other line (``DTSTART``, ``EXDATE``...),
    no monthly or yearly frequency and none of ``_UNBOUNDED_BY_THE_WINDOW``.
    """
    rule = written.strip()
    if not isinstance(parsed, rrule):
        return False
    if rule[: len("RRULE:")].upper() == "RRULE:":
        rule = rule[len("RRULE:") :]
    # dateutil splits a rule into lines at any whitespace, so another property
    # (``DTSTART:... RRULE:UNTIL=...``) can precede the rule on one line and
    # hide its parts from the check below: the rule alone has neither.
    if ":" in rule or any(character.isspace() for character in rule):
        return False
    parts = dict(part.partition("=")[::2] for part in rule.upper().split(";") if part)
    if parts.keys() & _UNBOUNDED_BY_THE_WINDOW or parts.get("FREQ") in _CALENDAR_FREQUENCIES:
        return False
    # Walked side by side up to the window's end, stopping at the first
    # difference: a rule that never advances (INTERVAL=0) or fires rarely
    # (every Sunday at 23:59) costs no more than the window.
    within_window = parsed.replace(until=CADENCE_ANCHOR + CADENCE_WINDOW)
    return all(seen == expected for seen, expected in itertools.zip_longest(within_window, _heartbeat_occurrences()))


@functools.cache
def _heartbeat_occurrences() -> tuple[datetime.datetime, ...]:
    """The policy rule's occurrences from ``CADENCE_ANCHOR`` to the end of ``CADENCE_WINDOW`` (inclusive)."""
    heartbeat = rrulestr(policy.HEARTBEAT_RRULE, dtstart=CADENCE_ANCHOR)
    return tuple(heartbeat.between(CADENCE_ANCHOR, CADENCE_ANCHOR + CADENCE_WINDOW, inc=True))


def _from_document(directory: str, document: dict[str, Any], raw: bytes) -> Observation:
    unknown = tuple(sorted(set(document) - _KNOWN_FIELDS))
    wrong_type = sorted(f for f in _KNOWN_FIELDS & set(document) if not _well_typed(f, document[f]))
    missing = [field for field in _REQUIRED_FIELDS if field not in document]

    def string(field: str) -> str | None:
        return None if field in wrong_type else document.get(field)

    declared_id, prompt, written_rule = string("id"), string("prompt"), string("rrule")
    schedule, schedule_problem = (None, None) if written_rule is None else _schedule(written_rule)
    # One problem per record: the first that applies, most fundamental first.
    problem: RecordProblem | None
    if wrong_type:
        problem = RecordProblem("automation-field-wrong-type", f"/{wrong_type[0]}", "the field has the wrong type")
    elif missing:
        problem = RecordProblem("automation-field-missing", f"/{missing[0]}", "a required field is missing")
    elif declared_id != directory:
        problem = RecordProblem("automation-id-mismatch", "/id", "the id differs from the automation's folder name")
    elif schedule_problem is not None:
        problem = schedule_problem
    elif unknown:
        message = "a top-level key this reader does not know"
        problem = RecordProblem("automation-unknown-fields", f"/{_escaped(unknown[0])}", message)
    else:
        problem = None
    record = AutomationRecord(
        id=declared_id if declared_id is not None else directory,
        directory=directory,
        name=string("name"),
        status=string("status"),
        rrule=schedule,
        prompt_sha256=None if prompt is None else text_digest(prompt),
        readable=True,
        problem=None if problem is None else problem.code,
    )
    return Observation(record, unknown, prompt, raw, problem)


def _escaped(key: str) -> str:
    """A TOML key as one JSON Pointer reference token (RFC 6901)."""
    return key.replace("~", "~0").replace("/", "~1")
