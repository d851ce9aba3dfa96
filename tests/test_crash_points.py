"""The crash tests (tests/crash_points.py): their kill mechanisms, then whole loops killed at every write.

The mechanisms are quick: the simulator's write hook at each phase of a
write, and the audit hook that kills a command's process group at a state
file's rename. The enumerations run whole approval-gated loops through
``loop.py next``, one branch per kill point, and are slow.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import textwrap
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from werkzeug.test import Client

from simulator.app import GitHubApp
from simulator.world import World
from tests import crash_points
from tests.simulation import NAME, OWNER, TOKEN, git, make_world

ROOT = Path(__file__).resolve().parent.parent
REPO = f"/repos/{OWNER}/{NAME}"


@pytest.fixture(scope="module")
def crash_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return crash_points.crash_environment(tmp_path_factory.mktemp("crash-python"))


@pytest.fixture
def world(tmp_path: Path):
    created = make_world(tmp_path)
    yield created
    created.close()


# -- the simulator's write hook ------------------------------------------------------------------


class Api:
    """The simulated API in-process; each answer read whole and closed, as a server closes it once sent."""

    def __init__(self, world: World):
        self.client = Client(GitHubApp(world))

    def __call__(self, method: str, path: str, body: object = None) -> tuple[int, object]:
        response = self.client.open(
            path,
            method=method,
            data=None if body is None else json.dumps(body),
            headers={"Authorization": f"token {TOKEN}"},
            content_type="application/json",
        )
        raw = response.get_data()
        response.close()
        return response.status_code, json.loads(raw) if raw else None

    def graphql(self, query: str, variables: dict[str, object] | None = None) -> dict[str, object]:
        status, answer = self("POST", "/graphql", {"query": query, "variables": variables or {}})
        assert status == 200 and isinstance(answer, dict)
        return answer


def recorder(seen: list[tuple[str, str, bool | None]]) -> Callable[[str, str, bool | None], bool]:
    """A write hook that keeps what it is told and drops nothing."""

    def hook(kind: str, phase: str, applied: bool | None) -> bool:
        seen.append((kind, phase, applied))
        return False

    return hook


def test_every_write_passes_each_phase_once_and_a_read_none(world: World):
    seen: list[tuple[str, str, bool | None]] = []
    world.write_hook = recorder(seen)
    api = Api(world)
    assert api("GET", f"{REPO}/pulls")[0] == 200
    status, _ = api("POST", f"{REPO}/issues/1/comments", {"body": "hello"})
    assert status == 404  # no issue 1 yet: a write that arrives and is refused is not applied
    kind = "POST /repos/{owner}/{repo}/issues/{issue_number}/comments"
    assert seen == [(kind, "before", None), (kind, "applied", False), (kind, "answered", False)]


def test_a_write_dropped_before_it_is_applied_leaves_no_trace(world: World, tmp_path: Path):
    git_dir = world.bare_repository(OWNER, NAME)
    assert git(git_dir, "rev-parse", "main")
    pull = world.open_pull_request(OWNER, NAME, head="main", base="main", draft=True, unique=False)
    phases: list[str] = []

    def drop(kind: str, phase: str, applied: bool | None) -> bool:
        phases.append(phase)
        return phase == "before"

    world.write_hook = drop
    api = Api(world)
    status, _ = api("POST", f"{REPO}/issues/{pull['number']}/comments", {"body": "never"})
    assert status == 503 and phases == ["before"]
    assert api("GET", f"{REPO}/issues/{pull['number']}/comments")[1] == []
    world.write_hook = None
    answer = api.graphql(
        "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft } } }",
        {"id": pull["node_id"]},
    )
    assert answer["data"] == {"markPullRequestReadyForReview": {"pullRequest": {"isDraft": False}}}


def test_a_graphql_mutation_is_named_by_its_fields(world: World):
    pull = world.open_pull_request(OWNER, NAME, head="main", base="main", draft=True, unique=False)
    seen: list[tuple[str, str, bool | None]] = []
    world.write_hook = recorder(seen)
    api = Api(world)
    api.graphql("query { rateLimit { cost } }")
    api.graphql(
        "mutation($id: ID!) { markPullRequestReadyForReview(input: {pullRequestId: $id}) { pullRequest { isDraft } } }",
        {"id": pull["node_id"]},
    )
    api.graphql('mutation { resolveReviewThread(input: {threadId: "PRRT_nope"}) { thread { id } } }')
    assert seen == [
        ("graphql markPullRequestReadyForReview", "before", None),
        ("graphql markPullRequestReadyForReview", "applied", True),
        ("graphql markPullRequestReadyForReview", "answered", True),
        ("graphql resolveReviewThread", "before", None),
        ("graphql resolveReviewThread", "applied", False),  # an answer with errors applied nothing
        ("graphql resolveReviewThread", "answered", False),
    ]


# -- the state-file hook -------------------------------------------------------------------------

WRITER = textwrap.dedent(
    """
    import sys
    sys.path.insert(0, sys.argv[1])
    from act.core.statedir import StateDir
    state = StateDir.create(sys.argv[2])
    state.write("first.json", {"n": 1})
    state.write("first.json", {"n": 2})
    state.write("second.json", {"n": 3})
    print("finished")
    """
)


def living_in_group(group: int) -> list[str]:
    """The processes of ``group`` still running (a killed one may linger as a zombie until reaped: not counted)."""
    found = subprocess.run(["pgrep", "-g", str(group)], capture_output=True, text=True).stdout.split()
    living = []
    for pid in found:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
        except OSError:
            continue
        if state != "Z":
            living.append(pid)
    return living


def write_three(
    crash_bin: Path, tmp_path: Path, kill_at: int | None, phase: str | None, armed: Path | None = None
) -> tuple[int, Path, Path]:
    """Three state writes in a child of its own process group (like a command), killed as planned."""
    state_root = tmp_path / "state" / "github-codex-pr-loop"
    state_root.parent.mkdir(parents=True)
    log, plan = tmp_path / "writes.log", tmp_path / "plan.json"
    planned = {"root": str(state_root), "log": str(log), "kill_at": kill_at, "phase": phase}
    plan.write_text(json.dumps({**planned, "armed": str(armed) if armed else None}))
    environment = {"PATH": f"{crash_bin}:/usr/bin:/bin", "LOOP_CRASH_PLAN": str(plan)}
    # A grandchild in the same group: the kill takes the whole tree, not just the writer.
    script = f"sleep 30 & exec python3 -I -B -c {shlex.quote(WRITER)} {shlex.quote(str(ROOT))} {state_root / 'run'}"
    process = subprocess.Popen(
        ["/bin/sh", "-c", script], env=environment, start_new_session=True, stdout=subprocess.PIPE, text=True
    )
    output, _ = process.communicate(timeout=60)
    leftover = living_in_group(process.pid)
    for _ in range(50):  # a group's SIGKILL lands asynchronously: a loaded machine may show it a moment longer
        if not leftover or (kill_at is None and armed is None):
            break
        time.sleep(0.1)
        leftover = living_in_group(process.pid)
    if leftover:
        os.killpg(process.pid, signal.SIGKILL)  # the sleep of a run that was not killed
    killed = kill_at is not None or (armed is not None and armed.exists())
    assert not leftover or not killed, "a process of the killed group survived"
    assert (output == "finished\n") is (kill_at is None and armed is None)
    return process.returncode, state_root / "run", log


def test_without_a_kill_every_state_write_is_counted(crash_bin: Path, tmp_path: Path):
    status, state, log = write_three(crash_bin, tmp_path, None, None)
    assert status == 0
    assert [json.loads(line)[2] for line in log.read_text().splitlines()] == [
        "run/first.json",
        "run/first.json",
        "run/second.json",
    ]
    assert sorted(p.name for p in state.iterdir()) == ["first.json", "second.json"]


def test_a_kill_at_temp_leaves_the_old_file_and_the_complete_new_one_beside_it(crash_bin: Path, tmp_path: Path):
    status, state, _ = write_three(crash_bin, tmp_path, 1, "temp")
    assert status == -signal.SIGKILL
    assert json.loads((state / "first.json").read_text()) == {"n": 1}
    (temporary,) = [p for p in state.iterdir() if p.name.startswith(".first.json.")]
    assert json.loads(temporary.read_text()) == {"n": 2}
    assert not (state / "second.json").exists()


def test_a_kill_at_renamed_leaves_the_new_file_in_place(crash_bin: Path, tmp_path: Path):
    status, state, _ = write_three(crash_bin, tmp_path, 1, "renamed")
    assert status == -signal.SIGKILL
    assert json.loads((state / "first.json").read_text()) == {"n": 2}
    assert sorted(p.name for p in state.iterdir()) == ["first.json"]


def test_an_armed_answer_kills_at_the_next_state_write(crash_bin: Path, tmp_path: Path):
    """A GitHub write's "answered" point armed before the command goes on: its first state write is the kill."""
    armed = tmp_path / "armed"
    armed.touch()
    status, state, log = write_three(crash_bin, tmp_path, None, None, armed)
    assert status == -signal.SIGKILL
    assert not log.exists()  # killed before the first write was even counted
    (temporary,) = state.iterdir()  # the first write's complete temporary file, never renamed into place
    assert temporary.name.startswith(".first.json.") and json.loads(temporary.read_text()) == {"n": 1}


