"""Many approval-gated loops at once against one simulated GitHub and one token.

Each loop is the demo's happy path (demo/driver.py: a finding, the fix, a
clean review, the two-phase finalization, the automation deleted), driven
as SKILL.md leads: ``init``, then ``loop.py next`` and the acts it hands
back, each command a real ``scripts/loop`` subprocess, on its own
repository and checkout, but all loops share one World, one TLS front, one
``gh`` token, one Codex home (automation registry) and one state and cache
directory, as one person running many loops on one machine would.

Two phases on the World's shared, compressed clock:

1. start: every loop's init, approval, initial execute and automation
   bootstrap, through a pool of ``--workers`` threads;
2. wakeups: the automation host's RRULE heartbeats fire on the simulated
   clock and each becomes a wakeup of its loop (demo/driver.py
   ``one_wakeup``), run in the same pool; a loop has at most one wakeup
   queued or running, and heartbeats that fall due meanwhile are coalesced
   into its next one (one thread runs one turn at a time). Every command
   moves the shared clock by one second (demo/agent.py), and whenever a
   worker is free the clock jumps to the next heartbeat: the pool stays full,
   so simulated time runs faster than wall time and the soak runs as many
   wakeups at once as ``--workers`` allows.

It reports the primary rate-limit points the shared token spent (REST: one
per answer except a 304; GraphQL: each query's computed cost), per simulated
loop-hour and per wakeup; the wakeups whose wall time exceeded the heartbeat
interval; and every duplicate write it can see in the World. It asserts
nothing; the exit status is 1 when a duplicate write was seen, else 0
(2 for a usage error). Run by hand:

    python bench/soak.py [--loops 50] [--workers 4] [--clean] [--keep DIR]

Each loop is about 22 commands (17 of them ``loop.py``, 5 automation tool
calls), so ``--loops N`` scales the run, and ``--clean`` cuts the remediation
round (bench/README.md has the figures of earlier runs).
"""

from __future__ import annotations

import argparse
import io
import os
import platform
import re
import shutil
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from demo.cli import DELAY_SECONDS  # noqa: E402
from demo.driver import Run  # noqa: E402
from demo.scenarios import SCENARIOS  # noqa: E402
from demo.stack import HEAD_BRANCH, NAME, TOKEN, Stack, git, start  # noqa: E402
from simulator.codex import CodexReviewer  # noqa: E402
from simulator.world import World  # noqa: E402

MAX_WAKEUPS = 40  # as the demo: a loop still going after this many wakeups has gone wrong
INTERVAL = timedelta(minutes=2)  # the loop's heartbeat, FREQ=MINUTELY;INTERVAL=2 (references/automation-registry.md)
OWNER_LOGIN = "loop-owner"
# The loop's markers (evaluator/markers.py): one request per round and per head, one claim per plan.
REQUEST_ROUND = re.compile(r"github-codex-pr-loop-request run=[0-9a-f]+ (round=[0-9]+) ")
REQUEST_SHA = re.compile(r"github-codex-pr-loop-request run=[0-9a-f]+ round=[0-9]+ sha=([0-9a-f]+)")
CLAIM_PLAN = re.compile(r"github-codex-pr-loop-claim run=[0-9a-f]+ kind=[a-z]+ plan=([0-9a-f]+)")


@dataclass
class Wakeup:
    loop: int
    due: datetime  # the earliest heartbeat this wakeup answers (simulated)
    sim_began: datetime
    sim_ended: datetime
    queued: float  # wall seconds from its heartbeat being seen to its first command (waiting for a worker)
    wall: float  # wall seconds from its first command to its last
    commands: int
    first_action: str
    rest: int  # points its own requests cost (the loop's repository is named by each of them)
    graphql: int


@dataclass
class Loop:
    index: int
    stack: Stack
    run: Run
    out: io.StringIO
    reviewer: CodexReviewer
    ended: datetime | None = None
    start_points: tuple[int, int] = (0, 0)
    heartbeats: int = 0
    wakeups: list[Wakeup] = field(default_factory=list)


