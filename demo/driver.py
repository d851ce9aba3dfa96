"""One demo run: the person's local change, the approval-gated start, the bootstrap and the wakeups.

The loop is driven only through ``scripts/loop`` (demo/agent.py) and
Codex's automation tool with the payloads it printed. The World is touched
directly only for other actors: Codex (scripted reviews), the person (the
local change, the approvals by exact hash), someone else pushing over the
head branch or closing the pull request (demo/scenarios.py).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from act.core import steps as table
from demo.agent import Agent, Missing, Refused
from demo.stack import CHANGED_FILE, HEAD_BRANCH, Stack

TITLE = "Fix the greeting"
BODY = "The greeting said helo."
VALIDATION = ["/usr/bin/test", "-f", CHANGED_FILE]
CLEANUP_STOPS = set(table.CLEANUP_STOPS)
STOPS = {*table.CLEANUP_STOPS, "state-inconsistency"}
MAX_WAKEUPS = 40


@dataclass
class Step:
    at: str
    name: str
    action: str
    reasons: list[str]
    plan_hash: str | None


@dataclass
class Run:
    stack: Stack
    out: TextIO
    hooks: dict[str, Callable[[Run], None]] = field(default_factory=dict)
    steps: list[Step] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    refusals: list[dict[str, Any]] = field(default_factory=list)
    approvals_due: list[str] = field(default_factory=list)
    automation_id: str | None = None
    automation_key: str | None = None
    pr_number: int | None = None
    run_id: str | None = None
    final: str | None = None
    edits: int = 0
    interrupted: bool = False
    cleanup_outcome: str | None = None
    plan_hash: str | None = None  # the plan the agent last saw (a row's H)
    approved: set[str] = field(default_factory=set)
    executed: set[str] = field(default_factory=set)
    fired: set[str] = field(default_factory=set)  # the one-time hooks that already fired in this run
    after_finalization: dict[str, Any] | None = None  # `loop.py status` once the loop is done (a scenario's hook)

    def __post_init__(self) -> None:
        self.agent = Agent(self.stack, out=self.out)
        self.started = self.stack.world.clock.now

    # -- printing --------------------------------------------------------------

    def elapsed(self, moment: datetime | None = None) -> str:
        seconds = int(((moment or self.stack.world.clock.now) - self.started).total_seconds())
        return f"T+{seconds // 3600:02d}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"

    def step(self, name: str, result: dict[str, Any] | None = None, *, action: str | None = None) -> None:
        result = result or {}
        evaluation = result.get("evaluation") or {}
        action = (
            action
            or result.get("action")
            or evaluation.get("action")
            or ("ok" if result.get("ok", True) else "refused")
        )
        reasons = list(result.get("reasons") or evaluation.get("reasons") or [])
        if not result.get("ok", True):
            reasons = [error.get("code", "?") for error in result.get("errors", [])]
        plan_hash = result.get("plan_hash") or result.get("initial_plan_hash")
        self.steps.append(Step(self.elapsed(), name, action, reasons, plan_hash))
        short = plan_hash[:12] if plan_hash else "-"
        print(
            f"{self.elapsed():>11}  {name:<22} {action:<24} plan {short:<12} {','.join(reasons)}",
            file=self.out,
            flush=True,
        )

    def note(self, text: str) -> None:
        print(f"{self.elapsed():>11}  {text}", file=self.out, flush=True)

    def hook(self, name: str) -> None:
        if name in self.hooks:
            self.hooks[name](self)

    # -- the start ---------------------------------------------------------------

    def start_loop(self) -> None:
        checkout = self.stack.checkout / CHANGED_FILE
        checkout.write_text("print('hello')\n", encoding="utf-8")  # the person's local change
        self.note(f"person: edited {CHANGED_FILE} in a checkout cloned from https://github.com/{self.stack.repository}")
        made = self.agent.loop(
            "init",
            "--checkout",
            str(self.stack.checkout),
            "--repository",
            self.stack.repository,
            "--base",
            "main",
            "--head",
            HEAD_BRANCH,
            "--path",
            CHANGED_FILE,
            "--command",
            json.dumps(VALIDATION),
            "--create-branch",
            "--commit",
            "--push",
            "--mode",
            "approval-gated",
            "--title",
            TITLE,
            "--body",
            BODY,
        )
        self.agent.state_dir, self.run_id = made["state_dir"], made["run_id"]
        self.step("init", made, action="await-approval")
        self.show_summary(made.get("approval_summary"))
        self.approve(made["initial_plan_hash"])
        self.hook("before-initial-execute")
        self.start_running(made)

    def start_running(self, made: dict[str, Any]) -> None:
        """From the approved initial plan to a live automation, one command at a time."""
        initial = self.execute("execute (initial)")
        self.executed.add(made["initial_plan_hash"])
        self.pr_number = (initial.get("facts") or {}).get("pr_number")
        self.hook("after-initial")
        self.bootstrap()

    def show_summary(self, summary: Any) -> None:
        if not isinstance(summary, dict):
            return
        for key in ("plan_hash", "mode", "operations", "paths", "how_to_approve"):
            if key in summary:
                value = summary[key]
                text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
                print(f"{'':>11}    summary {key}: {text[:110]}", file=self.out)

    def approve(self, plan_hash: str) -> None:
        """The person replies with the exact hash shown; the agent records it verbatim."""
        self.note(f"person: approves {plan_hash}")
        self.approved.add(plan_hash)
        self.step("approve", self.agent.loop("approve", "--hash", plan_hash), action="approved")

    def execute(self, name: str) -> dict[str, Any]:
        result = self.agent.loop("execute")
        performed = [p["operation"] for p in result.get("performed", [])]
        self.step(name, result, action=",".join(performed) or "nothing")
        return result

    # -- the automation ------------------------------------------------------------

    def bootstrap(self) -> None:
        self.stack.world.clock.advance(20)  # the bootstrap is observed after the request
        created = self.agent.loop("automation-create", "--pr", str(self.pr_number))
        self.automation_key = created["automation_key"]
        answer = self.agent.tool(created["payload"])
        self.automation_id = answer["automationId"]
        verified = self.agent.loop("verify-automation", "--id", self.automation_id)
        self.step("automation-create", verified, action=verified["outcome"])
        if verified["outcome"] == "created-active":  # the host saved it ACTIVE: paused before anything else
            self.agent.tool(verified["payload"])
            verified = self.agent.loop("verify-automation")
            self.step("automation-pause", verified, action=verified["outcome"])
        self.agent.tool(self.agent.loop("automation-prompt")["payload"])
        activate = self.agent.loop("verify-automation")
        self.step("automation-prompt", activate, action=activate["outcome"])
        self.agent.tool(activate["payload"])
        active = self.agent.loop("verify-automation")
        self.step("automation-activate", active, action=active["outcome"])

    # -- the wakeups -----------------------------------------------------------------

    def run_wakeups(self) -> None:
        for _ in range(MAX_WAKEUPS):
            if self.final is not None:
                return
            due = self.stack.host.next_wakeup(self.automation_id) if self.automation_id else None
            if due is None:
                self.final = self.final or "no-automation"
                return
            self.stack.world.clock.advance_to(due)
            woken, self.stack.woken[:] = list(self.stack.woken), []
            for _automation, moment in woken:
                self.note(f"heartbeat {moment.strftime('%H:%M:%S')}")
                self.hook("wakeup")
                self.one_wakeup()
                if self.final is not None:
                    return
        self.final = "too-many-wakeups"

    def one_wakeup(self) -> None:
        for plan_hash in self.approvals_due:  # the person's reply in the thread reaches this wakeup
            self.approve(plan_hash)
        self.approvals_due.clear()
        result = self.wake()
        if result is not None:
            self.follow(result)

    def follow(self, answer: dict[str, Any]) -> None:
        """Do the emitted action's row of the steps table (act/core/steps.py), each command as written there."""
        action = answer["action"]
        if action not in table.WAKEUP:
            self.final = f"unhandled-{action}"
            return
        if action == "done" or action in STOPS:
            self.final = action
        for step in table.WAKEUP[action]:
            if isinstance(step, table.Do):
                answer = self.act(step, answer) or answer
                continue
            result = self.command(step)
            if result is None or self.final in ("failed", "refused-wakeup") or self.interrupted:
                self.interrupted = False
                return
            answer = result
            if step.obey:
                self.follow(answer)
                return
        if action == "finish-finalization":  # its row done: the loop is finished
            self.final = "done"

    def command(self, step: table.Run) -> dict[str, Any] | None:
        """One Run of a row, its placeholders filled in as the agent knows them."""
        args = step.args
        if step.command == "plan-remediation" and self.reuse_pending():
            args = "--reuse-pending"  # the row's alternative: the plan the person approved
        filled = table.Where(key=self.automation_key, plan_hash=self.plan_hash).fill(args).replace("P...", CHANGED_FILE)
        extra = shlex.split(filled)
        if step.command == "wakeup":
            return self.wake(*[a for a in extra if a != "--automation-key" and a != str(self.automation_key)])
        if step.command == "automation-delete" and self.final in CLEANUP_STOPS:
            return self.cleanup_delete()
        result = self.agent.loop(step.command, *extra)
        self.plan_hash = result.get("plan_hash") or self.plan_hash
        self.record(step.command, result)
        return result

    def record(self, command: str, result: dict[str, Any]) -> None:
        if command == "execute":
            performed = [p["operation"] for p in result.get("performed", [])]
            self.step("execute", result, action=",".join(performed) or "nothing")
        elif command == "verify-automation":
            named = "automation-delete" if result["outcome"] == "deleted" else "verify-automation"
            self.step(named, result, action=result["outcome"])
            if self.final is not None:
                self.cleanup_outcome = result["outcome"]
        elif command in ("plan-remediation", "plan-finalization"):
            self.step(command, result)
        elif command == "claim":
            self.step("claim", result, action=result.get("outcome", "claimed"))
            self.hook("after-claim")
        elif command == "record-executed" and self.plan_hash:
            self.executed.add(self.plan_hash)

    def act(self, step: table.Do, answer: dict[str, Any]) -> dict[str, Any] | None:
        """The agent's own acts in a row: show a summary, write the fix, pass a payload."""
        if step.act == "show":
            self.show_summary(answer.get("approval_summary"))
            self.approvals_due.append(answer["plan_hash"])  # the person answers before the next wakeup
        elif step.act == "edit":
            self.scripted_fix()
        elif step.act == "tool" and "payload" in answer:
            self.agent.tool(answer["payload"])
        return None

    def cleanup_delete(self) -> dict[str, Any] | None:
        """A cleanup stop's automation-delete: the hands may refuse it; then nothing else is written."""
        try:
            return self.agent.loop("automation-delete")
        except Refused as refused:
            self.step("automation-delete", refused.result)
            self.cleanup_outcome = "refused: " + ",".join(e.get("code", "?") for e in refused.result.get("errors", []))
            return None

    def reuse_pending(self) -> bool:
        """The plan the agent last saw was approved by the person and not yet carried out: rebuild it."""
        return self.plan_hash in self.approved and self.plan_hash not in self.executed

    def wake(self, *extra: str) -> dict[str, Any] | None:
        try:
            result = self.agent.loop("wakeup", "--automation-key", str(self.automation_key), *extra)
        except RuntimeError as failed:  # a command that broke its one-JSON-line contract
            self.note(f"failed: {failed}")
            self.final = "failed"
        except Refused as refused:
            self.refusals.append(refused.result)
            self.step("wakeup" + (" --continue" if extra else ""), refused.result)
            if "wakeup-refused" in self.hooks:
                self.hook("wakeup-refused")
            else:
                self.final = "refused-wakeup"
            return None
        self.step("wakeup" + (" --continue" if extra else ""), result)
        return result

    def scripted_fix(self) -> None:
        """The agent's one free act: the fix for Codex's finding, written in place (path records bind file identity)."""
        self.edits += 1
        path = self.stack.checkout / CHANGED_FILE
        with open(path, "r+", encoding="utf-8") as handle:
            content = handle.read()
            handle.seek(0)
            handle.truncate()
            handle.write(content + f"# round {self.edits}: the greeting is printed once\n")
        self.note(f"agent: edited {CHANGED_FILE} in place (the fix for the finding)")

    # -- the whole run ---------------------------------------------------------------

    def run(self) -> str:
        if self.guarded(self.start_loop):
            self.guarded(self.run_wakeups)
        if self.final == "done":
            self.guarded(lambda: self.hook("after-done"))
        return str(self.final)

    def guarded(self, part: Callable[[], None]) -> bool:
        """Run one part of the loop; a missing command or a refusal ends the run (``final``), never a traceback."""
        try:
            part()
            return True
        except Missing as missing:
            self.missing.append(str(missing))
            self.final = "missing"
        except RuntimeError as failed:  # a command that broke its one-JSON-line contract
            self.note(f"failed: {failed}")
            self.final = "failed"
        except Refused as refused:
            self.refusals.append(refused.result)
            self.step(refused.command, refused.result)
            self.final = f"refused-{refused.command}"
            self.hook("refused")
        return False


