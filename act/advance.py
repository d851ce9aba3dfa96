"""``loop.py next``: every mechanical step of the loop in one command, up to the one act that is not.

The agent runs ``init``, then ``next`` until the loop is running (with
``--approve HASH`` first, the person's reply, in approval-gated mode), and
``next`` once at every heartbeat (``--approve HASH`` when the person replied
to a plan since the last one: it is recorded exactly as ``approve`` records it,
before anything else). ``next`` runs the
same single commands references/hands.md's table gives (act/core/steps.py), in process and under
the same checks, one after the other, and stops only where someone must act:

- the person: approve a plan (an approval summary), or be told of a stop;
- the agent: choose the paths of a fix (``plan-remediation --path``), edit
  the files, pass an automation payload to Codex's tool.

What it prints is that one act, and ``then``: the command to run after it
(``loop.py next`` again), or nothing when the wakeup or the loop is over.

``next.json`` is the wakeup's journal: before each command of a row runs, it
records the row and that step, so a kill or a refusal anywhere in the chain
resumes the same wakeup at that step on the next ``next``; every step it
resumes re-checks what it acts on, as the single commands do, so a stale
journal can only make a command refuse, never write twice. A hand-off (a
payload, the paths to edit) is recorded before it is printed and printed
again, unchanged, by every rerun until its answer is observed: the
automation's payloads are kept in ``automation.json`` with the stage that
asks for them (act/automation.py), and ``execute`` answers ``awaiting-edit``
again while no planned path has changed.
"""

from __future__ import annotations

import shlex
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from act import plans
from act.command import Command, Context
from act.core import ledger, statedir, steps, verdicts
from act.core.errors import ActError
from act.core.jsonedge import Output
from act.core.options import Options
from act.core.state_models import AutomationProgress, NextAgenda, RemediationPlan, build
from act.edge import progress
from evaluator.models.recurring import RecurringState
from evaluator.vocabulary import ActionName

AGENDA = "next.json"
# Automation stages after which the bootstrap is over: the wakeups take it from there.
_RUNNING = ("active", "delete-requested", "deleted")


class _Stop(Exception):
    """The one act ``next`` cannot do; ``told`` is what it prints about it.

    ``notify``: whether the person must be told now (an approval summary, a
    stop, the end), so a heartbeat turn ends with a notification; a wait and
    the agent's own steps do not (act/core/steps.py, ``notifies``).
    """

    def __init__(self, *, notify: bool, **told: Any):
        super().__init__(told.get("you_do", ""))
        self.told = {**told, "notify": notify}