class Writes:
    """The World's write events, counted per target, to find anything written twice."""

    def __init__(self, world: World):
        self.lock = threading.Lock()
        self.counts: Counter[tuple[str, ...]] = Counter()
        world.subscribe(self.on_event)

    def on_event(self, kind: str, event: dict[str, Any]) -> None:
        repository = event["repository"].full_name
        key: tuple[str, ...] | None = None
        if kind == "pull_request.opened":
            key = ("pull request opened", repository)
        elif kind == "pull_request.ready_for_review":
            key = ("marked ready for review", repository, str(event["number"]))
        elif kind == "pull_request.synchronize":
            key = ("head moved to", repository, event["pull"]["head"]["sha"])
        elif kind == "review_thread.resolved":
            key = ("thread resolved", repository, str(event["thread"]["id"]))
        if key is not None:
            with self.lock:
                self.counts[key] += 1


def points(world: World) -> tuple[int, int]:
    return world.rate_spent.get((TOKEN, "core"), 0), world.rate_spent.get((TOKEN, "graphql"), 0)


def points_on(world: World, repository: str) -> tuple[int, int]:
    spent = world.rate_spent_on
    return spent.get((repository.lower(), "core"), 0), spent.get((repository.lower(), "graphql"), 0)


def window_used(world: World) -> tuple[int, int]:
    return world.rate_window(TOKEN, "core").used, world.rate_window(TOKEN, "graphql").used


