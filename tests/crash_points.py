"""Crash and resume: a whole loop killed at every write, then resumed as SKILL.md says.

Two scenarios run through ``loop.py next`` exactly as the demo's agent runs
them (demo/driver.py ``Run``: the automation tool's calls through the
simulated automation host, the person's approvals, one remediation round and
finalization):

- ``happy``: the approval-gated loop from ``init`` to ``done``;
- ``finalization``: a loop whose Codex review leaves two threads, with kill
  points only in its finalization (the draft PR marked ready, both Codex
  threads resolved, the cleanup).

A first, undisturbed run of a scenario (its *baseline*) lists the kill
points: every write the simulator receives (a REST write, a GraphQL
mutation, a git push) at each of its phases (``before`` it is applied,
``applied`` but unanswered, ``answered``), and every state-file write of the
loop (``temp``: the new file complete beside the old one, not yet renamed;
``renamed``: in place; ``answered``: the client has the answer and is killed
at the first thing it does after it, its next GitHub write, state-file write
or exit, so the kill never depends on how fast the machine is). Each kill point is then its own run:
at that point the running command's whole process group gets SIGKILL, the
agent reruns the same command (and the next heartbeat runs ``loop.py
next``), and the scenario goes on. The runs share their past: a second
undisturbed run (the *trunk*) forks one branch per kill point just before
the command it kills (``CrashAgent.branch``), so each branch pays only for
the rest of its loop. Each run must reach ``done``, apply no GitHub write twice
(the applied writes by kind are the baseline's), apply none outside a plan
the person approved (every claim names an approved plan; no kind of write
the baseline never made), and leave every state file strict JSON after every
command and at the kill.

How the kills are placed, without a hook in the skill's code: the simulator
calls ``World.write_hook`` at each phase of a write (test infrastructure);
the state-file writes are seen by an audit hook on ``os.rename`` that
``tests/crash/sitecustomize.py`` installs in every interpreter of a small
environment of the tests' own (the skill runs there as with any
``python3`` on PATH: ``-I -B``, the evaluator pin and every check intact).
Each command runs in a process group of its own.

``python -m tests.crash_points [--scenario NAME] [--match REGEX] [--stride N [--offset K]]``
prints the table of kill points that fail (exit 1 when any does), each
named ``scenario #command-index command | write | phase`` with what failed,
then the count by cause; ``--list`` names every kill point and runs none.
"""

from __future__ import annotations

import argparse
import ctypes
import io
import json
import os
import re
import shlex
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO

from demo.agent import LOOP, ROOT, Agent, Missing, Refused
from demo.driver import Run
from demo.scenarios import FINDING
from demo.stack import Stack, start
from evaluator.canonical import parse_document
from evaluator.errors import Rejected
from simulator.codex import CodexReviewer
from simulator.front import Front, LoopbackServer
from simulator.gh import gh_calls

SITECUSTOMIZE = Path(__file__).resolve().parent / "crash" / "sitecustomize.py"
DELAY_SECONDS = 180  # Codex answers three simulated minutes after a request (as the demo)
COMMAND_TIMEOUT_SECONDS = 180
BRANCH_TIMEOUT_SECONDS = 1200
PR_SET_PDEATHSIG = 1  # linux/prctl.h
GITHUB_PHASES = ("before", "applied", "answered")
STATE_PHASES = ("temp", "renamed")
PLAN_HASH = re.compile(r" plan=([0-9a-f]{64}) ")
PLAN_FILE = re.compile(r"^plans/[0-9a-f]{64}\.json$")

TWO_FINDINGS: dict[str, Any] = {
    "kind": "findings",
    "findings": [
        {
            "priority": "P2",
            "path": "src/app.py",
            "line": 1,
            "title": "Print the greeting once",
            "text": "The greeting should be printed exactly once.",
        },
        {
            "priority": "P2",
            "path": "README.md",
            "line": 1,
            "title": "Name the project",
            "text": "The README should say what gadgets does.",
        },
    ],
}