class _Advance:
    def __init__(self, ctx: Context):
        self.ctx = ctx
        self.directory = ctx.state_dir()
        self.did: list[Output] = []
        self.seen: Output = {}  # what the person or the agent needs from the commands run so far
        self.here = steps.Where(state_dir=self.directory.path)
        self.again = steps.command("next", self.here)

    # -- running one command, in process --------------------------------------------------

    def run(self, command: str, **given: Any) -> Output:
        """One single command, in process, on typed options: never through the argument parser."""
        from act.cli import TABLE

        row: Command = next(row for row in TABLE if row.name == command)
        shown = _shown(command, given)
        progress.say(f"next: running {shown}")
        options = replace(Options(subcommand=command, state_dir=str(self.directory.path)), **given)
        try:
            result = row.runner()(Context(self.ctx.world, options))
        except ActError as error:  # the refusal names the single command that refused
            error.details = {"refused_in": shown, **error.details}
            raise
        self.did.append(
            {
                "command": shown,
                **{k: result[k] for k in ("action", "outcome", "plan_hash") if k in result},
                **({"performed": [p["operation"] for p in result["performed"]]} if "performed" in result else {}),
            }
        )
        for key in ("findings", "gate_unknowns", "approval_summary", "evaluation", "reasons", "action"):
            if key in result:
                self.seen[key] = result[key]
        return result

    # -- the agenda: where a row stopped for the agent, in this wakeup --------------------

    def remember(self, row: ActionName, resume_at: int) -> None:
        current = ledger.read_wakeup(self.directory)
        wakeup_id = None if current is None else current.wakeup_id
        agenda = build(NextAgenda, {"wakeup_id": wakeup_id, "row": row, "resume_at": resume_at})
        if self.directory.read_model_optional(AGENDA, NextAgenda) != agenda:  # one write per step, none twice
            self.directory.write_model(AGENDA, agenda)

    def forget(self) -> None:
        if self.directory.exists(AGENDA):
            self.directory.file(AGENDA).unlink()

    def resumable(self) -> tuple[ActionName, int] | None:
        agenda = self.directory.read_model_optional(AGENDA, NextAgenda)
        current = ledger.read_wakeup(self.directory)
        if agenda is None or current is None or agenda.wakeup_id != current.wakeup_id:
            return None
        last = verdicts.last_action(self.directory)
        if current.ended_at is not None:  # that wakeup is over: the next one starts afresh ...
            # ... unless the loop is over too: then its last word to the person is printed again, unchanged.
            final = self._final_word_from(agenda.row, agenda.resume_at)
            return None if final is None else (agenda.row, final)
        if last != agenda.row and last in steps.WAKEUP:  # the agent ran the row's command: its answer leads
            return last, 0
        return agenda.row, agenda.resume_at

    def _final_word(self, row: ActionName, index: int) -> bool:
        """Whether step ``index`` of ``row`` tells the person how the loop ended (its automation is gone)."""
        return self._final_word_from(row, index) == index

    def _final_word_from(self, row: ActionName, index: int) -> int | None:
        """The step at ``index``, or just after the row's ``end-wakeup`` there, that tells how the loop ended."""
        automation = self.directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
        if automation is None or automation.stage != "deleted":
            return None
        for at, step in enumerate(steps.WAKEUP[row][index:], start=index):
            if isinstance(step, steps.Do) and step.act == "tell":
                return at
            if not (isinstance(step, steps.Run) and step.command == "end-wakeup"):  # killed as the wakeup ended
                return None
        return None

    # -- the bootstrap ----------------------------------------------------------------------

    def bootstrap(self, automation: AutomationProgress | None) -> None:
        if automation is None:
            executed = self.run("execute")
            pr_number = executed["facts"].get("pr_number")
            if executed["next_operation"] is not None or pr_number is None:
                raise _Stop(you_do=executed["next"], then=self.again, notify=True)  # not as planned: say so
            created = self.run("automation-create", pr=pr_number)
            raise self.tool(created, then=steps.command("next", self.here, "--id ID"))
        if automation.stage == "prompt-rejected":
            raise self.tool(self.run("automation-delete"))
        given = self.ctx.options.automation_id
        # Without --id at create-requested, verify prints the create payload again while the registry shows
        # nothing with this loop's key, and otherwise reads the id from it.
        verified = self.run("verify-automation", **({"automation_id": given} if given else {}))
        if verified["outcome"] == "stub-paused":
            verified = self.run("automation-prompt")
        if "payload" in verified:
            create = verified["payload"].get("mode") == "create"  # its answer comes back as --id ID
            raise self.tool(verified, then=steps.command("next", self.here, "--id ID") if create else None)
        raise _Stop(
            you_do=f"nothing more now: the loop is live ({verified['outcome']}); end this turn",
            then=f"at every heartbeat: {self.again}",
            notify=True,  # the person who started the loop learns it runs
        )

    def deleting(self) -> None:
        verified = self.run("verify-automation")
        if "payload" in verified:
            raise self.tool(verified)
        raise _Stop(you_do=verified["next"], then=None, notify=True)  # the bootstrap was rejected: say so

    def tool(self, result: Output, *, then: str | None = None) -> _Stop:
        return _Stop(
            you_do="pass `payload` to automation_update unchanged",
            payload=result["payload"],
            then=then or self.again,
            notify=False,
        )

    # -- the wakeups --------------------------------------------------------------------------

    def wakeup(self) -> None:
        resumed = self.resumable()
        if resumed is None:
            key = self.ctx.options.automation_key or self._automation_key()
            result = self.run("wakeup", automation_key=key)
            resumed = (result["action"], 0)
        self.follow(*resumed)

    def _automation_key(self) -> str:
        automation = self.directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
        if automation is None:
            raise ActError("automation-not-started", "this loop has no automation yet", path="/automation")
        return automation.key

    def follow(self, action: ActionName, start: int) -> None:
        """Do the row of ``action`` from step ``start``, up to its first act that is not mechanical."""
        row = steps.WAKEUP[action]
        for index in range(start, len(row)):
            step = row[index]
            if isinstance(step, steps.Do):
                if step.act != "edit":  # the edit is handed off when execute answers awaiting-edit
                    self.act(action, index, step)
                continue
            self.remember(action, index)  # write-ahead: a kill or a refusal from here resumes at this step
            if step.command == "plan-remediation":
                result = self.plan_remediation(action, index)
            elif step.command == "wakeup":
                if action == "execute-finalization" and index > start:  # not again when resumed here
                    self.after_phase_one(action, index)
                result = self.run("wakeup", automation_key=self._automation_key(), continue_wakeup=True)
            elif step.command == "record-executed":
                result = self.run("record-executed", plan_hash=self._pending_hash())
            elif step.command == "execute":
                result = self.execute(action)
            else:
                result = self.run(step.command)
            if "payload" in result:
                self.remember(action, self._verify_at(row, index))  # verify prints it again until it took effect
                raise self.tool(result)
            if step.obey:
                self.follow(result["action"], 0)
                return
        self.forget()
        raise _Stop(
            you_do="nothing more: this wakeup is over; end this turn",
            then=f"at the next heartbeat: {self.again}",
            notify=False,  # its writes are done; the next wakeup reads Codex's answer to them
        )

    @staticmethod
    def _verify_at(row: tuple[steps.Step, ...], index: int) -> int:
        """The row's verify-automation at or after ``index``: the step that sees a payload's effect."""
        return next(
            at
            for at, step in enumerate(row[index:], start=index)
            if isinstance(step, steps.Run) and step.command == "verify-automation"
        )

    def execute(self, action: ActionName) -> Output:
        """``execute``; where it answers awaiting-edit, the edit is handed off (again, unchanged, until observed)."""
        try:
            result = self.run("execute")
        except ActError as error:
            if error.code == "edit-not-in-place":
                self.not_in_place(error)
            raise
        if any(performed["outcome"] == "awaiting-edit" for performed in result["performed"]):
            row = steps.WAKEUP[action]
            edit_at = next(at for at, step in enumerate(row) if isinstance(step, steps.Do) and step.act == "edit")
            self.hand_edit(action, edit_at)
        return result

    def hand_edit(self, action: ActionName, edit_at: int) -> None:
        self.remember(action, edit_at + 1)  # the execute after the edit: it hands the edit off again until seen
        pending = plans.read_pending(self.directory)
        paths = pending.manifest.as_dict()["paths"] if isinstance(pending, RemediationPlan) else []
        from act.execute_cli import EDIT_SAFELY

        raise _Stop(
            you_do=f"edit exactly these paths, in place: {paths}",
            paths=paths,
            edit_safely=EDIT_SAFELY,
            then=self.again,
            notify=steps.notifies(action, "edit"),
        )

    def not_in_place(self, error: ActError) -> None:
        """A planned file replaced, not written: this plan can never run, so this wakeup ends here, said so."""
        self.run("end-wakeup", reason="edit-not-in-place")
        self.forget()
        error.details = {
            **error.details,
            "you_do": "tell the person, with this message, which files were replaced and that this loop stops: the "
            "change stays in the checkout, nothing was committed or pushed; the loop reports it at a later "
            "wakeup (its claim lapses: state-inconsistency), and the person deletes the automation and starts a "
            "new loop over the checkout (`loop.py init`) to carry the change to the pull request",
            "then": f"at the next heartbeat: {self.again}",
        }

    def after_phase_one(self, action: ActionName, index: int) -> None:
        """Phase two is judged on an observation made after phase one's claim, to the second.

        GitHub stamps the claim in whole seconds, and a state counts as
        settled only when observed later than that: at the real clock the
        command waits for the next second; at a given instant
        (``--observed-at``, which cannot move) it stops and goes on from here
        when run again.
        """
        if self.ctx.world.observed_at is None:
            time.sleep(1.05 - time.time() % 1)
            return
        self.remember(action, index)
        raise _Stop(
            you_do="nothing: phase one is done; run this command again to go on",
            then=self.again,
            again=True,
            notify=False,
        )

    def act(self, action: ActionName, index: int, step: steps.Do) -> None:
        here = plans.where(self.directory, key=self._automation_key())
        if action in steps.ENDS_THE_WAKEUP:
            # The command that answered this action ends the wakeup; killed before it could, its answer
            # (the verdict) is recorded all the same: end it now, or every later wakeup is refused.
            ledger.end_wakeup(self.directory, action)
        if step.act == "show":
            self.forget()
            raise _Stop(
                you_do="show the person the approval_summary; the wakeup is over. When they reply with the full "
                f"hash, run {steps.command('next', self.here, '--approve HASH')} with it, exactly as they wrote it",
                then=f"at the next heartbeat: {self.again}",
                notify=steps.notifies(action, step.act),
            )
        if step.act in ("tell", "nothing"):
            if self._final_word(action, index):  # the loop is over: every later `next` prints this again
                self.remember(action, index)
            else:
                self.forget()
            waiting = action == "wait"
            raise _Stop(
                you_do=here.fill(step.words),
                then=f"at the next heartbeat: {self.again}" if waiting else None,
                notify=steps.notifies(action, step.act),
                **({} if waiting else plans.outcome(self.directory)),  # a stop or the end: why, and the gates
            )

    def plan_remediation(self, action: ActionName, index: int) -> Output:
        """The one plan only the agent can make, unless the person approved it and it is rebuilt unchanged."""
        pending = plans.read_pending(self.directory)
        state = self.directory.read_model(statedir.STATE, RecurringState)
        approved = plans.recorded_approval(self.directory, ("remediation",))
        if (
            isinstance(pending, RemediationPlan)
            and pending.executed_at is None
            and pending.request_key == state.request_key
            and approved == pending.plan_hash
        ):
            return self.run("plan-remediation", reuse_pending=True)
        self.remember(action, index)
        raise _Stop(
            you_do="read the findings and choose every file the fix edits; run "
            f"{steps.command('plan-remediation', self.here, '--path P...')} (the loop's validation commands carry "
            "over)",
            findings=[finding.as_dict() for finding in plans.bound_findings(self.directory, state)],
            then=f"{self.again}, unless plan-remediation answers await-approval: then show the person its "
            "approval_summary; the wakeup is over",
            notify=steps.notifies(action, "read"),
        )

    def _pending_hash(self) -> str:
        pending = plans.read_pending(self.directory)
        if pending is None:
            raise ActError("no-plan", "no plan is pending to record as executed", path="/plan")
        return pending.plan_hash