class Soak:
    def __init__(self, scratch: Path, loops: int, workers: int, codex: list[Any] | None = None):
        self.began = time.monotonic()
        self.base = start(scratch)
        self.world = self.base.world
        self.writes = Writes(self.world)
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.workers = workers
        self.codex = list(codex or SCENARIOS["happy"].codex)  # Codex's answers to each loop's requests, in order
        self.loops: list[Loop] = []
        self.peak_window = (0, 0)
        self.start_wall = self.wakeups_wall = 0.0
        self.start_points = (0, 0)
        self.duplicate_writes: list[str] = []
        for index in range(loops):
            stack = (
                self.base
                if index == 0
                else self.base.another_repository(f"{NAME}-{index + 1:02d}", scratch / "checkouts" / f"{index + 1:02d}")
            )
            reviewer = CodexReviewer(self.world, list(self.codex), delay=DELAY_SECONDS, repository=stack.repository)
            out = io.StringIO()
            self.loops.append(Loop(index, stack, Run(stack, out), out, reviewer))
        self.setup_wall = time.monotonic() - self.began

    def sample_window(self) -> None:
        core, graphql = window_used(self.world)
        self.peak_window = (max(self.peak_window[0], core), max(self.peak_window[1], graphql))

    def in_pool(self, work: list[Callable[[], None]]) -> None:
        for future in [self.pool.submit(job) for job in work]:
            future.result()

    # -- phase 1 ---------------------------------------------------------------

    def start_all(self) -> None:
        began = time.monotonic()
        self.in_pool([self.starter(loop) for loop in self.loops])
        for loop in self.loops:
            loop.start_points = points_on(self.world, loop.stack.repository)
            if loop.run.final is not None:
                loop.ended = self.world.clock.now
        self.start_wall = time.monotonic() - began
        self.start_points = points(self.world)
        self.sample_window()

    @staticmethod
    def starter(loop: Loop) -> Callable[[], None]:
        return lambda: None if loop.run.guarded(loop.run.start_loop) else None

    # -- phase 2 ---------------------------------------------------------------

    def run_wakeups(self) -> None:
        """Heartbeats to wakeups until every loop has ended, keeping ``workers`` wakeups running when it can.

        A loop has at most one wakeup queued or running. Whenever a worker is
        free and no heartbeat is waiting, the clock jumps to the next heartbeat
        of a loop that is not running; heartbeats that fall due for a running
        loop are coalesced into its next wakeup.
        """
        by_automation = {loop.run.automation_id: loop for loop in self.loops if loop.run.automation_id}
        pending: dict[int, tuple[datetime, float]] = {}  # loop -> (earliest heartbeat not answered, wall when seen)
        running: dict[int, Future[None]] = {}
        began = time.monotonic()
        while True:
            fired, self.base.woken[:] = list(self.base.woken), []
            for automation_id, moment in fired:
                loop = by_automation.get(automation_id)
                if loop is not None and loop.run.final is None:
                    loop.heartbeats += 1
                    pending.setdefault(loop.index, (moment, time.monotonic()))
            for index in [index for index in pending if index not in running]:
                due, seen = pending.pop(index)
                if self.loops[index].run.final is None:
                    running[index] = self.pool.submit(self.wake, self.loops[index], due, seen)
            active = [loop for loop in self.loops if loop.run.final is None]
            if not active and not running:
                break
            idle = [loop for loop in active if loop.index not in running and loop.index not in pending]
            upcoming = [self.base.host.next_wakeup(str(loop.run.automation_id)) for loop in idle]
            if len(running) < self.workers and any(upcoming):
                self.world.clock.advance_to(min(moment for moment in upcoming if moment is not None))
                continue
            if running:
                done, _ = wait(running.values(), return_when=FIRST_COMPLETED)
                for index in [index for index, future in running.items() if future in done]:
                    running.pop(index).result()
                self.sample_window()
                continue
            for loop in active:  # nothing running and no heartbeat to come
                loop.run.final, loop.ended = "no-automation", self.world.clock.now
        self.wakeups_wall = time.monotonic() - began

    def wake(self, loop: Loop, due: datetime, seen: float) -> None:
        run = loop.run
        began, sim_began = time.monotonic(), self.world.clock.now
        commands, steps = len(run.agent.transcript), len(run.steps)
        spent = points_on(self.world, loop.stack.repository)
        if len(loop.wakeups) >= MAX_WAKEUPS:
            run.final = "too-many-wakeups"
        else:
            run.guarded(run.one_wakeup)
        ended = time.monotonic()
        first = next((step.action for step in run.steps[steps:] if step.name == "wakeup"), "nothing")
        rest, graphql = points_on(self.world, loop.stack.repository)
        loop.wakeups.append(
            Wakeup(
                loop.index,
                due,
                sim_began,
                self.world.clock.now,
                began - seen,
                ended - began,
                len(run.agent.transcript) - commands,
                first,
                rest - spent[0],
                graphql - spent[1],
            )
        )
        if run.final is not None:
            loop.ended = self.world.clock.now

    # -- duplicates --------------------------------------------------------------

    def duplicates(self) -> list[str]:
        found = [f"{' '.join(key)}: {count} times" for key, count in sorted(self.writes.counts.items()) if count > 1]
        for loop in self.loops:
            found += self.duplicates_of(loop)
        return found

    def duplicates_of(self, loop: Loop) -> list[str]:
        stack, found, name = loop.stack, [], loop.stack.repository
        pulls = stack.pulls()
        if len(pulls) > 1:
            found.append(f"{name}: {len(pulls)} pull requests")
        requests = Counter(request.head_sha for request in loop.reviewer.requests)
        found += [f"{name}: @codex review requested {n} times for {sha[:12]}" for sha, n in requests.items() if n > 1]
        repository = self.world.repository(*name.split("/"))
        for pull in pulls:
            bodies = [c["body"] for c in stack.comments(pull["number"]) if c["user"]["login"] == OWNER_LOGIN]
            found += [f"{name}: comment posted {n} times: {b[:60]!r}" for b, n in Counter(bodies).items() if n > 1]
            text = "\n".join(bodies)
            for what, pattern in (
                ("review request of round", REQUEST_ROUND),
                ("review request of head", REQUEST_SHA),
                ("claim of plan", CLAIM_PLAN),
            ):
                repeated = Counter(pattern.findall(text))
                found += [f"{name}: {what} {key[:16]} posted {n} times" for key, n in repeated.items() if n > 1]
            replies = Counter(
                (c.get("in_reply_to_id"), c["body"])
                for c in repository.review_comments.get(pull["number"], [])
                if c["user"]["login"] == OWNER_LOGIN and c.get("in_reply_to_id")
            )
            found += [
                f"{name}: reply to review comment {root} posted {n} times" for (root, _), n in replies.items() if n > 1
            ]
        pushed = self.commits_on_head(loop)
        expected = 1 + loop.run.edits  # the initial commit, then one per fix the loop made
        if pushed is not None and pushed > expected:
            found.append(f"{name}: {pushed} commits on {HEAD_BRANCH}, {expected} expected (a double push)")
        return found

    def commits_on_head(self, loop: Loop) -> int | None:
        bare = self.world.bare_repository(*loop.stack.repository.split("/"))
        if loop.stack.remote_tip(HEAD_BRANCH) is None:
            return None
        return int(git(bare, "rev-list", "--count", f"main..{HEAD_BRANCH}"))

    def stop(self) -> None:
        self.pool.shutdown()
        self.base.stop()