def test_an_armed_answer_kills_a_command_that_only_exits(crash_bin: Path, tmp_path: Path):
    """A command with nothing left to write after the answer dies as it exits: the kill point is never missed."""
    armed = tmp_path / "armed"
    armed.touch()
    state_root = tmp_path / "state" / "github-codex-pr-loop"
    plan = tmp_path / "plan.json"
    plan.write_text(json.dumps({"root": str(state_root), "log": str(tmp_path / "log"), "armed": str(armed)}))
    environment = {"PATH": f"{crash_bin}:/usr/bin:/bin", "LOOP_CRASH_PLAN": str(plan)}
    process = subprocess.run(
        ["python3", "-I", "-B", "-c", "print('finished')"], env=environment, start_new_session=True, timeout=60
    )
    assert process.returncode == -signal.SIGKILL
    armed.unlink()
    quiet = subprocess.run(["python3", "-I", "-B", "-c", "pass"], env=environment, start_new_session=True, timeout=60)
    assert quiet.returncode == 0


# -- the enumeration and its report --------------------------------------------------------------


def records() -> list[crash_points.CommandRecord]:
    init = crash_points.CommandRecord(
        "init", github=[(1, "POST /repos/{owner}/{repo}/git/refs")], state=["intent.json"]
    )
    start = crash_points.CommandRecord("next --approve H", github=[(2, "git push")], state=["approval.json"])
    final = crash_points.CommandRecord(
        "next", github=[(3, "graphql markPullRequestReadyForReview")], answer_actions=["plan-finalization"]
    )
    return [init, start, final]


