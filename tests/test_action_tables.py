"""The action registry and table are what references/actions.md and references/hands.md say they are."""

from __future__ import annotations

import itertools
import re

from evaluator.actions import ACTIONS, CLEANUP_STOPS, WRITE_ACTIONS
from evaluator.facts import TRUST_REASONS
from evaluator.machine import REPORT_ROWS, ROWS
from tests.helpers import ROOT

ACTIONS_MD = (ROOT / "references" / "actions.md").read_text(encoding="utf-8")
HANDS_MD = (ROOT / "references" / "hands.md").read_text(encoding="utf-8")


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    following = re.search(r"^#{1,3} ", text[start + len(heading) :], re.MULTILINE)
    return text[start : start + len(heading) + (following.start() if following else len(text))]


def _table(text: str) -> list[list[str]]:
    """The cells of every body row of the first markdown table in text."""
    lines = text.splitlines()
    first = next(index for index, line in enumerate(lines) if line.startswith("|"))
    rows = list(itertools.takewhile(lambda line: line.startswith("|"), lines[first:]))
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[2:]]


def _names(cell: str) -> list[str]:
    return re.findall(r"`([a-z-]+)`", cell)


def test_the_numbered_action_table_is_rows():
    documented = _table(_section(ACTIONS_MD, "## The action table"))
    assert [int(number) for number, *_ in documented] == list(range(1, len(ROWS) + 1))
    for (number, action, reason, _), row in zip(documented, ROWS, strict=True):
        assert _names(action) == [row.action], number
        if row.reasons_from == "inconsistencies":
            assert reason == "every inconsistency found, sorted", number
        else:
            assert _names(reason)[0] == row.reason, number


def test_the_report_only_table_is_report_rows():
    documented = _table(_section(ACTIONS_MD, "## Report-only"))
    assert [(int(number), _names(reason)) for number, reason, _ in documented] == [
        (index, [row.reason]) for index, row in enumerate(REPORT_ROWS, start=1)
    ]


def test_the_per_action_table_names_every_action_and_its_rows():
    documented = {_names(cells[0])[0]: cells[1] for cells in _table(_section(ACTIONS_MD, "## Per action"))}
    assert set(documented) == set(ACTIONS) - {"report"}
    for action, rows in documented.items():
        emitted_by = [index for index, row in enumerate(ROWS, start=1) if row.action == action]
        assert [int(n) for n in re.findall(r"\d+", rows)] == emitted_by, action


def test_the_cleanup_stops_are_the_documented_ones():
    permitted = _table(_section(ACTIONS_MD, "### Writes each terminal permits"))
    cleanup_cell = next(cells[0] for cells in permitted if "CLEANUP_STOPS" in cells[0])
    assert set(_names(cleanup_cell)) == CLEANUP_STOPS


def test_the_single_commands_table_lists_exactly_the_registry():
    table = _table(_section(HANDS_MD, "| action | you do |"))
    assert {name for cells in table for name in _names(cells[0])} == set(ACTIONS)


def test_write_and_cleanup_sets_are_read_off_the_registry():
    assert CLEANUP_STOPS <= WRITE_ACTIONS
    assert {row.action for row in ROWS + REPORT_ROWS} == set(ACTIONS)
    assert "report" not in WRITE_ACTIONS and "state-inconsistency" not in WRITE_ACTIONS
    assert "finish-finalization" in WRITE_ACTIONS - CLEANUP_STOPS


def test_the_trust_reasons_are_the_documented_ones():
    row_two = _table(_section(ACTIONS_MD, "## The action table"))[1][3]
    documented = set(_names(row_two))
    assert {"evaluator-digest-changed", "user-drift"} <= documented
    automation = {reason for reason in TRUST_REASONS if reason.startswith("automation-")}
    assert TRUST_REASONS == {"evaluator-digest-changed", "user-drift"} | automation
    # Every automation-* reason of the inconsistency table is a trust reason.
    inconsistency_table = _table(_section(ACTIONS_MD, "## State-inconsistency reasons"))
    listed = {_names(cells[0])[0] for cells in inconsistency_table}
    assert {reason for reason in listed if reason.startswith("automation-")} == automation
