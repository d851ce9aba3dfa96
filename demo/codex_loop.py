"""A whole approval-gated loop driven through the real Codex CLI, the model played by a script.

The pieces are the real ones a person has: the skill installed with
``python install.py`` into a temporary HOME, the ``codex`` binary running
``codex exec`` for the first turn and ``codex exec resume`` for every later
one (each heartbeat a resumed turn of the same thread, as the desktop app's
heartbeat is), Codex's own shell tool running every command. The simulator
(demo/stack.py) plays GitHub, Codex review and the desktop app's automation
host; the scripted provider (simulator/model_provider.py) plays the model.

The model (:class:`SkillAgent`) follows SKILL.md literally: it runs
``SKILL_DIR/scripts/loop`` commands through ``exec_command``, polls a command
still running with ``write_stdin`` (never starts it again), reads the one
JSON line each command prints and does the act ``next`` hands back. Codex's
CLI has no automation tool, so the model passes each payload to the
simulator's automation host itself, as the desktop app's
``automation_update`` would, and goes on. Like the demo, it adds
``--observed-at`` (the simulated clock: the heartbeats are compressed) to
every command and the route flags to ``init``.

:func:`run_loop` returns what the test and ``bench/codex_loop.py`` read:
the turns, every request Codex sent, and every command's full output as
Codex's own event stream (``codex exec --json``) reported it.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO

from demo.scenarios import FINDING
from demo.stack import CHANGED_FILE, HEAD_BRANCH, Stack, start
from simulator.clock import SimClock
from simulator.codex import CodexReviewer
from simulator.model_provider import (
    ENV_KEY,
    ResponsesProvider,
    ToolOutput,
    assistant_message,
    config_toml,
    function_call,
    input_text,
    parse_tool_output,
)

SKILL = "github-codex-pr-loop"
TITLE = "Fix the greeting"
BODY = "The greeting said helo."
VALIDATION = ["/usr/bin/test", "-f", CHANGED_FILE]
CODEX_DELAY_SECONDS = 180  # Codex review answers three simulated minutes after a request, as in the demo
MAX_TURNS = 30
TURN_TIMEOUT_SECONDS = 600
FIXED = "print('hello')\n# the greeting is printed once\n"  # the fix the model writes for Codex's finding
_HASH = re.compile(r"\b[0-9a-f]{64}\b")
_LOOP_COMMAND = re.compile(r"`(loop\.py [^`]+)`")
_ADDED_BY_CODEX = ("<skill>", "<environment_context>")
_SKILL_PATH = re.compile(r"<path>([^<]*/" + SKILL + r"/SKILL\.md)</path>")


class ScriptError(Exception):
    """The model met something SKILL.md does not tell it how to handle."""


@dataclass
class Task:
    """What the person asks for in the first prompt (the route flags are this machine's way to github.com)."""

    checkout: str
    repository: str
    route: list[str]

    def prompt(self) -> str:
        task = {
            "checkout": self.checkout,
            "repository": self.repository,
            "base": "main",
            "head": HEAD_BRANCH,
            "paths": [CHANGED_FILE],
            "validation": VALIDATION,
            "title": TITLE,
            "body": BODY,
            "mode": "approval-gated",
            "route_flags": self.route,
        }
        return (
            f"Use ${SKILL} to carry my local change to a new pull request, approval-gated, and loop Codex review "
            f"on it.\nTask JSON: {json.dumps(task)}"
        )


@dataclass
class SkillAgent:
    """The model: SKILL.md as a deterministic script. ``respond`` gets each request body Codex sends."""

    clock: SimClock
    host: Any  # simulator.automations.AutomationHost: the desktop app's automation_update
    skill_dir: str | None = None
    checkout: str | None = None  # from the person's task
    state_dir: str | None = None
    after: str | None = None  # the command `next` said to run after the act the agent is doing
    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    answers: list[dict[str, Any]] = field(default_factory=list)  # every command's JSON line, in order

    def respond(self, request: dict[str, Any]) -> list[dict[str, Any]]:
        items = request["input"]
        self.skill_dir = self.skill_dir or _skill_dir(items)
        last = items[-1]
        if last.get("type") == "message" and last.get("role") == "user":
            return self.start_turn(_prompt(items))
        if last.get("type") != "function_call_output":
            raise ScriptError(f"a request ending in {last.get('type')}")
        latest = parse_tool_output(last["output"])
        if latest.session_id is not None:  # still running: poll it, never start it again
            return [function_call("write_stdin", {"session_id": latest.session_id, "chars": ""})]
        command, output = _finished_command(items)
        return self.on_output(command, output)

    # -- a new turn: the person's prompt, their reply, or a heartbeat ---------------------------

    def start_turn(self, prompt: str) -> list[dict[str, Any]]:
        if "Task JSON:" in prompt:
            task = json.loads(prompt.split("Task JSON:", 1)[1])
            self.checkout = task["checkout"]
            return [self.loop(*self.init_args(task))]
        if self.state_dir is None:
            raise ScriptError("a turn before the loop was started")
        hashes = _HASH.findall(prompt)
        if "Bootstrap checkpoint JSON" in prompt:  # the automation's prompt: a heartbeat
            return [self.loop("next", "--state-dir", self.state_dir)]
        if len(hashes) == 1:  # the person's reply naming the plan hash, passed exactly as written
            return [self.loop("next", "--state-dir", self.state_dir, "--approve", hashes[0])]
        raise ScriptError(f"a prompt SKILL.md gives no step for: {prompt[:200]!r}")

    def init_args(self, task: dict[str, Any]) -> list[str]:
        paths = [arg for path in task["paths"] for arg in ("--path", path)]
        return [
            "init",
            "--checkout",
            task["checkout"],
            "--repository",
            task["repository"],
            "--base",
            task["base"],
            "--head",
            task["head"],
            *paths,
            "--command",
            json.dumps(task["validation"]),
            "--create-branch",
            "--commit",
            "--push",
            "--mode",
            task["mode"],
            "--title",
            task["title"],
            "--body",
            task["body"],
            *task["route_flags"],
        ]

    # -- a command finished: its one JSON line says what comes next -----------------------------

    def on_output(self, command: str, output: str) -> list[dict[str, Any]]:
        if not command.startswith(f"{self.skill_dir}/scripts/loop "):  # the agent's own edit
            return [self.run_then(self._take_after())]
        answer = _json_line(output)
        self.answers.append(answer)
        if not answer.get("ok"):
            errors = "; ".join(f"{e.get('code')}: {e.get('message')}" for e in answer.get("errors", []))
            return [assistant_message(f"The loop refused: {errors}")]
        name = answer.get("command")
        if name == "init":
            self.state_dir = answer["state_dir"]
            return [self.show(answer["approval_summary"])]
        if name == "plan-remediation":
            if answer.get("action") == "await-approval":
                return [self.show(answer["approval_summary"])]
            return [self.run_then(self._take_after())]
        if name == "next":
            return self.on_next(answer)
        raise ScriptError(f"an answer of {name!r}, which the agent never runs")

    def on_next(self, told: dict[str, Any]) -> list[dict[str, Any]]:
        then, you_do = told.get("then"), str(told.get("you_do", ""))
        if "payload" in told:  # the desktop app's automation tool, called with the payload unchanged
            answer = self.host.automation_update(told["payload"])
            self.tool_calls.append({"payload": told["payload"], "answer": answer})
            return [self.run_then(str(then).replace(" ID`", f" {answer.get('automationId')}`"))]
        if "edit_safely" in told:
            self.after = then
            return [self.edit(told["paths"])]
        if "findings" in told and "plan-remediation" in you_do:
            self.after = then
            paths = [arg for path in sorted({f["path"] for f in told["findings"]}) for arg in ("--path", path)]
            return [self.loop("plan-remediation", "--state-dir", str(self.state_dir), *paths)]
        if "approval_summary" in told and "approve" in you_do:
            return [self.show(told["approval_summary"])]
        if then is None:  # the loop is over: tell the person
            gates = json.dumps(told.get("gates")) if "gates" in told else "none given"
            return [
                assistant_message(
                    f"The loop is over: action {told.get('action')}, reasons {told.get('reasons')}, gates {gates}. "
                    f"{you_do}"
                )
            ]
        if "heartbeat" in then:  # nothing more this wakeup
            return [assistant_message(f"Nothing more now: {you_do}")]
        if told.get("again"):
            return [self.run_then(then)]
        raise ScriptError(f"a `next` answer with no row in SKILL.md's table: {you_do!r}")

    # -- the agent's acts -----------------------------------------------------------------------

    def loop(self, *args: str) -> dict[str, Any]:
        """One ``SKILL_DIR/scripts/loop`` command through Codex's shell tool, at the simulated instant."""
        if self.skill_dir is None:
            raise ScriptError("Codex gave the model no path for the skill")
        self.clock.advance(timedelta(seconds=1))  # time passes between two commands, as in the demo
        argv = [f"{self.skill_dir}/scripts/loop", *args, "--observed-at", self.clock.iso()]
        return function_call("exec_command", {"cmd": shlex.join(argv)})

    def run_then(self, then: str | None) -> dict[str, Any]:
        found = _LOOP_COMMAND.search(then or "")
        if found is None:
            raise ScriptError(f"no command to run in {then!r}")
        return self.loop(*shlex.split(found[1])[1:])

    def edit(self, paths: list[str]) -> dict[str, Any]:
        """The fix, written in place with the shell's ``>`` (SKILL.md: never a rename over the file)."""
        if paths != [CHANGED_FILE]:
            raise ScriptError(f"a fix of {paths}, which this script has no edit for")
        command = f"printf %s {shlex.quote(FIXED)} > {shlex.quote(paths[0])}"
        return function_call("exec_command", {"cmd": command, "workdir": str(self.checkout)})

    def show(self, summary: dict[str, Any]) -> dict[str, Any]:
        operations = ", ".join(str(o) for o in summary.get("operations", []))
        return assistant_message(
            f"A plan awaits your approval: {operations}.\nplan_hash: {summary['plan_hash']}\n"
            "Reply with the full hash to approve it."
        )

    def _take_after(self) -> str | None:
        after, self.after = self.after, None
        return after


def _skill_dir(items: list[dict[str, Any]]) -> str | None:
    """Where Codex says the skill is: the path of the SKILL.md it injected for ``$github-codex-pr-loop``."""
    for item in items:
        found = _SKILL_PATH.search(input_text(item))
        if found:
            return found[1].rsplit("/", 1)[0]
    return None


def _prompt(items: list[dict[str, Any]]) -> str:
    """The turn's prompt: the last user message that is not context Codex added (a skill, the environment)."""
    for item in reversed(items):
        if item.get("type") == "message" and item.get("role") == "user":
            text = input_text(item)
            if not text.startswith(_ADDED_BY_CODEX):
                return text
    raise ScriptError("a turn without a prompt")


def _finished_command(items: list[dict[str, Any]]) -> tuple[str, str]:
    """The last ``exec_command`` and its whole output: its own chunk and every poll's after it."""
    calls = {item["call_id"]: item for item in items if item.get("type") == "function_call"}
    outputs: list[str] = []
    for item in reversed(items):
        if item.get("type") != "function_call_output":
            continue
        call = calls[item["call_id"]]
        outputs.insert(0, parse_tool_output(item["output"]).output)
        if call["name"] == "exec_command":
            return json.loads(call["arguments"])["cmd"], "".join(outputs)
    raise ScriptError("a tool output without its command")


def _json_line(output: str) -> dict[str, Any]:
    """The command's one JSON line: the last line that is a JSON object (progress lines may come before it)."""
    for line in reversed(output.splitlines()):
        if line.startswith("{"):
            try:
                parsed = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(parsed, dict):
                return parsed
    raise ScriptError(f"no JSON line in {output[-300:]!r}")


# -- the run ---------------------------------------------------------------------------------------


@dataclass
class Turn:
    kind: str  # start, reply (the person's approval), heartbeat
    prompt: str
    requests: range  # indexes into LoopRun.requests
    events: list[dict[str, Any]]  # what `codex exec --json` printed
    seconds: float

    @property
    def last_message(self) -> str:
        messages = [e["item"]["text"] for e in self.events if _completed(e, "agent_message")]
        return messages[-1] if messages else ""

    def commands(self) -> list[dict[str, Any]]:
        """Each command Codex ran in this turn, with its whole output (``aggregated_output``)."""
        return [e["item"] for e in self.events if _completed(e, "command_execution")]


def _completed(event: dict[str, Any], kind: str) -> bool:
    return event.get("type") == "item.completed" and event.get("item", {}).get("type") == kind


@dataclass
class LoopRun:
    final: str
    turns: list[Turn]
    requests: list[dict[str, Any]]
    request_sizes: list[int]
    failures: list[str]  # the scripted model's own errors
    agent: SkillAgent
    stack: Stack
    skill_md_bytes: int
    automation_prompt: str | None

    def function_calls(self, name: str) -> list[dict[str, Any]]:
        """Every call of ``name`` the model made (each is in the request after it, once)."""
        seen: dict[str, dict[str, Any]] = {}
        for request in self.requests:
            for item in request["input"]:
                if item.get("type") == "function_call" and item["name"] == name:
                    seen[item["call_id"]] = item
        return list(seen.values())

    def tool_outputs(self) -> list[tuple[dict[str, Any], ToolOutput]]:
        """Every shell tool output the model received, with its call, in order."""
        calls: dict[str, dict[str, Any]] = {}
        received: dict[str, tuple[dict[str, Any], ToolOutput]] = {}
        for request in self.requests:
            for item in request["input"]:
                if item.get("type") == "function_call":
                    calls[item["call_id"]] = item
                elif item.get("type") == "function_call_output" and item["call_id"] not in received:
                    received[item["call_id"]] = (calls[item["call_id"]], parse_tool_output(item["output"]))
        return list(received.values())

    def commands_seen(self) -> list[tuple[str, str, str]]:
        """Each command Codex ran: (its ``cmd``, the output the model received over all its chunks, the full output).

        The model's side is every ``exec_command`` answer and the ``write_stdin`` polls after it; the
        full output is Codex's own record of the command (``aggregated_output`` in ``codex exec --json``).
        """
        seen: list[tuple[str, list[str]]] = []
        for call, output in self.tool_outputs():
            if call["name"] == "exec_command":
                seen.append((json.loads(call["arguments"])["cmd"], [output.output]))
            elif call["name"] == "write_stdin" and seen:
                seen[-1][1].append(output.output)
        full = [item["aggregated_output"] for turn in self.turns for item in turn.commands()]
        if len(full) != len(seen):
            raise AssertionError(f"Codex ran {len(full)} commands, the model started {len(seen)}")
        return [(cmd, "".join(chunks), whole) for (cmd, chunks), whole in zip(seen, full, strict=True)]

    def injected(self, turn: Turn) -> dict[str, int]:
        """The bytes (UTF-8 text) Codex adds to the thread for a turn: the prompt, SKILL.md, the rest.

        Read off the turn's first request: its messages that the request before it did not hold,
        but for the model's own closing message of the turn before.
        """
        first = self.requests[turn.requests.start]["input"]
        before = self.requests[turn.requests.start - 1]["input"] if turn.requests.start > 0 else []
        known = {json.dumps(item, sort_keys=True) for item in before}
        sizes = {"prompt": 0, "skill": 0, "other": 0}
        for item in first:
            if json.dumps(item, sort_keys=True) in known or item.get("type") != "message":
                continue
            if item.get("role") == "assistant":
                continue
            text = input_text(item)
            kind = "prompt" if text == turn.prompt else "skill" if _SKILL_PATH.search(text) else "other"
            sizes[kind] += len(text.encode())
        return sizes


def install_skill(source: Path, home: Path) -> Path:
    """``python install.py`` from ``source`` into ``home`` (the locked packages of this interpreter, offline)."""
    completed = subprocess.run(
        [sys.executable, str(source / "install.py"), "--python-env-from", "current"],
        env={"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"},
        cwd=source,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if completed.returncode != 0:
        raise RuntimeError(f"install.py failed: {completed.stderr.strip()[-800:]}")
    return home / ".agents" / "skills" / SKILL


@dataclass
class _Codex:
    binary: str
    stack: Stack
    environment: dict[str, str]
    provider: ResponsesProvider
    out: TextIO | None

    def turn(self, kind: str, prompt: str, thread: str | None) -> Turn:
        first, began = len(self.provider.requests), time.monotonic()
        resume = ["resume"] if thread else []
        argv = [self.binary, "exec", *resume, "--json", "--strict-config", *([thread] if thread else []), prompt]
        completed = subprocess.run(
            argv,
            cwd=self.stack.checkout,
            env=self.environment,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=TURN_TIMEOUT_SECONDS,
            check=False,
        )
        events = [json.loads(line) for line in completed.stdout.splitlines() if line.startswith("{")]
        turn = Turn(kind, prompt, range(first, len(self.provider.requests)), events, time.monotonic() - began)
        if completed.returncode != 0:
            raise RuntimeError(f"codex exec ({kind}) exited {completed.returncode}: {completed.stderr.strip()[-800:]}")
        if self.out is not None:
            print(
                f"  {kind:<9} {len(turn.requests):>2} requests {turn.seconds:5.1f} s: {turn.last_message[:90]!r}",
                file=self.out,
                flush=True,
            )
        return turn


def codex_environment(stack: Stack, binary: str) -> dict[str, str]:
    """The person's environment: the temporary HOME (the skill), CODEX_HOME (the automations), no token."""
    environment = stack.environment()
    # The CLI's own directory first (npm's launcher needs node, found on the rest of PATH).
    environment["PATH"] = os.pathsep.join([str(Path(binary).parent), os.environ.get("PATH", "/usr/bin:/bin")])
    environment[ENV_KEY] = "dummy-not-a-credential"
    return environment


def run_loop(
    scratch: Path,
    skill_source: Path,
    codex: str,
    out: TextIO | None = None,
    *,
    sandbox_mode: str = "danger-full-access",
    config_extra: str = "",
) -> LoopRun:
    """One happy approval-gated loop (a finding, its fix, a clean review, finalization) through Codex.

    ``skill_source`` is the checkout the skill is installed from (``python install.py``); the
    simulator and this script are this checkout's. ``sandbox_mode`` and ``config_extra`` (more
    ``config.toml``, e.g. a ``[sandbox_workspace_write]`` table) are every turn's settings: ``codex
    exec resume`` takes them from ``config.toml`` only.
    """
    stack = start(scratch)
    provider: ResponsesProvider | None = None
    try:
        CodexReviewer(stack.world, [FINDING, "clean"], delay=CODEX_DELAY_SECONDS)
        skill_dir = install_skill(skill_source, stack.scratch / "home")
        (stack.checkout / CHANGED_FILE).write_text("print('hello')\n", encoding="utf-8")  # the person's change
        agent = SkillAgent(stack.world.clock, stack.host)
        provider = ResponsesProvider(agent.respond).start()
        (stack.host.codex_home / "config.toml").write_text(
            config_toml(provider.base_url, sandbox_mode=sandbox_mode) + config_extra, encoding="utf-8"
        )
        runner = _Codex(codex, stack, codex_environment(stack, codex), provider, out)
        turns, final, prompt = _drive(runner, stack, agent)
        return LoopRun(
            final,
            turns,
            provider.requests,
            provider.sizes,
            provider.failures,
            agent,
            stack,
            (skill_dir / "SKILL.md").stat().st_size,
            prompt,
        )
    finally:
        if provider is not None:
            provider.stop()
        stack.stop()


def _drive(runner: _Codex, stack: Stack, agent: SkillAgent) -> tuple[list[Turn], str, str | None]:
    route = [*stack.network_flags()]
    task = Task(str(stack.checkout), stack.repository, route)
    turns = [runner.turn("start", task.prompt(), None)]
    thread = next(e["thread_id"] for e in turns[0].events if e.get("type") == "thread.started")
    stack.host.current_thread_id = thread  # the desktop app's "this thread", for a heartbeat's destination
    stack.host.threads.add(thread)
    prompt: str | None = None
    while len(turns) < MAX_TURNS:
        said = turns[-1].last_message
        if said.startswith("The loop is over"):
            return turns, "done" if "finish-finalization" in said else "stopped", prompt
        if not said or said.startswith(("The loop refused", "scripted model failed")):
            return turns, "failed", prompt
        approval = re.search(r"plan_hash: ([0-9a-f]{64})", said)
        if approval:  # the person reads the plan and replies with its exact hash
            turns.append(runner.turn("reply", f"I approve plan {approval[1]}.", thread))
            continue
        automation = _the_automation(stack)
        due = stack.host.next_wakeup(automation) if automation else None
        if automation is None or due is None:
            return turns, "no-automation", prompt
        stack.world.clock.advance_to(due)
        record = stack.host.read(automation)
        assert record is not None
        prompt = record["prompt"]
        stack.woken.clear()
        turns.append(runner.turn("heartbeat", prompt, record.get("target_thread_id", thread)))
    return turns, "too-many-turns", prompt


def _the_automation(stack: Stack) -> str | None:
    found = sorted(path.parent.name for path in stack.host.root.glob("*/automation.toml"))
    return found[-1] if found else None