def test_each_write_gives_a_kill_point_per_phase_and_a_scenario_may_start_at_its_finalization():
    points = crash_points.kill_points(crash_points.SCENARIOS["happy"], records())
    assert [(p.command_index, p.where, p.number, p.phase) for p in points] == [
        (0, "github", 1, "before"),
        (0, "github", 1, "applied"),
        (0, "github", 1, "answered"),
        (0, "state", 0, "temp"),
        (0, "state", 0, "renamed"),
        (1, "github", 2, "before"),
        (1, "github", 2, "applied"),
        (1, "github", 2, "answered"),
        (1, "state", 0, "temp"),
        (1, "state", 0, "renamed"),
        (2, "github", 3, "before"),
        (2, "github", 3, "applied"),
        (2, "github", 3, "answered"),
    ]
    assert [p.finalizing for p in points] == [False] * 10 + [True] * 3
    finalization = crash_points.kill_points(crash_points.SCENARIOS["finalization"], records())
    assert {p.command_index for p in finalization} == {2}
    sampled = crash_points.sample(points, stride=2)
    assert sampled == points[:4] + points[5:9]  # every state point but each second one; no finalizing point
    # Strided runs with every offset together run each matching point exactly once.
    state = [p for p in points if p.where == "state"]
    parts = [list(crash_points.select_points(points, 3, r"\| state write", offset)) for offset in range(3)]
    assert sorted(sum(parts, []), key=points.index) == state and all(parts)


def test_the_table_names_each_failing_point_and_counts_the_causes():
    points = crash_points.kill_points(crash_points.SCENARIOS["happy"], records())
    refused = "ended in refused-next (loop.py next: wakeup-claim-open)"
    outcomes = [
        crash_points.Outcome(points[0], "done", True, [], Counter(), []),
        crash_points.Outcome(points[1], "refused-next", True, [refused], Counter(), []),
        crash_points.Outcome(points[2], "refused-next", True, [refused], Counter(), []),
    ]
    baseline = crash_points.Outcome(None, "done", False, [], Counter({"git push": 1}), [])
    twice = crash_points.judge(
        crash_points.Outcome(points[3], "done", True, [], Counter({"git push": 2}), []), baseline
    )
    outside = crash_points.judge(
        crash_points.Outcome(points[4], "done", True, [], Counter({"graphql mergePullRequest": 1}), []), baseline
    )
    assert twice.problems == ["git push applied 2x (baseline 1x): applied twice"]
    assert outside.problems == [
        "graphql mergePullRequest applied 1x, outside every approved plan (the baseline made none)"
    ]
    enumeration = crash_points.Enumeration(crash_points.SCENARIOS["happy"], baseline, points[:5])
    enumeration.outcomes = [*outcomes, twice, outside]
    lines = crash_points.table([enumeration]).splitlines()
    assert lines[0] == f"{points[1].name}: {refused}"
    assert lines[4] == "4 of 5 kill points fail"
    assert lines[5] == "     2  ended in refused-next (loop.py next: wakeup-claim-open)"