def run_soak(scratch: Path, loops: int, workers: int, codex: list[Any] | None = None) -> Soak:
    soak = Soak(scratch, loops, workers, codex)
    try:
        soak.start_all()
        soak.run_wakeups()
        soak.duplicate_writes = soak.duplicates()
    finally:
        soak.stop()
    return soak


def seconds(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"median {statistics.median(ordered):.1f} s, p95 {p95:.1f} s, max {ordered[-1]:.1f} s"


def report(soak: Soak, wall: float, load: tuple[float, float]) -> None:
    loops, world, interval = soak.loops, soak.world, INTERVAL.total_seconds()
    wakeups = [wakeup for loop in loops for wakeup in loop.wakeups]
    now = world.clock.now
    rest, graphql = points(world)
    statuses = Counter(status for _, _, status in world.log)
    print(
        f"machine: {os.cpu_count()} cores, {platform.machine()}, Python {platform.python_version()}; "
        f"load average (1 min) {load[0]:.2f} before, {load[1]:.2f} after"
    )
    answers = " then ".join(entry if isinstance(entry, str) else entry["kind"] for entry in soak.codex)
    print(
        f"{len(loops)} loops, one token, {soak.workers} workers, Codex answers {answers}: wall {wall:.0f} s "
        f"(setup {soak.setup_wall:.0f} s, start phase {soak.start_wall:.0f} s, wakeups {soak.wakeups_wall:.0f} s)"
    )
    print(f"ends: {', '.join(f'{end} {n}' for end, n in Counter(str(loop.run.final) for loop in loops).items())}")
    print(
        f"commands: {sum(len(loop.run.agent.transcript) for loop in loops)} (loop.py subprocesses and automation "
        f"tool calls); "
        f"{len(world.log)} API requests ({', '.join(f'{n} x {s}' for s, n in sorted(statuses.items()))})"
    )
    # Every answer of 400 or above, by route: the permission probes' 422s are expected, anything else is not.
    failing = Counter(
        f"{status} {method} {re.sub(r'/[0-9]+', '/N', path.split('?')[0])}"
        for method, path, status in world.log
        if status >= 400
    )
    print(f"answers of 400 or above: {', '.join(f'{n} x {route}' for route, n in sorted(failing.items())) or 'none'}")
    refused = Counter(f"{method} {re.sub(r'/[0-9]+', '/N', path)}" for _, method, path in world.secondary_refusals)
    print(
        f"content-generating requests of the shared token: {sum(world.content_generated.values())}; refused by "
        f"GitHub's secondary limits (80 such requests a minute, 500 an hour, per token): {sum(refused.values())}"
        + "".join(f"\n  {n} x {what}" for what, n in refused.most_common())
    )
    lifetimes = sum(((loop.ended or now) - loop.run.started).total_seconds() for loop in loops) / 3600
    print(
        f"simulated: {(now - min(loop.run.started for loop in loops)).total_seconds() / 60:.1f} min on the shared "
        f"clock, {lifetimes:.2f} loop-hours (each loop from its init to its end)"
    )

    print("\nrate-limit points of the shared token (REST: 1 per answer but a 304; GraphQL: each query's computed cost)")
    start_rest, start_graphql = soak.start_points
    wake_rest, wake_graphql = rest - start_rest, graphql - start_graphql
    named = sum(sum(loop.start_points) + sum(w.rest + w.graphql for w in loop.wakeups) for loop in loops)
    print(
        f"  in all: {rest} REST, {graphql} GraphQL; {rest + graphql - named} of them on requests that name no "
        "repository (GET /user), left out of the per-wakeup means below"
    )
    print(
        f"  start phase (init to active automation): {start_rest / len(loops):.1f} REST, "
        f"{start_graphql / len(loops):.1f} GraphQL per loop"
    )
    print(
        f"  most spent in one hourly window: {soak.peak_window[0]} REST, {soak.peak_window[1]} GraphQL (of 5000 each)"
    )
    print(
        f"\n  {'wakeups by first answer':<26} {'count':>5} {'REST':>6} {'GraphQL':>8} {'commands':>8} {'wall s':>7}"
        "   (means per wakeup)"
    )
    kinds = sorted({w.first_action for w in wakeups}, key=lambda kind: -sum(w.first_action == kind for w in wakeups))
    for kind in [*kinds, "all"]:
        chosen = [w for w in wakeups if kind in ("all", w.first_action)]
        print(
            f"  {kind:<26} {len(chosen):>5} {statistics.mean(w.rest for w in chosen):>6.2f} "
            f"{statistics.mean(w.graphql for w in chosen):>8.2f} {statistics.mean(w.commands for w in chosen):>8.1f} "
            f"{statistics.mean(w.wall for w in chosen):>7.1f}"
        )
    cadence = len(wakeups) * interval / 3600  # loop-hours if each wakeup had its own heartbeat interval
    print(
        f"\n  per loop-hour, one wakeup per {interval:.0f} s heartbeat ({cadence:.2f} loop-hours of wakeups): "
        f"{wake_rest / cadence:.0f} REST, {wake_graphql / cadence:.0f} GraphQL"
    )
    waits = [w for w in wakeups if w.first_action == "wait"]
    if waits:
        per_hour = 3600 / interval
        print(
            f"  per loop-hour of waiting for Codex (wakeups that answered wait): "
            f"{statistics.mean(w.rest for w in waits) * per_hour:.0f} REST, "
            f"{statistics.mean(w.graphql for w in waits) * per_hour:.0f} GraphQL"
        )
    print(
        f"  per loop-hour on the shared simulated clock (start phase included): {rest / lifetimes:.0f} REST, "
        f"{graphql / lifetimes:.0f} GraphQL"
    )

    print(
        f"\nwakeups: {len(wakeups)}, from {sum(loop.heartbeats for loop in loops)} heartbeats "
        "(the others fell due while their loop's wakeup was queued or running, and were coalesced)"
    )
    print(f"  own wall time, first command to last: {seconds([w.wall for w in wakeups])}")
    print(f"  wall time waiting for a worker after the heartbeat: {seconds([w.queued for w in wakeups])}")
    print(
        f"  over the {interval:.0f} s interval: {sum(w.wall > interval for w in wakeups)} in own wall time, "
        f"{sum(w.queued + w.wall > interval for w in wakeups)} counting the wait for a worker, "
        f"{sum((w.sim_ended - w.due).total_seconds() > interval for w in wakeups)} in simulated time from the "
        "heartbeat (the shared clock runs ahead of wall time to keep the workers busy)"
    )
    for loop in loops:
        if loop.run.final != "done":
            print(f"\nloop {loop.index + 1} ({loop.stack.repository}) ended in {loop.run.final}; its last lines:")
            print("\n".join("  " + line for line in loop.out.getvalue().splitlines()[-12:]))
    print(f"\nduplicate writes: {len(soak.duplicate_writes)}")
    for line in soak.duplicate_writes:
        print(f"  {line}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loops", type=int, default=50, help="concurrent loops (default 50)")
    parser.add_argument("--workers", type=int, default=4, help="commands run at once (default 4)")
    parser.add_argument(
        "--clean",
        action="store_true",
        help="Codex finds nothing at the first review: no remediation round, about two thirds of the commands",
    )
    parser.add_argument("--keep", metavar="DIR", help="run in DIR and keep it (default: a temporary directory)")
    arguments = parser.parse_args(argv)
    if arguments.loops < 1 or arguments.workers < 1:
        parser.error("--loops and --workers must be at least 1")
    scratch = Path(arguments.keep) if arguments.keep else Path(tempfile.mkdtemp(prefix="codex-pr-loop-soak-"))
    load_before, began = os.getloadavg()[0], time.monotonic()
    try:
        soak = run_soak(scratch / "run", arguments.loops, arguments.workers, ["clean"] if arguments.clean else None)
    finally:
        if not arguments.keep:
            shutil.rmtree(scratch, ignore_errors=True)
    report(soak, time.monotonic() - began, (load_before, os.getloadavg()[0]))
    return 1 if soak.duplicate_writes else 0


if __name__ == "__main__":
    sys.exit(main())