@dataclass
class NextRun(Run):
    """The same loop driven as SKILL.md leads: ``loop.py next``, and only the acts it hands back.

    Each ``next`` runs every mechanical step and stops at one act: pass a
    payload to the automation tool, choose the fix's paths, edit the files,
    show an approval summary to the person, or nothing until the next
    heartbeat.
    """

    reply: str | None = None  # the person's hash, passed with the next `next` (--approve)

    def approve(self, plan_hash: str) -> None:
        """The person replies with the exact hash shown; the agent passes it verbatim with its next ``next``."""
        if self.reply is not None:  # an earlier reply not passed yet: recorded on its own first
            super().approve(self.reply)
        self.note(f"person: approves {plan_hash}")
        self.approved.add(plan_hash)
        self.reply = plan_hash

    def start_running(self, made: dict[str, Any]) -> None:
        self.executed.add(made["initial_plan_hash"])
        told = self.next("next (start)")
        self.pr_number = self.stack.pulls()[-1]["number"]  # the PR the initial plan created or reused
        self.hook("after-initial")
        while told.get("then") and "heartbeat" not in told["then"]:
            told = self.act_on(told)

    def one_wakeup(self) -> None:
        for plan_hash in self.approvals_due:  # the person's reply in the thread reaches this wakeup
            self.approve(plan_hash)
        self.approvals_due.clear()
        told = self.next("next")
        while self.final is None and told:  # an empty answer: this wakeup is over for the agent
            if told.get("then") is None:
                self.final = self.ended(told)
            elif "heartbeat" in told["then"]:
                return
            else:
                told = self.act_on(told)

    def next(self, name: str, *args: str) -> dict[str, Any]:
        if self.reply is not None:
            args, self.reply = ("--approve", self.reply, *args), None
        try:
            told = self.agent.loop("next", *args)
        except Refused as refused:
            self.refusals.append(refused.result)
            self.step(name, refused.result)
            if "wakeup-refused" in self.hooks:
                self.hook("wakeup-refused")
                return {}
            inner = str(refused.result.get("refused_in", "loop.py next")).split()[1]
            raise Refused(inner, refused.result) from None
        for done in told.get("did", []):
            if done.get("outcome") == "deleted":
                self.cleanup_outcome = "deleted"
            command = done["command"].split()[1]
            self.step(command, {**done, "ok": True}, action="approved" if command == "approve" else None)
        self.automation_key = self.automation_key or self._key()
        if "approval_summary" in told and "approve" in told.get("you_do", ""):
            self.show_summary(told["approval_summary"])
            self.approvals_due.append(told["approval_summary"]["plan_hash"])
        return told

    def _key(self) -> str | None:
        record = self.stack.host.read(self.automation_id) if self.automation_id else None
        return None if record is None else str(record["name"])

    def act_on(self, told: dict[str, Any]) -> dict[str, Any]:
        """The one act ``next`` handed back, then ``next`` again."""
        if "payload" in told:
            answer = self.agent.tool(told["payload"])
            if "--id ID" in told["then"]:
                self.automation_id = answer["automationId"]
                return self.next("next --id", "--id", str(self.automation_id))
        elif "edit_safely" in told:
            self.hook("after-claim")  # the wakeup holds its claim while the agent edits
            if self.interrupted or self.final is not None:
                self.interrupted = False
                return {}
            self.scripted_fix()
        elif "findings" in told and "plan-remediation" in told["you_do"]:
            self.step("plan-remediation", self.agent.loop("plan-remediation", "--path", CHANGED_FILE))
            planned = self.agent.results[-1][1]
            if planned["action"] == "await-approval":  # the person answers before the next heartbeat
                self.show_summary(planned.get("approval_summary"))
                self.approvals_due.append(planned["plan_hash"])
                return {}
        elif not told.get("again"):
            self.final = f"unhandled: {told.get('you_do')}"
            return {}
        return self.next("next")

    def ended(self, told: dict[str, Any]) -> str:
        """How the loop ended: the evaluator's last action (done, a stop or state-inconsistency)."""
        action = str(told.get("action") or "")
        if action == "finish-finalization":
            return "done"
        return action or "stopped"
