"""Hand-offs survive a kill: every rerun of ``loop.py next`` prints the pending one again, unchanged.

The loop runs as SKILL.md leads: ``next``, and only the acts it hands back
(a payload for the automation tool, the paths of the fix, the edit), against
the simulated GitHub, Codex and automation host. A kill is the process
stopping right after a state file was renamed into place: the write is
durable, nothing after it runs and nothing is printed. The loop is then
resumed as SKILL.md says (run ``next`` again); the hand-off it had not yet
printed must come out exactly as it would have, the loop must go on to the
end, and nothing may be written twice.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from act import automation, cli
from act.core import statedir
from evaluator import markers, policy
from simulator.automations import AutomationHost
from simulator.codex import CodexReviewer
from tests.executor_stack import NAME, OWNER, init_args, start

# Whole loops against the simulator, each tens of seconds: run by .ci/run, left out by default.
pytestmark = pytest.mark.slow

FIX = "README.md"
# The automation stages that ask the agent for a tool call (each saved just before its payload is printed).
ASKING = ("create-requested", "pause-requested", "prompt-requested", "activate-requested", "delete-requested")


class Killed(BaseException):
    """The process dies here: nothing after this point runs and nothing is printed (not an ``Exception``)."""


@pytest.fixture
def stack(tmp_path, monkeypatch):
    made = start(tmp_path, monkeypatch)
    yield made
    made.stop()


class Agent:
    """The agent as SKILL.md leads it: ``next``, the act it hands back, ``next`` again."""

    def __init__(self, stack: Any, capsys: Any, monkeypatch: Any):
        self.stack, self.capsys, self.monkeypatch = stack, capsys, monkeypatch
        self.host = AutomationHost(stack.tmp / "codex", stack.world.clock)
        self.where: list[str] = []
        self.tool_calls: list[dict[str, Any]] = []

    def loop(self, *args: str, status: int = 0) -> dict[str, Any]:
        self.stack.world.clock.advance(timedelta(seconds=1))  # time passes between two commands
        return self.stack.loop(
            self.capsys, *args, *self.where, "--observed-at", self.stack.world.clock.iso(), status=status
        )

    def next(self, *args: str, status: int = 0) -> dict[str, Any]:
        return self.loop("next", *args, status=status)

    def tool(self, payload: dict[str, Any]) -> dict[str, Any]:
        self.tool_calls.append(payload)
        return self.host.automation_update(payload)

    def killed(self, name: str, when: Callable[[dict[str, Any]], bool], *args: str) -> None:
        """``next`` killed right after ``name`` is renamed into place holding what ``when`` accepts."""
        original = statedir.StateDir.write
        fired: list[str] = []

        def write(directory: statedir.StateDir, file: str, value: Any) -> Any:
            written = original(directory, file, value)
            if file == name and not fired and when(dict(value)):
                fired.append(file)
                raise Killed(file)
            return written

        with self.monkeypatch.context() as patched:
            patched.setattr(statedir.StateDir, "write", write)
            for _ in range(2):  # a stop that only waits for the clock (`again`) is run through once
                self.stack.world.clock.advance(timedelta(seconds=1))
                argv = ["next", *args, *self.where, "--observed-at", self.stack.world.clock.iso()]
                try:
                    cli.main([*argv, *self.stack.network_flags()])
                except Killed:
                    break
                assert json.loads(self.capsys.readouterr().out).get("again") is True
        assert fired == [name]
        assert self.capsys.readouterr().out == ""  # killed before it printed anything

    def state(self, name: str) -> dict[str, Any]:
        return statedir.StateDir(self.where[1]).read(name)

    def owned(self) -> list[dict[str, Any]]:
        return [record for record in map(self.host.read, self.ids()) if record is not None]

    def ids(self) -> list[str]:
        return sorted(path.name for path in self.host.root.iterdir() if (path / "automation.toml").is_file())

    def comments(self, pr_number: int) -> list[str]:
        return [c["body"] for c in self.stack.comments(pr_number) if c["user"]["login"] == "loop-owner"]


def same_payload(first: dict[str, Any], again: dict[str, Any]) -> None:
    """The re-printed payload is the one printed (or to be printed) before, byte for byte."""
    assert json.dumps(again["payload"], separators=(",", ":")) == json.dumps(first["payload"], separators=(",", ":"))
    assert again["you_do"] == first["you_do"] and again["then"] == first["then"]


def stage(value: str) -> Callable[[dict[str, Any]], bool]:
    return lambda record: record.get("stage") == value


def started(agent: Agent) -> dict[str, Any]:
    made = agent.loop(*init_args(agent.stack))
    agent.where = ["--state-dir", made["state_dir"]]
    return made


def test_a_kill_before_each_bootstrap_payload_is_printed_prints_it_again_and_the_loop_goes_live(
    stack, capsys, monkeypatch
):
    CodexReviewer(stack.world, ["clean"], delay=timedelta(minutes=3))
    agent = Agent(stack, capsys, monkeypatch)
    made = started(agent)
    stack.world.clock.advance(timedelta(seconds=20))  # the bootstrap is observed after the request

    # Each stage that asks for a payload is saved with it; the command dies before printing it.
    asked: list[str] = []
    while len(asked) < 6:
        agent.killed("automation.json", lambda record: record["stage"] in ASKING and record["stage"] not in asked)
        record = agent.state("automation.json")
        asked.append(record["stage"])
        told = agent.next()  # no --id ever: after the create, the registry shows its one automation
        assert "payload" in told, told  # never a dead end: the payload it died before printing
        assert json.dumps(told["payload"]) == json.dumps(json.loads(record["payload"]))  # as saved, key order too
        same_payload(told, agent.next())  # every rerun, until the registry shows its effect
        if record["stage"] == "create-requested":
            assert told["payload"] == automation.create_payload(record["key"]) and "--id ID" in told["then"]
            pr_number = stack.pulls()[0]["number"]
            single = agent.loop("automation-create", "--pr", str(pr_number))  # the single command: no dead end
            assert json.dumps(single["payload"]) == json.dumps(told["payload"])
        if record["stage"] == "prompt-requested":
            assert told["payload"]["prompt"].count("\n") == 2
            assert json.dumps(agent.loop("automation-prompt")["payload"]) == json.dumps(told["payload"])
        agent.tool(told["payload"])  # the create's answer (its id) is dropped: as if the agent was killed too
        if record["stage"] == "activate-requested":
            break
    assert asked[0] == "create-requested" and asked[-2:] == ["prompt-requested", "activate-requested"]

    agent.killed("automation.json", stage("active"))
    told = agent.next()  # the loop is live: the rerun is a heartbeat's wakeup, Codex not done yet
    assert (told["action"], told["then"]) == ("wait", f"at the next heartbeat: `loop.py next {' '.join(agent.where)}`")
    (only,) = agent.owned()  # one automation, never a second create
    assert only["status"] == "ACTIVE" and only["name"] == record["key"]
    assert [call["mode"] for call in agent.tool_calls].count("create") == 1
    assert markers.automation_key(policy.HOST, f"{OWNER}/{NAME}", pr_number, made["run_id"]) == record["key"]


def _in_place(stack: Any) -> None:
    with open(stack.checkout / FIX, "r+", encoding="utf-8") as handle:
        content = handle.read()
        handle.seek(0)
        handle.truncate()
        handle.write(content + "\nFixed.\n")


def _live(stack: Any, capsys: Any, monkeypatch: Any, codex: list[Any]) -> tuple[Agent, int]:
    """A loop brought live through `next` with no kill, at its first heartbeat after Codex answered."""
    CodexReviewer(stack.world, codex, delay=timedelta(minutes=3))
    agent = Agent(stack, capsys, monkeypatch)
    made = started(agent)
    agent.stack.world.clock.advance(timedelta(seconds=20))
    told = agent.next()
    pr_number = stack.pulls()[0]["number"]
    while "heartbeat" not in (told.get("then") or ""):
        answer = agent.tool(told["payload"])
        told = agent.next("--id", answer["automationId"]) if "--id ID" in told["then"] else agent.next()
    key = markers.automation_key(policy.HOST, f"{OWNER}/{NAME}", pr_number, made["run_id"])
    assert agent.state("automation.json")["key"] == key
    stack.world.clock.advance(timedelta(minutes=4))
    return agent, pr_number


def _to_the_edit(stack: Any, capsys: Any, monkeypatch: Any) -> tuple[Agent, int]:
    """The first wakeup found a finding; the agent planned the fix: `next` claims it and hands off the edit."""
    agent, pr_number = _live(stack, capsys, monkeypatch, [{"kind": "findings", "findings": [{"path": FIX, "line": 1}]}])
    told = agent.next()
    assert told["action"] == "plan-remediation" and "findings" in told, told
    planned = agent.loop("plan-remediation", "--path", FIX, "--no-commands")
    assert planned["action"] == "claim-plan"
    return agent, pr_number


def test_a_kill_before_the_edit_is_handed_off_hands_it_off_again_until_the_edit_is_made(stack, capsys, monkeypatch):
    agent, pr_number = _to_the_edit(stack, capsys, monkeypatch)
    # execute recorded that it rechecked the paths, then died before "edit exactly these paths" was printed.
    agent.killed("execution.json", lambda ledger: any(p["facts"]["edit_rechecked"] for p in ledger["plans"]))
    edit = agent.next()
    assert edit["paths"] == [FIX] and "edit_safely" in edit and edit["you_do"].startswith("edit exactly these paths")
    again = agent.next()  # not edited yet: the same hand-off, never a skip to the commit
    shown = ("you_do", "paths", "edit_safely", "then")
    assert {key: again[key] for key in shown} == {key: edit[key] for key in shown}
    assert [d["command"].split()[1] for d in again["did"]] == ["execute"]
    assert stack.remote_tip("fix/greeting") == stack.pulls()[0]["head"]["sha"]  # nothing committed or pushed
    _in_place(stack)

    # The fix pushed and requested, then a kill once record-executed is saved: the rerun ends the wakeup.
    agent.killed("wakeup.json", lambda wakeup: bool(wakeup["executed"]))
    over = agent.next()
    assert over["you_do"].startswith("nothing more: this wakeup is over"), over
    head = stack.remote_tip("fix/greeting")
    bodies = agent.comments(pr_number)
    assert len(bodies) == 3 and bodies[-1].endswith(f"round=1 sha={head} -->")  # round 0, the claim, round 1
    threads = stack.world.repository(OWNER, NAME).review_comments.get(pr_number, [])
    assert len([c for c in threads if c["user"]["login"] == "loop-owner"]) == 1  # one reply, never two


@pytest.mark.parametrize("chain", [True, False], ids=["every-step", "the-delete-only"])
def test_kills_along_the_finalization_chain_resume_the_same_wakeup_and_reach_done(stack, capsys, monkeypatch, chain):
    agent, pr_number = _live(stack, capsys, monkeypatch, ["clean"])
    events: list[str] = []
    stack.world.subscribe(lambda kind, event: events.append(kind))
    if chain:
        # Killed after the claim is recorded, after mark-ready, after phase one's record-executed: each rerun
        # goes on in the same wakeup (never a fresh `wakeup` refused wakeup-claim-open).
        agent.killed("wakeup.json", lambda wakeup: bool(wakeup["claims"]))
        agent.killed("execution.json", lambda ledger: any("mark-draft-ready" in p["done"] for p in ledger["plans"]))
        agent.killed("wakeup.json", lambda wakeup: bool(wakeup["executed"]))
    # Phase two, up to the delete payload: killed before it was printed.
    agent.killed("automation.json", stage("delete-requested"))
    assert stack.pulls()[0]["draft"] is False
    delete = agent.next()
    automation_id = agent.ids()[0]
    assert delete["payload"] == {"mode": "delete", "id": automation_id}
    same_payload(delete, agent.next())
    agent.tool(delete["payload"])
    # verify-automation saved `deleted`, then the kill: the rerun is no false automation-not-unique.
    agent.killed("automation.json", stage("deleted"))
    end = agent.next()
    told = "tell the person the loop is finished and report the `gates` and `reasons`"
    assert (end["you_do"], end["then"], end["action"]) == (told, None, "finish-finalization"), end
    assert end["notify"] is True and "gates" in end and "reasons" in end
    assert agent.next()["you_do"] == end["you_do"]  # the last word, printed again to a rerun

    bodies = agent.comments(pr_number)
    assert len(bodies) == len(set(bodies)) == 3  # round 0 and the two finalization claims, each once
    assert agent.owned() == [] and [c["mode"] for c in agent.tool_calls][-1] == "delete"
    assert [c["mode"] for c in agent.tool_calls].count("delete") == 1
    assert events.count("pull_request.ready_for_review") == 1  # marked ready once, the kill after it notwithstanding


def test_a_file_replaced_instead_of_written_in_place_is_named_and_the_wakeup_ends(stack, capsys, monkeypatch):
    agent, pr_number = _to_the_edit(stack, capsys, monkeypatch)
    edit = agent.next()
    assert edit["paths"] == [FIX]
    checkout = stack.checkout
    subprocess.run(["sed", "-i", "-e", "$a Fixed.", FIX], cwd=checkout, check=True)  # a new file, renamed over
    refused = agent.next(status=1)
    (error,) = refused["errors"]
    assert error["code"] == "edit-not-in-place" and refused["replaced"] == [FIX] and FIX in error["message"]
    assert refused["refused_in"] == "loop.py execute"
    assert refused["you_do"].startswith("tell the person") and refused["then"].startswith("at the next heartbeat")
    assert [d["command"].split()[1] for d in refused["did"]] == ["end-wakeup"]  # the refused execute ran before it
    assert agent.state("wakeup.json")["ended_at"] is not None  # no heartbeat resumes the refused execute
    stack.world.clock.advance(timedelta(minutes=4))
    later = agent.next()
    assert "execute" not in [d["command"].split()[1] for d in later["did"]]
    assert later["action"] == "wait"  # its claim is the ended wakeup's: the evaluator waits, then stops
    assert stack.remote_tip("fix/greeting") == stack.pulls()[0]["head"]["sha"]
    assert len(agent.comments(pr_number)) == 2  # round 0 and the claim: nothing staged, committed or pushed
