"""Every ``next`` answer says whether the person must be told now; the last one says how the loop ended.

A heartbeat turn ends with a notify decision: an approval summary to show,
a stop and the end notify; a wait and the agent's own steps (a payload, the
paths, the edit) do not. The table test covers each action row; the demo
runs (slow: whole loops against the simulator, as subprocesses) check the
answers ``next`` really printed, and that the loop's last answer and
``status`` carry the last verdict's ``reasons`` and the merge ``gates``.
"""

from __future__ import annotations

import pytest

from act.core import steps

# Each place `next` stops in an action's row (the agent's acts, in order; notes are not acts), and whether the
# person is told there. A cleanup stop passes the delete payload first (the agent's), then tells why.
CLEANUP = [("tool", False), ("tell", True)]
EXPECTED = {
    "wait": [("nothing", False)],
    "plan-remediation": [("read", False)],
    "await-approval": [("show", True)],
    "execute-remediation": [("edit", False)],
    "finish-finalization": CLEANUP,
    "done": [("nothing", True)],
    "request-timeout": CLEANUP,
    "stop-max-rounds": CLEANUP,
    "stop-pr-closed": CLEANUP,
    "stop-reviewer-unavailable": CLEANUP,
    "stop-recurring-finding": CLEANUP,
    "state-inconsistency": [("tell", True)],
    "report": [("tell", True)],
}
# Rows made of commands only: `next` obeys the action the last one prints, so they never stop on their own.
OBEYED = {"plan-finalization", "claim-plan", "execute-finalization"}


def acts(action):
    return [step.act for step in steps.WAKEUP[action] if isinstance(step, steps.Do) and step.act != "note"]


@pytest.mark.parametrize("action", sorted(steps.WAKEUP))
def test_each_action_row_says_whether_the_person_is_told(action):
    if action in OBEYED:
        last = steps.WAKEUP[action][-1]
        assert acts(action) == [] and isinstance(last, steps.Run) and last.obey
        return
    assert [(act, steps.notifies(action, act)) for act in acts(action)] == EXPECTED[action]


def test_every_row_is_covered():
    assert set(EXPECTED) | OBEYED == set(steps.WAKEUP)


def test_the_last_row_reports_the_gates_and_reasons():
    tell = [step for step in steps.WAKEUP["finish-finalization"] if isinstance(step, steps.Do)][-1]
    assert "`gates`" in tell.words and "`reasons`" in tell.words


# -- the answers `next` printed in whole loops (the demo, driven SKILL.md's way) ------------------------------


def nexts(result):
    return [answer for command, answer in result.agent.results if command == "next"]


def assert_notify_on_every_answer(result):
    answers = nexts(result)
    assert answers
    for answer in answers:
        then, you_do = answer.get("then") or "", answer.get("you_do", "")
        assert isinstance(answer.get("notify"), bool), answer
        if not answer["ok"]:
            assert answer["notify"] is True, answer  # a refusal is told
        elif answer.get("action") == "wait" and then.startswith("at the next heartbeat"):
            assert answer["notify"] is False, answer
        elif "approval_summary" in answer and "show the person" in you_do:
            assert answer["notify"] is True, answer
        elif "payload" in answer or "edit_safely" in answer or ("findings" in answer and "plan-remediation" in you_do):
            assert answer["notify"] is False, answer
        elif not then:  # a stop or the end: nothing more to run
            assert answer["notify"] is True, answer
    return answers


def run_next(tmp_path, scenario):
    """The scenario driven as SKILL.md leads (`next` and the acts it hands back), as tests/test_demo.py runs it."""
    import io

    from demo import cli

    return cli.run_scenario(scenario, tmp_path / "run", io.StringIO())


@pytest.mark.slow
def test_the_happy_loop_through_next_notifies_exactly_where_the_person_is_needed(tmp_path):
    from dataclasses import replace

    from demo.scenarios import SCENARIOS

    asked: list[dict] = []
    happy = replace(SCENARIOS["happy"], hooks={"after-done": lambda run: asked.append(run.agent.loop("status"))})
    result = run_next(tmp_path, happy)
    assert result.final == "done"
    answers = assert_notify_on_every_answer(result)
    shown = [a for a in answers if "show the person the approval_summary" in a.get("you_do", "")]
    waits = [a for a in answers if a.get("action") == "wait"]
    assert shown and all(a["notify"] for a in shown) and waits and not any(a["notify"] for a in waits)
    last = answers[-1]
    assert last["action"] == "finish-finalization" and last["then"] is None and last["notify"] is True
    assert last["reasons"] == ["finalization-settled"]
    assert set(last["gates"]) == {"approvals", "branch_protection", "checks", "mergeability"}
    (status,) = asked  # the person asks later: status says the same
    assert (status["last_action"], status["reasons"], status["gates"]) == (
        "finish-finalization",
        ["finalization-settled"],
        last["gates"],
    )


@pytest.mark.slow
def test_a_stop_through_next_tells_the_person_why_with_the_gates(tmp_path):
    from demo.scenarios import SCENARIOS

    result = run_next(tmp_path, SCENARIOS["pr-closed"])
    assert result.final == "stop-pr-closed"
    last = assert_notify_on_every_answer(result)[-1]
    assert (last["action"], last["notify"], last["then"]) == ("stop-pr-closed", True, None)
    assert last["reasons"] and set(last["gates"]) == {"approvals", "branch_protection", "checks", "mergeability"}
