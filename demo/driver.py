"""One demo run: the person's local change, the approval-gated start and the wakeups, driven as SKILL.md leads.

The agent runs ``loop.py init``, then ``loop.py next`` (with ``--approve
HASH`` once the person has replied with a plan's hash) and does only the act
each ``next`` hands back: pass a payload to Codex's automation tool, choose
the fix's paths (``plan-remediation --path``), edit the files, show an
approval summary to the person, or nothing until the next heartbeat. Every
mechanical step is ``next``'s own (act/core/steps.py, the one description of a
wakeup); the demo has no table of its own.

The World is touched directly only for other actors: Codex (scripted
reviews), the person (the local change, the approvals by exact hash),
someone else pushing over the head branch or closing the pull request
(demo/scenarios.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TextIO

from demo.agent import Agent, Missing, Refused
from demo.stack import CHANGED_FILE, HEAD_BRANCH, Stack

TITLE = "Fix the greeting"
BODY = "The greeting said helo."
VALIDATION = ["/usr/bin/test", "-f", CHANGED_FILE]
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
    """One loop, driven as SKILL.md leads: ``init``, then ``loop.py next`` and only the acts it hands back.

    Hooks (demo/scenarios.py) let other actors in at fixed moments:
    ``before-initial-execute`` (the initial plan approved, before the first
    ``next``), ``after-initial`` (the pull request exists), ``wakeup`` (each
    heartbeat, before its ``next``), ``after-claim`` (``next`` handed back the
    edit: the wakeup holds its claim), ``wakeup-refused`` (a ``next`` refused:
    the hook decides, the run goes on), ``refused`` (a refusal ended the run)
    and ``after-done``.
    """

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
    approved: set[str] = field(default_factory=set)
    reply: str | None = None  # the person's hash, passed with the next `next` (--approve)
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

    def show_summary(self, summary: Any) -> None:
        if not isinstance(summary, dict):
            return
        for key in ("plan_hash", "mode", "operations", "paths", "how_to_approve"):
            if key in summary:
                value = summary[key]
                text = value if isinstance(value, str) else json.dumps(value, separators=(",", ":"))
                print(f"{'':>11}    summary {key}: {text[:110]}", file=self.out)

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
        told = self.next("next (start)")
        self.pr_number = self.stack.pulls()[-1]["number"]  # the PR the initial plan created or reused
        self.hook("after-initial")
        while told.get("then") and "heartbeat" not in told["then"]:
            told = self.act_on(told)

    def approve(self, plan_hash: str) -> None:
        """The person replies with the exact hash shown; the agent passes it verbatim with its next ``next``."""
        if self.reply is not None:  # an earlier reply not passed yet: recorded on its own first
            self.record_reply()
        self.note(f"person: approves {plan_hash}")
        self.approved.add(plan_hash)
        self.reply = plan_hash

    def record_reply(self) -> None:
        """The person's reply recorded by the single command ``loop.py approve --hash H`` (not with a ``next``)."""
        if self.reply is not None:
            plan_hash, self.reply = self.reply, None
            self.step("approve", self.agent.loop("approve", "--hash", plan_hash), action="approved")

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
        told = self.next("next")
        while self.final is None and told:  # an empty answer: this wakeup is over for the agent
            if told.get("then") is None:
                self.final = self.ended(told)
            elif "heartbeat" in told["then"]:
                return
            else:
                told = self.act_on(told)

    def next(self, name: str, *args: str) -> dict[str, Any]:
        """``loop.py next``: each command it ran becomes a line; a refusal ends the run (or goes to its hook)."""
        if self.reply is not None:
            args, self.reply = ("--approve", self.reply, *args), None
        try:
            told = self.agent.loop("next", *args)
        except Refused as refused:
            for done in refused.result.get("did", []):
                self.record(done, {})
            if "wakeup-refused" not in self.hooks:  # the run ends (guarded), named by the command that refused
                inner = str(refused.result.get("refused_in", "loop.py next")).split()[1]
                raise Refused(inner, refused.result) from None
            self.refusals.append(refused.result)
            self.step(name, refused.result)
            self.hook("wakeup-refused")
            return {}
        did = told.get("did", [])
        last = max((i for i, done in enumerate(did) if done.get("action") == told.get("action")), default=None)
        for index, done in enumerate(did):
            self.record(done, told if index == last else {})
        self.automation_key = self.automation_key or self._key()
        if "approval_summary" in told and "approve" in told.get("you_do", ""):
            self.show_summary(told["approval_summary"])
            self.approvals_due.append(told["approval_summary"]["plan_hash"])
        return told

    def record(self, done: dict[str, Any], told: dict[str, Any]) -> None:
        """One command ``next`` ran, as a line: its name, what it answered, and (the last one) ``next``'s reasons."""
        words = done["command"].split()
        command = words[1] if len(words) > 1 else done["command"]
        name = "wakeup --continue" if command == "wakeup" and "--continue" in words else command
        if "performed" in done:
            action = ",".join(done["performed"]) or "nothing"
        elif command == "approve":
            action = "approved"
        else:
            action = done.get("action") or done.get("outcome") or "ok"
        if done.get("outcome") == "deleted":
            self.cleanup_outcome = "deleted"
        self.step(name, {"plan_hash": done.get("plan_hash"), "reasons": told.get("reasons")}, action=action)

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
            planned = self.agent.loop("plan-remediation", "--path", CHANGED_FILE)
            self.step("plan-remediation", planned)
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
