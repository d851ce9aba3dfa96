"""What the agent does next: one table, the source of every ``next`` and of the single commands' table.

Each action the evaluator emits in a wakeup has one row: the steps the agent
takes, in order. A ``Run`` is one ``loop.py`` command exactly as it is typed
(``DIR`` the state directory, ``KEY`` the loop's automation key, ``H`` the
pending plan's hash: the hands fill in what they know); a ``Do`` is one of the
agent's own acts (show, edit, pass a payload, tell). A command's ``next`` is
the rest of its row from where the agent stands, so what a command says and
what the references say cannot drift apart: references/hands.md's table is rendered from
these rows (``python -m act.core.steps`` prints it) and a test holds the two equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from evaluator.vocabulary import ActionName

# Actions after which this wakeup writes nothing more: whichever command emitted one ends the wakeup.
ENDS_THE_WAKEUP: frozenset[ActionName] = frozenset({"wait", "await-approval", "done", "state-inconsistency", "report"})
# The evaluator's cleanup stops (its registry's ``cleanup`` actions), in the order the table lists them.
CLEANUP_STOPS: tuple[ActionName, ...] = (
    "request-timeout",
    "stop-max-rounds",
    "stop-pr-closed",
    "stop-reviewer-unavailable",
    "stop-recurring-finding",
)


@dataclass(frozen=True)
class Run:
    """One ``loop.py`` command; ``obey``: its answer's ``action`` is the row to follow next."""

    command: str
    args: str = ""
    obey: bool = False

    @property
    def key(self) -> str:
        return self.command

    def text(self) -> str:
        typed = f"`loop.py {self.command} --state-dir DIR{' ' + self.args if self.args else ''}`"
        return typed + (" and obey the `action` it prints" if self.obey else "")


@dataclass(frozen=True)
class Do:
    """One of the agent's own acts: ``show``, ``edit``, ``tool``, ``tell`` or ``nothing``."""

    act: str
    words: str

    @property
    def key(self) -> str:
        return self.act

    def text(self) -> str:
        return self.words


Step = Run | Do

_CLEANUP: tuple[Step, ...] = (
    Run("automation-delete"),
    Do("tool", "pass its `payload` to `automation_update` unchanged"),
    Run("verify-automation"),
    Run("end-wakeup"),
    Do("tell", "tell the person why (`reasons`)"),
)

WAKEUP: dict[ActionName, tuple[Step, ...]] = {
    "wait": (Do("nothing", "nothing: the wakeup is over"),),
    "plan-remediation": (
        Do("read", "read the `findings` (each Codex finding's path, lines, priority and text)"),
        Run("plan-remediation", "--path P...", obey=True),
        Do(
            "note",
            "`--path` names every file the fix edits; the loop's validation commands carry over, and `--command JSON` "
            "replaces them; `loop.py plan-remediation --state-dir DIR --reuse-pending` "
            "instead rebuilds the plan the person approved",
        ),
    ),
    "plan-finalization": (Run("plan-finalization", obey=True),),
    "await-approval": (
        Do("show", "show the `approval_summary` to the person: the wakeup is over"),
        Do(
            "note",
            "when they reply with the full hash, the next wakeup passes it, exactly as they wrote it: "
            "`loop.py next --state-dir DIR --approve HASH` (one command at a time: first `loop.py approve "
            "--state-dir DIR --hash HASH`)",
        ),
    ),
    "claim-plan": (Run("claim"), Run("wakeup", "--automation-key KEY --continue", obey=True)),
    "execute-remediation": (
        Run("execute"),
        Do("edit", "edit exactly the listed paths, in place (see `edit_safely`)"),
        Run("execute"),
        Run("verify-automation"),
        Run("record-executed", "--plan-hash H"),
        Run("end-wakeup"),
    ),
    "execute-finalization": (
        Run("execute"),
        Run("record-executed", "--plan-hash H"),
        Run("wakeup", "--automation-key KEY --continue", obey=True),
    ),
    "finish-finalization": (
        Run("execute"),
        *_CLEANUP[:-1],
        Do("tell", "tell the person the loop is finished and report the `gates` and `reasons`"),
    ),
    "done": (
        Do(
            "nothing",
            "nothing: the loop is finished; if the person asks later, `loop.py status --state-dir DIR` reports what "
            "Codex said since (`after_finalization`)",
        ),
    ),
    **{stop: _CLEANUP for stop in CLEANUP_STOPS},
    "state-inconsistency": (
        Do(
            "tell",
            "no write at all: tell the person the `reasons` and that they must fix the drift or delete the "
            "automation themselves (`user_must_delete_automation`); `evaluator-digest-changed` means the skill's "
            "code or packages changed since the loop began (an upgrade or an edit): this loop cannot go on, and "
            "the next upgrade should wait until every loop has finished or been stopped",
        ),
    ),
    "report": (Do("tell", "report-only: print the classification and the gates"),),
}


# The bootstrap, after the initial plan's ``execute`` made the PR and asked for round 0: no evaluator action
# names it (the wakeups start once it is over), but its commands say what is next the same way.
BOOTSTRAP: tuple[Step, ...] = (
    Run("automation-create", "--pr PR_NUMBER"),
    Do("tool", "call `automation_update` with its `payload` exactly"),
    Run("verify-automation", "--id ID"),
    Do("note", "`ID`: the `automationId` it answered; without `--id` verify reads it from the registry"),
    Run("automation-prompt"),
    Do("tool", "call `automation_update` with its `payload` exactly (the prompt is three lines, no trailing newline)"),
    Run("verify-automation"),
    Do("tool", "call `automation_update` with its `payload` exactly (the activation)"),
    Run("verify-automation"),
    Do(
        "nothing",
        "nothing more now: the loop is live; end this turn (every heartbeat runs `loop.py next --state-dir DIR`)",
    ),
)