def test_a_branch_is_undone_in_place_so_every_file_keeps_its_identity(tmp_path: Path):
    live = tmp_path / "live"
    (live / "src").mkdir(parents=True)
    (live / "src" / "app.py").write_text("print('hello')\n")
    (live / "gone.json").write_text("{}")
    snapshot = tmp_path / "snapshot"
    subprocess.run(["cp", "-a", str(live), str(snapshot)], check=True)
    identity = {path: (path.stat().st_dev, path.stat().st_ino) for path in (live / "src", live / "src" / "app.py")}
    (live / "src" / "app.py").write_text("print('changed in the branch')\n")
    (live / "gone.json").unlink()
    (live / "new.json").write_text("{}")
    crash_points.restore(snapshot, live)
    assert (live / "src" / "app.py").read_text() == "print('hello')\n"
    assert sorted(p.name for p in live.iterdir()) == ["gone.json", "src"]
    assert {path: (path.stat().st_dev, path.stat().st_ino) for path in identity} == identity


# -- whole loops ---------------------------------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(crash_points.SCENARIOS))
def test_every_kill_point_resumes_to_done_without_a_second_write(name: str, tmp_path: Path):
    """Whole loops killed at each kill point and resumed: every failing point is reported at once.

    ``CRASH_POINTS=all`` runs every kill point (what ``python -m tests.crash_points``
    runs); by default every GitHub/git write's three phases (``crash_points.sample``,
    the happy loop's finalization left to the finalization scenario);
    ``CRASH_POINTS_MATCH=REGEX`` keeps only the kill points whose name it matches.
    """
    everything = os.environ.get("CRASH_POINTS") == "all"
    stride = int(os.environ.get("CRASH_POINTS_STRIDE", crash_points.SAMPLE_STRIDE))
    # A regular expression: only the kill points it names. By default CI runs the GitHub and git writes
    # (every phase) and leaves the state-file points to ``python -m tests.crash_points``: each point replays
    # the rest of a whole loop, and all of them together take hours on two cores.
    match = os.environ.get("CRASH_POINTS_MATCH", r"github write" if not everything else None)

    def select(points: list[crash_points.KillPoint]) -> list[crash_points.KillPoint]:
        chosen = points if everything else crash_points.sample(points, stride)
        return list(crash_points.select_points(chosen, 1, match))

    bin_directory = crash_points.crash_environment(tmp_path / "python")
    enumeration = crash_points.enumerate_points(
        crash_points.SCENARIOS[name], tmp_path / name, bin_directory, select=select
    )
    assert enumeration.points and len(enumeration.outcomes) == len(enumeration.points)
    assert {outcome.point for outcome in enumeration.outcomes} == set(enumeration.points)
    assert all(outcome.killed or outcome.failed for outcome in enumeration.outcomes)  # a kill that missed fails
    assert not enumeration.failures, "\n" + crash_points.table([enumeration])


# The journal's own files around a plan: state.json with the plan embedded, its verdict, the plan's record,
# pending.json, the wakeup ended. A kill between any two once stranded the loop (a plan command that refused
# the state it had itself planned; a wakeup never ended that refused every later one).
PLAN_FILES = r"next.* \| state write \d+ (state|last-result|plans/<hash>|pending|wakeup)\.json \| "


@pytest.mark.slow
def test_a_kill_between_a_plans_files_resumes_to_done(tmp_path: Path):
    """Every such kill point of the finalization scenario (every write, both phases), strict: each reaches done."""
    bin_directory = crash_points.crash_environment(tmp_path / "python")
    enumeration = crash_points.enumerate_points(
        crash_points.SCENARIOS["finalization"],
        tmp_path / "finalization",
        bin_directory,
        select=lambda points: list(crash_points.select_points(points, 1, PLAN_FILES)),
    )
    assert len(enumeration.points) >= 20 and len(enumeration.outcomes) == len(enumeration.points)
    assert all(outcome.killed or outcome.failed for outcome in enumeration.outcomes)
    assert not enumeration.failures, "\n" + crash_points.table([enumeration])