@dataclass(frozen=True)
class Scenario:
    name: str
    codex: list[Any]
    # Kill points only from the first command whose answer names this action (None: every command).
    from_action: str | None = None


SCENARIOS = {
    "happy": Scenario("happy", [FINDING, "clean"]),
    "finalization": Scenario("finalization", [TWO_FINDINGS, "clean"], from_action="plan-finalization"),
}


@dataclass(frozen=True)
class KillPoint:
    scenario: str
    command_index: int  # which command of the run (0: init)
    command: str  # as the agent typed it, shortened
    where: str  # "github" (a write the simulator received) or "state" (a state-file write)
    number: int  # github: the write's number in the run; state: the write's number in the command
    what: str  # the write's kind, or the state file
    phase: str
    finalizing: bool = False  # in or after the first command whose answer names plan-finalization

    @property
    def name(self) -> str:
        command = re.sub(r"\b([0-9a-f]{12})[0-9a-f]{20,52}\b", r"\1", self.command)  # hashes and ids shortened
        write = f"{self.where} write {self.number} {self.what}"
        return f"{self.scenario} #{self.command_index} {command} | {write} | {self.phase}"


@dataclass
class CommandRecord:
    command: str
    github: list[tuple[int, str]] = field(default_factory=list)  # (number in the run, kind)
    state: list[str] = field(default_factory=list)  # the files renamed into place, in order
    answer_actions: list[str] = field(default_factory=list)


@dataclass
class Outcome:
    point: KillPoint | None
    final: str
    killed: bool
    problems: list[str]
    applied: Counter[str]
    refusals: list[str]

    @property
    def failed(self) -> bool:
        return bool(self.problems)


class Killed(Exception):
    """The command's process group was killed at the kill point."""


# -- the environment the skill runs in ---------------------------------------------------


def crash_environment(directory: Path) -> Path:
    """A Python environment of the tests' own: this interpreter's packages, plus the audit hook. Its bin directory."""
    python = directory / "bin" / "python3"
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(directory)], check=True, timeout=120)
        probe = "import sysconfig; print(sysconfig.get_path('purelib'))"
        own = subprocess.run([str(python), "-I", "-c", probe], capture_output=True, text=True, check=True).stdout
        site = Path(own.strip())
        ours = [path for path in sys.path if path.endswith("site-packages") and Path(path).is_dir()]
        (site / "crash-test-packages.pth").write_text("".join(f"{path}\n" for path in ours), encoding="utf-8")
        (site / "sitecustomize.py").write_bytes(SITECUSTOMIZE.read_bytes())
    return directory / "bin"


# -- the agent: each command in its own process group --------------------------------------


