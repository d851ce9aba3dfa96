"""``loop.py list`` and ``loop.py forget``: the loops this user's state directories hold.

Each ``init`` makes one state directory under the default root
(``$XDG_STATE_HOME/github-codex-pr-loop``). ``list`` says what each holds,
read through the same typed models as every other command (a directory that
cannot be read is listed with its error, never skipped). ``forget`` removes
one, only when no automation of it can still wake: never created, or
verified deleted. A running loop's directory is what its wakeups need, so
forgetting it would leave a heartbeat that can only fail. ``init`` counts
the live ones (``require_room_for_another``): no fifth without the person's
word (``MAX_LIVE_LOOPS``, evaluator/policy.py).
"""

from __future__ import annotations

import shutil
from dataclasses import asdict, dataclass
from pathlib import Path

from act.command import HEX32, Context
from act.core import statedir, verdicts
from act.core.errors import ActError
from act.core.jsonedge import Output
from act.core.state_models import AutomationProgress, AutomationStage, Intent
from act.core.verdicts import ActionName
from evaluator import policy

# Automation stages after which nothing of this loop can wake again.
GONE = ("deleted", "prompt-rejected")


@dataclass(frozen=True)
class LoopSummary:
    """What ``list`` says of a loop it could read (fields in the order printed)."""

    run_id: str
    repository: str
    head_branch: str
    pr_number: int | None
    mode: policy.WriteMode
    created_at: str
    last_action: ActionName | None
    automation_stage: AutomationStage | None
    can_forget: bool


@dataclass(frozen=True)
class LoopRow:
    """One state directory of the default root: its summary, or the error that kept it from being read."""

    state_dir: str
    summary: LoopSummary | None
    error: ActError | None

    @property
    def live(self) -> bool:
        """Whether its automation can still wake: created and not gone, or unreadable (that cannot be ruled out)."""
        return self.summary is None or self.summary.automation_stage not in (None, *GONE)

    def as_output(self) -> Output:
        if self.summary is not None:
            return {"state_dir": self.state_dir, **asdict(self.summary)}
        return {"state_dir": self.state_dir, "error": None if self.error is None else self.error.as_dict()}

    def as_live(self) -> Output:
        """The row as ``init`` names a live loop."""
        summary, error = self.summary, self.error
        return {
            "state_dir": self.state_dir,
            "repository": None if summary is None else summary.repository,
            "pr_number": None if summary is None else summary.pr_number,
            "automation_stage": None if summary is None else summary.automation_stage,
            "error": None if error is None else error.as_dict(),
        }


def _summary(directory: statedir.StateDir) -> LoopSummary:
    intent = directory.read_model(statedir.INTENT, Intent)
    automation = directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
    return LoopSummary(
        run_id=intent.run_id,
        repository=intent.repository,
        head_branch=intent.head_branch,
        pr_number=None if automation is None else automation.pr_number,
        mode=intent.mode,
        created_at=intent.created_at,
        last_action=verdicts.last_action(directory),
        automation_stage=None if automation is None else automation.stage,
        can_forget=automation is None or automation.stage in GONE,
    )


def _loops() -> list[LoopRow]:
    root = statedir.default_root()
    loops = []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if not HEX32.fullmatch(path.name):
            continue
        try:
            directory = statedir.StateDir(path)
            directory.check()
            loops.append(LoopRow(str(path), _summary(directory), None))
        except ActError as error:
            loops.append(LoopRow(str(path), None, error))
    return loops


def live_loops() -> list[LoopRow]:
    """The loops whose automation can still wake: created and not gone, or unreadable (that cannot be ruled out)."""
    return [row for row in _loops() if row.live]


def require_room_for_another(allow_many: bool) -> list[str]:
    """``init``'s check: refuse a loop beyond ``MAX_LIVE_LOOPS`` live ones, unless the person allowed it (a warning)."""
    from evaluator.policy import MAX_LIVE_LOOPS

    live = live_loops()
    if len(live) < MAX_LIVE_LOOPS:
        return []
    named = ", ".join(row.state_dir for row in live)
    why = (
        f"{len(live)} loops of this machine can still wake ({named}); with more than {MAX_LIVE_LOOPS} heartbeat "
        "automations the Codex desktop app has been reported to loop resuming their threads"
    )
    if not allow_many:
        raise ActError(
            "too-many-live-loops",
            f"{why}, so no plan is built. Let one finish or stop it (`loop.py list` shows them; the person deletes "
            "an automation in Codex, then `loop.py forget`), or run `loop.py init` again with --allow-many-loops "
            "if the person says so",
            path="/loops",
            details={"live": [row.as_live() for row in live]},
        )
    return [f"{why}; started anyway (--allow-many-loops)"]


def run_list(ctx: Context) -> Output:
    return {
        "root": str(statedir.default_root()),
        "loops": [row.as_output() for row in _loops()],
        "next": "continue a loop with its --state-dir; remove one that can no longer wake with `loop.py forget "
        "--state-dir DIR`",
    }


def run_forget(ctx: Context) -> Output:
    directory = ctx.state_dir()
    automation = directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
    if automation is not None and automation.stage not in GONE:
        raise ActError(
            "loop-still-scheduled",
            f"this loop's automation {automation.id or '(id not yet verified)'} is at stage {automation.stage}: it "
            "can still wake and needs this directory. Delete it first (`loop.py automation-delete` when a stop "
            "permits it, or the person deletes it in Codex), then forget",
            path="/automation",
        )
    shutil.rmtree(Path(directory.path))
    return {"forgotten": str(directory.path), "next": "nothing: the loop's local state is gone (GitHub is untouched)"}
