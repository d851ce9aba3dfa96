"""``loop.py list`` and ``loop.py forget``: the loops this user's state directories hold.

Each ``init`` makes one state directory under the default root
(``$XDG_STATE_HOME/github-codex-pr-loop``). ``list`` says what each holds,
read through the same typed models as every other command (a directory that
cannot be read is listed with its error, never skipped). ``forget`` removes
one, only when no automation of it can still wake: never created, or
verified deleted. A running loop's directory is what its wakeups need, so
forgetting it would leave a heartbeat that can only fail.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from act import statedir, verdicts
from act.command import HEX32, Context
from act.errors import ActError
from act.state_models import AutomationProgress, Intent

# Automation stages after which nothing of this loop can wake again.
GONE = ("deleted", "prompt-rejected")


def _summary(directory: statedir.StateDir) -> dict[str, Any]:
    intent = directory.read_model(statedir.INTENT, Intent)
    automation = directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
    return {
        "run_id": intent.run_id,
        "repository": intent.repository,
        "head_branch": intent.head_branch,
        "pr_number": None if automation is None else automation.pr_number,
        "mode": intent.mode,
        "created_at": intent.created_at,
        "last_action": verdicts.last_action(directory),
        "automation_stage": None if automation is None else automation.stage,
        "can_forget": automation is None or automation.stage in GONE,
    }


def run_list(ctx: Context) -> dict[str, Any]:
    root = statedir.default_root()
    loops = []
    for path in sorted(root.iterdir()) if root.is_dir() else []:
        if not HEX32.fullmatch(path.name):
            continue
        entry: dict[str, Any] = {"state_dir": str(path)}
        try:
            directory = statedir.StateDir(path)
            directory.check()
            entry.update(_summary(directory))
        except ActError as error:
            entry["error"] = error.as_dict()
        loops.append(entry)
    return {
        "root": str(root),
        "loops": loops,
        "next": "continue a loop with its --state-dir; remove one that can no longer wake with `loop.py forget "
        "--state-dir DIR`",
    }


def run_forget(ctx: Context) -> dict[str, Any]:
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