@dataclass
class CrashAgent(Agent):
    bin_directory: Path | None = None
    scratch: Path | None = None
    target: KillPoint | None = None
    scenario: str = ""
    records: list[CommandRecord] = field(default_factory=list)
    killed_at: KillPoint | None = None
    problems: list[str] = field(default_factory=list)
    github_writes: int = 0
    applied: Counter[str] = field(default_factory=Counter)
    applied_bodies: list[str] = field(default_factory=list)
    # The trunk run branches at these commands, one forked run per kill point (``branch``).
    branches: dict[int, list[KillPoint]] = field(default_factory=dict)
    branch_outcomes: list[Outcome] = field(default_factory=list)
    result_file: Path | None = None  # set in a branch: where its outcome goes
    progress: TextIO | None = None
    _group: int | None = None
    _armed: Path | None = None  # the running command's "answered" trigger (tests/crash/sitecustomize.py)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def loop(self, command: str, *args: str, expect_ok: bool = True) -> dict[str, Any]:
        """Run the command; killed at the kill point, the agent runs the same command again (SKILL.md)."""
        try:
            return self.run_once(command, *args, expect_ok=expect_ok)
        except Killed:
            self.check_state_files("at the kill")
            return self.run_once(command, *args, expect_ok=expect_ok)

    def run_once(self, command: str, *args: str, expect_ok: bool) -> dict[str, Any]:
        if not LOOP.is_file():
            raise Missing("scripts/loop")
        assert self.bin_directory is not None and self.scratch is not None
        for point in self.branches.pop(len(self.records), []):
            if self.branch(point):
                break  # this process is the branch: it runs the command with the kill
        self.stack.world.clock.advance(timedelta(seconds=1))
        where = ["--state-dir", self.state_dir] if self.state_dir and command != "init" else []
        argv = [str(LOOP), command, *where, *args, "--observed-at", self.stack.world.clock.iso()]
        shown = self.shorten(shlex.join([command, *args]))
        index = len(self.records)
        record = CommandRecord(shown)
        self.records.append(record)
        self.transcript.append(shown)
        log = self.scratch / f"state-writes-{index}.log"
        plan = self.scratch / f"crash-plan-{index}.json"
        armed = self.scratch / f"crash-armed-{index}"
        armed.unlink(missing_ok=True)
        target = self.target
        kill_here = target is not None and target.where == "state" and target.command_index == index
        plan.write_text(
            json.dumps(
                {
                    "root": str(self.scratch / "state" / "github-codex-pr-loop"),
                    "log": str(log),
                    "kill_at": target.number if kill_here and target is not None else None,
                    "phase": target.phase if kill_here and target is not None else None,
                    "armed": str(armed),
                }
            ),
            encoding="utf-8",
        )
        environment = self.stack.environment()
        environment["PATH"] = os.pathsep.join([str(self.bin_directory), environment["PATH"]])
        environment["LOOP_CRASH_PLAN"] = str(plan)
        asked = gh_calls(self.stack.gh).count("auth token")
        process = subprocess.Popen(
            [*argv, *self.stack.network_flags()],
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=ROOT,
            start_new_session=True,  # its own process group: the kill takes the whole tree
        )
        with self._lock:
            self._group, self._armed = process.pid, armed
        try:
            stdout, stderr = process.communicate(timeout=COMMAND_TIMEOUT_SECONDS)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            raise RuntimeError(f"loop.py {command} ran longer than {COMMAND_TIMEOUT_SECONDS} s") from None
        finally:
            with self._lock:
                self._group, self._armed = None, None
            armed.unlink(missing_ok=True)
            self._reap(process.pid)
        self.token_lookups.append(gh_calls(self.stack.gh).count("auth token") - asked)
        # Each state file by its path inside its loop's directory (the run id left out).
        written = log.read_text().splitlines() if log.exists() else []
        # A plan's file is named by its hash, which differs from run to run: named by its role instead.
        record.state = [PLAN_FILE.sub("plans/<hash>.json", json.loads(line)[2].partition("/")[2]) for line in written]
        if process.returncode == -signal.SIGKILL:
            if self.killed_at is None and target is not None and (kill_here or target.where == "github"):
                self.killed_at = target
                self.check_kill_matches(target, record)
                raise Killed()
            raise RuntimeError(f"loop.py {command} was killed by someone else")
        self.check_state_files(f"after {shown}")
        lines = stdout.splitlines()
        if len(lines) != 1:
            raise RuntimeError(
                f"loop.py {command} printed {len(lines)} lines (exit {process.returncode}): "
                f"{self.shorten(stderr.strip()[-400:])}"
            )
        result: dict[str, Any] = json.loads(lines[0])
        self.results.append((command, result))
        record.answer_actions = _actions_of(result)
        if expect_ok and not result.get("ok"):
            raise Refused(command, result)
        return result

    def branch(self, point: KillPoint) -> bool:
        """Fork the run here; the child goes on with ``point`` as its kill point (True), the parent waits for it.

        Everything the run is made of is copied: the process's memory by the
        fork (the World, the automation host, the scripted Codex, the agent),
        the files by a snapshot of the scratch directory, restored once the
        branch is over. The simulator's servers are paused meanwhile, so only
        the branch serves their sockets.
        """
        assert self.scratch is not None
        snapshot = self.scratch.with_name(self.scratch.name + ".snapshot")
        result = self.scratch.with_name(f"{self.scratch.name}.outcome-{len(self.branch_outcomes)}.json")
        _remove(snapshot)
        subprocess.run(["cp", "-a", str(self.scratch), str(snapshot)], check=True)
        servers: list[Front | LoopbackServer] = [self.stack.front, *self.stack.servers]
        for server in servers:
            server.pause()
        began = time.monotonic()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)
            child = os.fork()
        if child == 0:
            try:
                _die_with_parent()
                for server in servers:
                    server.resume()
                self.target, self.result_file, self.branches, self.progress = point, result, {}, None
                return True
            except BaseException:
                os._exit(3)
        outcome = _wait_for(child, result, point)
        self.branch_outcomes.append(outcome)
        if self.progress is not None:
            verdict = "FAIL " + "; ".join(outcome.problems) if outcome.failed else "ok"
            print(
                f"[{len(self.branch_outcomes)} {time.monotonic() - began:.0f}s] {point.name}: {verdict}",
                file=self.progress,
                flush=True,
            )
        restore(snapshot, self.scratch)
        _remove(snapshot)
        for server in servers:
            server.resume()
        return False

    @staticmethod
    def _reap(group: int) -> None:
        """Nothing of a command outlives it: a git or gh child left running is killed with its group.

        The group's leader is already reaped, so its number is free once no member is left and may be another
        process's group by now (pids wrap at 32768): the group is signalled only while a member still holds
        the number, which then cannot have been given to anyone else.
        """
        if not _group_has_members(group):
            return
        try:
            os.killpg(group, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def check_kill_matches(self, target: KillPoint, record: CommandRecord) -> None:
        if target.where == "state":
            seen = record.state[target.number] if target.number < len(record.state) else None
            if seen != target.what:
                self.problems.append(f"the run diverged before the kill point: state write {target.number} was {seen}")

    # -- the simulator's writes ------------------------------------------------------

    def on_write(self, kind: str, phase: str, applied: bool | None) -> bool:
        """``World.write_hook``: count every write; at the kill point, kill the running command's process group.

        An ``answered`` kill point is armed as the write is applied, before its answer is sent (the command
        waits for it, so arming then is arming the moment it has it): the command dies at the first thing it
        does next, its next GitHub write (here, dropped) or its next state-file write or exit (in the command,
        tests/crash/sitecustomize.py).
        """
        if phase == "before":
            with self._lock:
                armed = self._armed
            if armed is not None and armed.exists():
                self._kill(f"the write after write {self.github_writes} answered")
                return True
            self.github_writes += 1
            if self.records:
                self.records[-1].github.append((self.github_writes, kind))
        number = self.github_writes
        if phase == "applied" and applied:
            self.applied[kind] += 1
        target = self.target
        if target is None or target.where != "github" or target.number != number:
            return False
        if self.killed_at is not None:
            return False
        if target.what != kind:
            if phase == "before":
                self.problems.append(f"the run diverged before the kill point: write {number} was {kind}")
            return False
        if target.phase == "answered" and phase == "applied":
            with self._lock:
                armed = self._armed
            if armed is None:
                self.problems.append(f"no command was running at write {number} applied")
            else:
                armed.touch()
            return False
        if target.phase != phase or phase == "answered":
            return False
        self._kill(f"write {number} {phase}")
        return phase == "before"  # killed before it was applied: the simulator drops it

    def _kill(self, where: str) -> None:
        with self._lock:
            group = self._group
        if group is None:
            self.problems.append(f"no command was running at {where}")
            return
        try:
            if not _group_has_members(group):  # ended and reaped: its number may be another group's by now
                raise ProcessLookupError
            os.killpg(group, signal.SIGKILL)
        except ProcessLookupError:
            self.problems.append(f"the command had ended before the kill at {where}")

    # -- state files -----------------------------------------------------------------

    def check_state_files(self, when: str) -> None:
        """Every state file (``*.json``) of every loop parses as strict JSON (the temporary files beside them aside)."""
        assert self.scratch is not None
        for path in sorted((self.scratch / "state").rglob("*")):
            if not path.is_file() or path.name.startswith(".") or path.suffix != ".json":
                continue
            try:
                parse_document(path.read_bytes())
            except Rejected as error:
                relative = path.relative_to(self.scratch / "state")
                self.problems.append(f"state file {relative} does not parse {when}: {error}")


def _actions_of(result: dict[str, Any]) -> list[str]:
    actions = [str(done.get("action")) for done in result.get("did", []) if done.get("action")]
    if result.get("action"):
        actions.append(str(result["action"]))
    return actions


# -- the run --------------------------------------------------------------------------


@dataclass
class CrashRun(Run):
    """The demo's ``next`` run, its agent a CrashAgent; a wait that never ends is cut short."""

    max_wakeups: int = 40

    def run_wakeups(self) -> None:
        """The demo's wakeups, at most ``max_wakeups`` of them (a loop that keeps waiting is not left to run 40)."""
        import demo.driver as driver

        saved = driver.MAX_WAKEUPS
        driver.MAX_WAKEUPS = self.max_wakeups
        try:
            super().run_wakeups()
        finally:
            driver.MAX_WAKEUPS = saved


@dataclass
class Trunk:
    """What a run that branches at kill points (``run_scenario(branches=...)``) gives back besides its own outcome."""

    outcomes: list[Outcome]


def run_scenario(
    scenario: Scenario,
    scratch: Path,
    bin_directory: Path,
    target: KillPoint | None,
    *,
    max_wakeups: int = 40,
    branches: dict[int, list[KillPoint]] | None = None,
    progress: TextIO | None = None,
    trunk: Trunk | None = None,
) -> tuple[Outcome, list[CommandRecord], int]:
    """One run of ``scenario``, killed at ``target`` (None: undisturbed). Its outcome, its commands, its wakeups.

    With ``branches`` (kill points by command index) the run forks one branch
    per kill point before that command; their outcomes go to ``trunk``.
    """
    stack = start(scratch)
    agent = CrashAgent(
        stack,
        out=None,
        bin_directory=bin_directory,
        scratch=scratch,
        target=target,
        branches=dict(branches or {}),
        progress=progress,
    )
    try:
        CodexReviewer(stack.world, list(scenario.codex), delay=DELAY_SECONDS)
        out = io.StringIO()
        run = CrashRun(stack, out, max_wakeups=max_wakeups)
        run.agent = agent
        stack.world.write_hook = agent.on_write
        try:
            run.run()
        except BaseException as error:
            if agent.result_file is None:
                raise
            _leave_branch(
                agent.result_file,
                Outcome(agent.target, "error", False, [f"{type(error).__name__}: {error}"], Counter(), []),
            )
        wakeups = sum(1 for line in out.getvalue().splitlines() if " heartbeat " in line)
        refusals = [
            f"{refused.get('refused_in', '')}: "
            + ",".join(str(error.get("code")) for error in refused.get("errors", []))
            for refused in run.refusals
        ]
        problems = list(agent.problems)
        if run.final != "done":
            problems.insert(0, f"ended in {run.final} ({refusals[-1] if refusals else _last_answer(agent)})")
        problems += _claims_outside_approved_plans(stack, run)
        outcome = Outcome(agent.target, str(run.final), agent.killed_at is not None, problems, agent.applied, refusals)
        if agent.target is not None and agent.killed_at is None and not any("diverged" in p for p in problems):
            outcome.problems.append("the kill point was never reached")
        if agent.result_file is not None:
            _leave_branch(agent.result_file, outcome)
        if trunk is not None:
            trunk.outcomes += agent.branch_outcomes
        return outcome, agent.records, wakeups
    finally:
        stack.world.write_hook = None
        stack.stop()


def restore(snapshot: Path, live: Path) -> None:
    """Make ``live`` hold what ``snapshot`` holds again, each file and directory that is still there kept as it is.

    Written in place, not replaced: the loop's plans bind the identity (device
    and inode) of the planned files and their directories, so a copy put back
    in their place would read as someone else's change.
    """
    kept = {entry.name for entry in os.scandir(snapshot)}
    for entry in os.scandir(live):
        if entry.name not in kept:
            _remove(Path(entry.path))
    for entry in os.scandir(snapshot):
        source, target = Path(entry.path), live / entry.name
        if entry.is_symlink():
            if target.is_symlink() or target.exists():
                _remove(target)
            os.symlink(os.readlink(source), target)
            continue
        if entry.is_dir():
            if target.is_symlink() or (target.exists() and not target.is_dir()):
                _remove(target)
            target.mkdir(exist_ok=True)
            restore(source, target)
        elif target.is_symlink() or not target.is_file():
            _remove(target)
            shutil.copy2(source, target)
        else:
            os.chmod(target, 0o600 | stat.S_IMODE(target.stat().st_mode))  # writable for the rewrite
            with open(target, "r+b") as handle:
                handle.write(source.read_bytes())
                handle.truncate()
        shutil.copystat(source, target, follow_symlinks=False)


def _die_with_parent() -> None:
    """A branch dies with the run it was forked from (Linux's PR_SET_PDEATHSIG), never outlives a killed test."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):
        pass  # elsewhere a branch ends on its own: each command has a timeout, each run a number of wakeups


def _leave_branch(result_file: Path, outcome: Outcome) -> None:
    """A branch's end: its outcome to the file its parent reads, then exit at once (no cleanup of the parent's)."""
    try:
        point = outcome.point
        result_file.write_text(
            json.dumps(
                {
                    "point": None if point is None else point.__dict__,
                    "final": outcome.final,
                    "killed": outcome.killed,
                    "problems": outcome.problems,
                    "applied": dict(outcome.applied),
                    "refusals": outcome.refusals,
                }
            ),
            encoding="utf-8",
        )
    finally:
        os._exit(0)


def _wait_for(child: int, result_file: Path, point: KillPoint) -> Outcome:
    """The branch's outcome once it exits (killed after BRANCH_TIMEOUT_SECONDS: a failing kill point)."""
    deadline = time.monotonic() + BRANCH_TIMEOUT_SECONDS
    while True:
        done, status = os.waitpid(child, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(child, signal.SIGKILL)
            os.waitpid(child, 0)
            return Outcome(
                point, "timeout", False, [f"the run took longer than {BRANCH_TIMEOUT_SECONDS} s"], Counter(), []
            )
        time.sleep(0.2)
    try:
        saved = json.loads(result_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return Outcome(
            point, "error", False, [f"the run ended without an outcome (wait status {status})"], Counter(), []
        )
    finally:
        result_file.unlink(missing_ok=True)
    return Outcome(
        point, saved["final"], saved["killed"], saved["problems"], Counter(saved["applied"]), saved["refusals"]
    )


def _last_answer(agent: CrashAgent) -> str:
    """The last answer of ``next``: its action and reasons (what a run that never ends kept hearing)."""
    answers = [result for command, result in agent.results if command == "next"]
    if not answers:
        return "no answer of next"
    last = answers[-1]
    return f"last next: {last.get('action')} {','.join(map(str, last.get('reasons') or []))}".strip()


def _claims_outside_approved_plans(stack: Stack, run: CrashRun) -> list[str]:
    problems = []
    for pull in stack.pulls():
        bodies = [c["body"] for c in stack.comments(pull["number"]) if c["user"]["login"] == "loop-owner"]
        for body in bodies:
            match = PLAN_HASH.search(body)
            if match and match.group(1) not in run.approved:
                problems.append(f"a claim names plan {match.group(1)[:12]}, which the person never approved")
        duplicates = sorted(body[:60] for body, count in Counter(bodies).items() if count > 1)
        problems += [f"comment posted twice: {body!r}" for body in duplicates]
    return problems


def kill_points(scenario: Scenario, records: list[CommandRecord]) -> list[KillPoint]:
    """Every kill point of a baseline run's commands (from the scenario's first command, if it names one)."""
    first = 0
    if scenario.from_action is not None:
        first = next(i for i, record in enumerate(records) if scenario.from_action in record.answer_actions)
    finalizing = next(i for i, record in enumerate(records) if "plan-finalization" in record.answer_actions)
    points = []
    for index, record in enumerate(records):
        if index < first:
            continue
        named: list[tuple[str, int, str, tuple[str, ...]]]
        named = [("github", number, kind, GITHUB_PHASES) for number, kind in record.github]
        named += [("state", number, name, STATE_PHASES) for number, name in enumerate(record.state)]
        points += [
            KillPoint(scenario.name, index, record.command, where, number, what, phase, index >= finalizing)
            for where, number, what, phases in named
            for phase in phases
        ]
    return points


def judge(outcome: Outcome, baseline: Outcome) -> Outcome:
    """The applied writes by kind against the baseline's: none twice, none of a kind the approved plans never made."""
    for kind, count in sorted(outcome.applied.items()):
        expected = baseline.applied.get(kind, 0)
        if expected == 0:
            outcome.problems.append(f"{kind} applied {count}x, outside every approved plan (the baseline made none)")
        elif count > expected:
            outcome.problems.append(f"{kind} applied {count}x (baseline {expected}x): applied twice")
    return outcome


# -- the enumeration ----------------------------------------------------------------------


@dataclass
class Enumeration:
    scenario: Scenario
    baseline: Outcome
    points: list[KillPoint]
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failures(self) -> list[Outcome]:
        return [outcome for outcome in self.outcomes if outcome.failed]


def baseline_of(scenario: Scenario, work: Path, bin_directory: Path) -> tuple[Outcome, list[KillPoint], int]:
    outcome, records, wakeups = run_scenario(scenario, work / "baseline", bin_directory, None)
    if outcome.failed:
        raise AssertionError(f"the undisturbed {scenario.name} run fails: {outcome.problems}")
    return outcome, kill_points(scenario, records), wakeups


def enumerate_points(
    scenario: Scenario,
    work: Path,
    bin_directory: Path,
    *,
    select: Any = None,
    progress: TextIO | None = None,
) -> Enumeration:
    """The baseline, then one run per kill point (``select(points)`` may pick a subset)."""
    baseline, points, wakeups = baseline_of(scenario, work, bin_directory)
    chosen = list(select(points)) if select is not None else points
    enumeration = Enumeration(scenario, baseline, chosen)
    branches: dict[int, list[KillPoint]] = {}
    for point in chosen:
        branches.setdefault(point.command_index, []).append(point)
    trunk = Trunk([])
    if progress is not None:
        print(f"{scenario.name}: {len(chosen)} of {len(points)} kill points", file=progress, flush=True)
    undisturbed, _, _ = run_scenario(
        scenario,
        work / "trunk",
        bin_directory,
        None,
        max_wakeups=wakeups + 6,
        branches=branches,
        progress=progress,
        trunk=trunk,
    )
    if undisturbed.failed:
        raise AssertionError(f"the undisturbed {scenario.name} run (the trunk) fails: {undisturbed.problems}")
    enumeration.outcomes = [judge(outcome, baseline) for outcome in trunk.outcomes]
    missing = {point.name for point in chosen} - {o.point.name for o in trunk.outcomes if o.point is not None}
    enumeration.outcomes += [
        Outcome(point, "never-run", False, ["the trunk never reached this command"], Counter(), [])
        for point in chosen
        if point.name in missing
    ]
    _remove(work / "trunk")
    return enumeration


def _remove(path: Path) -> None:
    subprocess.run(["rm", "-rf", str(path)], check=False)


def table(enumerations: list[Enumeration]) -> str:
    """The failing kill points, one line each, and a count by cause."""
    lines = []
    causes: Counter[str] = Counter()
    total = sum(len(e.points) for e in enumerations)
    failing = [outcome for e in enumerations for outcome in e.failures]
    for outcome in failing:
        assert outcome.point is not None
        lines.append(f"{outcome.point.name}: {'; '.join(outcome.problems)}")
        causes[cause_of(outcome)] += 1
    lines.append(f"{len(failing)} of {total} kill points fail")
    lines += [f"  {count:4d}  {cause}" for cause, count in causes.most_common()]
    return "\n".join(lines)


def cause_of(outcome: Outcome) -> str:
    """A short cause for grouping: the first problem with its variable parts left out."""
    first = outcome.problems[0]
    first = re.sub(r"[0-9a-f]{12,64}", "H", first)
    return re.sub(r"\d+", "N", first)[:160]


SAMPLE_STRIDE = 12


def sample(points: list[KillPoint], stride: int = SAMPLE_STRIDE) -> list[KillPoint]:
    """A shorter run's kill points: every GitHub/git write's, every ``stride``th state file's.

    The happy loop's finalization is left to the ``finalization`` scenario,
    which kills the same commands (with two Codex threads to resolve).
    """
    kept = [point for point in points if not (point.scenario == "happy" and point.finalizing)]
    state = [point for point in kept if point.where == "state"]
    chosen = {point for point in kept if point.where == "github"} | set(state[::stride])
    return [point for point in kept if point in chosen]


def select_points(
    points: list[KillPoint], stride: int = 1, match: str | None = None, offset: int = 0
) -> Iterator[KillPoint]:
    """Every ``stride``th kill point from the ``offset``th on (of those whose name matches ``match``)."""
    wanted = re.compile(match) if match else None
    yield from [point for point in points if wanted is None or wanted.search(point.name)][offset::stride]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.crash_points",
        description="Kill a whole loop at every write and resume it as SKILL.md says; print the kill points that fail.",
    )
    parser.add_argument("--scenario", choices=sorted(SCENARIOS), action="append", help="default: every scenario")
    parser.add_argument("--stride", type=int, default=1, help="run every Nth kill point only (default 1: all)")
    parser.add_argument(
        "--offset", type=int, default=0, help="with --stride: start at the Kth point (0 to N-1: together, every point)"
    )
    parser.add_argument("--match", metavar="REGEX", help="run only the kill points whose name matches REGEX")
    parser.add_argument("--list", action="store_true", help="list the kill points of the baseline runs, run none")
    parser.add_argument("--keep", metavar="DIR", help="work in DIR (default: a temporary directory, removed)")
    arguments = parser.parse_args(argv)
    work = Path(arguments.keep) if arguments.keep else Path(tempfile.mkdtemp(prefix="crash-points-"))
    try:
        bin_directory = crash_environment(work / "python")
        enumerations = []
        for name in arguments.scenario or sorted(SCENARIOS):
            scenario = SCENARIOS[name]
            if arguments.list:
                _, points, _ = baseline_of(scenario, work / name, bin_directory)
                print("\n".join(point.name for point in points))
                print(f"{len(points)} kill points in {name}")
                continue
            enumerations.append(
                enumerate_points(
                    scenario,
                    work / name,
                    bin_directory,
                    select=lambda points: select_points(points, arguments.stride, arguments.match, arguments.offset),
                    progress=sys.stderr,
                )
            )
        if enumerations:
            print(table(enumerations))
        return 1 if any(e.failures for e in enumerations) else 0
    finally:
        if not arguments.keep:
            _remove(work)


def _group_has_members(group: int) -> bool:
    """Whether any process (a zombie included) is still in process group ``group``."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            fields = Path(f"/proc/{entry}/stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue
        if len(fields) > 2 and fields[2] == str(group):
            return True
    return False


if __name__ == "__main__":
    sys.exit(main())