def run_next(ctx: Context) -> Output:
    advance = _Advance(ctx)
    try:
        if ctx.options.approve_hash is not None:  # the person's reply first, refused exactly as `approve` refuses it
            advance.run("approve", hash=ctx.options.approve_hash)
        automation = advance.directory.read_model_optional(statedir.AUTOMATION, AutomationProgress)
        if advance.resumable() is None and (automation is None or automation.stage not in _RUNNING):
            advance.bootstrap(automation)
        elif automation is not None and automation.stage == "delete-requested" and advance.resumable() is None:
            advance.deleting()  # a rejected bootstrap's delete, outside any wakeup
        elif automation is not None and automation.stage == "deleted" and advance.resumable() is None:
            raise _Stop(
                you_do="nothing: the loop is over (`loop.py status` says how it ended)",
                then=None,
                notify=True,
                **plans.outcome(advance.directory),
            )
        else:
            advance.wakeup()
    except _Stop as stop:
        return {"did": advance.did, "action": verdicts.last_action(advance.directory), **advance.seen, **stop.told}
    except ActError as error:
        error.details = {**error.details, "did": advance.did, "notify": True}  # a refusal: the person is told
        raise
    raise AssertionError("next always stops")  # pragma: no cover


def _shown(command: str, given: Mapping[str, object]) -> str:
    """The single command as a person would type it (``did``, progress lines, ``refused_in``)."""
    words = ["loop.py", command]
    for name, value in given.items():
        flag = _FLAGS.get(name, "--" + name.replace("_", "-"))
        text = str(value)
        if value is True:
            words.append(flag)
        elif text.startswith("-"):  # a value that looks like a flag is glued to its own
            words.append(f"{flag}={shlex.quote(text)}")
        else:
            words += [flag, shlex.quote(text)]
    return " ".join(words)  # as a shell takes it back


# Options whose flag is not their name (act/flags.py, ``dest``).
_FLAGS = {"automation_id": "--id", "continue_wakeup": "--continue", "approve_hash": "--approve"}