# The initial plan, after ``init`` printed it: the person approves it, then it is executed (autonomous mode
# starts at ``execute``); the bootstrap follows.
INITIAL: tuple[Step, ...] = (
    Do("show", "show the `approval_summary` to the person"),
    Do(
        "note",
        "when they reply with the exact hash, run `loop.py next --state-dir DIR --approve HASH` with it; one command "
        "at a time, the two that follow",
    ),
    Run("approve", "--hash HASH"),
    Run("execute"),
    Do(
        "note",
        "immediately before fetch-base it rebuilds the plan from fresh observations and has the evaluator check it "
        "against the approved hash",
    ),
)

# A bootstrap the evaluator rejected (``prompt-rejected``): the PAUSED stub is deleted, never updated.
BOOTSTRAP_REJECTED: tuple[Step, ...] = (
    *_CLEANUP[:3],
    Do("tell", "tell the person the bootstrap was rejected (the loop never started)"),
)

OutsideWakeups = Literal["initial", "bootstrap", "bootstrap-rejected"]
Row = ActionName | OutsideWakeups
_OUTSIDE_WAKEUPS: dict[OutsideWakeups, tuple[Step, ...]] = {
    "initial": INITIAL,
    "bootstrap": BOOTSTRAP,
    "bootstrap-rejected": BOOTSTRAP_REJECTED,
}


def _steps(row: Row) -> tuple[Step, ...]:
    if row == "initial" or row == "bootstrap" or row == "bootstrap-rejected":
        return _OUTSIDE_WAKEUPS[row]
    return WAKEUP[row]


def notifies(action: ActionName, act: str) -> bool:
    """Whether the person must be told now when ``next`` stops at the agent's ``act`` in ``action``'s row.

    Showing an approval summary and telling of a stop or the end: yes (the
    heartbeat turn ends with a notification). Waiting, and the agent's own
    steps (reading findings, editing, passing a payload): no.
    """
    return act in ("show", "tell") or (act == "nothing" and action != "wait")


@dataclass(frozen=True)
class Where:
    """The placeholders a command can fill in."""

    state_dir: Path | str | None = None
    key: str | None = None
    plan_hash: str | None = None
    pr_number: int | None = None

    def fill(self, text: str) -> str:
        filled = (("DIR", self.state_dir), ("KEY", self.key), ("H", self.plan_hash), ("PR_NUMBER", self.pr_number))
        for placeholder, value in filled:
            if value is not None:
                text = re.sub(rf"\b{placeholder}\b", str(value).replace("\\", "\\\\"), text)
        return text


def render(steps: tuple[Step, ...]) -> str:
    """The steps in order, each note in brackets after the step it explains."""
    text = ""
    for step in steps:
        if isinstance(step, Do) and step.act == "note":
            text += f" ({step.words})" if text else step.words
        else:
            text += f"; then {step.text()}" if text else step.text()
    return text


def command(name: str, where: Where, args: str = "") -> str:
    """One ``loop.py`` command as the table types it, filled in (a step named outside a row's order)."""
    return where.fill(Run(name, args).text())


def row(action: Row, where: Where) -> str:
    """The whole row: what a command that emitted ``action`` (or the bootstrap) says to do."""
    return where.fill(render(_steps(action)))


def starting_at(action: Row, key: str, where: Where, *, nth: int = 1) -> str:
    """The row from its ``nth`` step named ``key`` on (that step included)."""
    steps = _steps(action)
    found = [index for index, step in enumerate(steps) if step.key == key]
    return where.fill(render(steps[found[nth - 1] :]))


def after(action: Row, key: str, where: Where, *, nth: int = 1) -> str:
    """The row after its ``nth`` step named ``key``: what a command at that step says next."""
    steps = _steps(action)
    found = [index for index, step in enumerate(steps) if step.key == key]
    rest = steps[found[nth - 1] + 1 :]
    return where.fill(render(rest)) if rest else "nothing more in this wakeup"


def commands_table() -> str:
    """The single commands' table (references/hands.md), rendered from the rows (cleanup stops share one line)."""
    lines = ["| action | you do |", "| --- | --- |"]
    shown: set[str] = set()
    for action, steps in WAKEUP.items():
        if action in shown:
            continue
        same = [other for other, other_steps in WAKEUP.items() if other_steps is steps]
        shown.update(same)
        names = ", ".join(f"`{name}`" for name in same)
        lines.append(f"| {names} | {render(steps)} |")
    return "\n".join(lines) + "\n"


_OUTSIDE_WHEN: dict[OutsideWakeups, str] = {
    "initial": "after `init`",
    "bootstrap": "after the initial plan's `execute`",
    "bootstrap-rejected": "after `automation-prompt` refused `prompt-rejected`",
}


def outside_table() -> str:
    """The rows outside the wakeups (references/hands.md), rendered like the single commands' table."""
    lines = ["| row | when | you do |", "| --- | --- | --- |"]
    lines += [f"| `{name}` | {_OUTSIDE_WHEN[name]} | {render(row)} |" for name, row in _OUTSIDE_WAKEUPS.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(commands_table(), end="")
    print()
    print(outside_table(), end="")
