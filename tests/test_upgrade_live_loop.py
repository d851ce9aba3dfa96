"""A live loop across an upgrade of the installed skill: the whole loop, driven only through the installed copy.

``python install.py`` puts the skill in a person's ``~/.agents/skills`` (a
temporary HOME, its private environment under ``~/.local/share``); the demo's
driver (demo/driver.py) then runs a whole approval-gated loop against the
simulator with that copy's ``scripts/loop``, as ``loop.py next`` leads. At the
first heartbeat after the automation went live, ``install.py --upgrade`` runs:

- from the same release it changes nothing, needs no ``--force``, and the loop
  goes on to ``done``;
- from a release that changes a runtime file it is refused while the loop is
  live (naming it); with ``--force`` it is made, and the loop's next wakeup
  stops with ``evaluator-digest-changed``, whose words say to let loops finish
  or stop them before upgrading.

Both are slow (a whole loop each): .ci/run runs them (-m slow).
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from demo import agent as demo_agent
from demo.driver import Run
from demo.scenarios import SCENARIOS
from demo.stack import HEAD_BRANCH, TOKEN, start
from simulator.codex import CodexReviewer

ROOT = Path(__file__).resolve().parent.parent
SKILL = "github-codex-pr-loop"
DELAY_SECONDS = 180  # as demo/cli.py: Codex answers three simulated minutes after a request

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A fresh clone of this repository's committed state: what a person installs from."""
    target = tmp_path_factory.mktemp("clone") / SKILL
    subprocess.run(["git", "clone", "-q", str(ROOT), str(target)], check=True)
    return target


def install(source: Path, home: Path, stack: Any, *args: str) -> subprocess.CompletedProcess[str]:
    """``python install.py ARGS`` as the person runs it: their HOME (skills and private environment there) and
    the state root the loop's commands use, where install.py looks for live loops."""
    environment = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "XDG_STATE_HOME": stack.environment()["XDG_STATE_HOME"],
        "LANG": "C.UTF-8",
    }
    argv = [sys.executable, str(source / "install.py"), "--python-env-from", "current", *args]
    return subprocess.run(argv, cwd=source, env=environment, capture_output=True, text=True, timeout=600, check=False)


def a_release_that_changes_code(clone: Path, directory: Path) -> Path:
    source = directory / SKILL
    subprocess.run(["git", "clone", "-q", str(clone), str(source)], check=True)
    policy = source / "evaluator" / "policy.py"
    policy.write_text(policy.read_text() + "\n# a new release\n")
    return source


def automation_stage(run: Run) -> str:
    return str(json.loads((Path(str(run.agent.state_dir)) / "automation.json").read_text())["stage"])


def stack_tip(run: Run) -> str | None:
    return run.stack.remote_tip(HEAD_BRANCH)


def live_loop_across(tmp_path: Path, monkeypatch, clone: Path, upgrade) -> tuple[Run, list[dict[str, Any]]]:
    """The happy scenario driven through the installed skill, ``upgrade(run, install)`` at its first heartbeat."""
    stack = start(tmp_path / "run")
    home = stack.scratch / "home"  # the HOME every loop command gets (demo/stack.py)
    upgrades: list[dict[str, Any]] = []
    try:
        installed = home / ".agents" / "skills" / SKILL
        made = install(clone, home, stack)
        assert made.returncode == 0, made.stderr
        assert made.stdout == f"installed {installed}\n"
        monkeypatch.setattr(demo_agent, "LOOP", installed / "scripts" / "loop")
        scenario = SCENARIOS["happy"]
        CodexReviewer(stack.world, list(scenario.codex), delay=DELAY_SECONDS, on_ready=list(scenario.codex_on_ready))

        def at_first_heartbeat(run: Run) -> None:
            if "upgrade" not in run.fired:
                run.fired.add("upgrade")
                assert automation_stage(run) == "active"  # a live loop: its automation wakes it
                assert demo_agent.LOOP == installed / "scripts" / "loop"  # every command runs the installed copy
                upgraded = upgrade(run, lambda source, *args: install(source, home, stack, *args))
                github = (stack_tip(run), len(run.stack.comments(run.pr_number)))
                upgrades.append({**upgraded, "commands_before": len(run.agent.results), "github": github})

        run = Run(stack, io.StringIO(), hooks={"wakeup": at_first_heartbeat})
        run.run()
        assert TOKEN not in json.dumps(run.agent.results)
        for upgraded in upgrades:
            upgraded["github_at_end"] = (stack_tip(run), len(run.stack.comments(run.pr_number)))
        return run, upgrades
    finally:
        stack.stop()


def test_an_upgrade_that_changes_nothing_keeps_a_live_loop_going_to_done(tmp_path, monkeypatch, clone):
    def unchanged(run: Run, install) -> dict[str, Any]:
        installed = tmp_path / "run" / "home" / ".agents" / "skills" / SKILL
        before = (installed / ".install-record.json").read_bytes()
        again = install(clone, "--upgrade")
        assert again.returncode == 0, again.stderr
        assert again.stdout == f"{installed} already holds this version: nothing changed\n"
        assert (installed / ".install-record.json").read_bytes() == before
        return {"returncode": again.returncode}

    run, upgrades = live_loop_across(tmp_path, monkeypatch, clone, unchanged)
    [upgraded] = upgrades  # the upgrade ran once, while the loop was live
    assert upgraded["returncode"] == 0
    assert not run.missing and not run.refusals, (run.missing, run.refusals)
    assert run.final == "done"
    after = [command for command, _ in run.agent.results[upgraded["commands_before"] :]]
    assert after.count("next") >= 3, after  # the loop's own wakeups after the upgrade brought it to done


def test_an_upgrade_that_changes_code_is_refused_while_live_and_forced_stops_the_loop_at_its_next_wakeup(
    tmp_path, monkeypatch, clone
):
    def changed(run: Run, install) -> dict[str, Any]:
        source = a_release_that_changes_code(clone, tmp_path / "release")
        refused = install(source, "--upgrade")
        assert refused.returncode == 1, refused.stdout + refused.stderr
        assert str(run.run_id) in refused.stderr and "--force" in refused.stderr
        forced = install(source, "--upgrade", "--force")
        assert forced.returncode == 0, forced.stderr
        return {"refused": refused.returncode, "forced": forced.returncode}

    run, upgrades = live_loop_across(tmp_path, monkeypatch, clone, changed)
    [upgraded] = upgrades
    assert (upgraded["refused"], upgraded["forced"]) == (1, 0)
    after = run.agent.results[upgraded["commands_before"] :]
    assert [command for command, _ in after] == ["next"]  # the very next wakeup stops the loop
    told = after[0][1]
    assert run.final == told["action"] == "state-inconsistency"
    assert told["reasons"] == ["evaluator-digest-changed"] and told["evaluation"]["write_permitted"] is False
    assert "wait until every loop has finished or been stopped" in told["you_do"]
    assert told["then"] is None  # nothing more for the agent to run
    assert upgraded["github"] == upgraded["github_at_end"]  # nothing written to GitHub after the upgrade
