"""The simulated clock: every timestamp the simulator writes comes from here.

Time moves only when a test or a scenario says so (``advance``); wall time is
never read, so a scenario replays identically and a ten-minute wait costs no
real second. Timed events (a Codex reply, an automation wakeup) are scheduled
on the clock and run in due order while it advances, each seeing ``now`` equal
to its own due time.
"""

from __future__ import annotations

import heapq
import itertools
import threading
from collections.abc import Callable
from datetime import UTC, datetime, timedelta

DEFAULT_EPOCH = datetime(2026, 10, 1, 10, 0, 0, tzinfo=UTC)


def iso(moment: datetime) -> str:
    """GitHub's timestamp form: UTC, whole seconds, ``Z``."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class SimClock:
    """A monotonic simulated UTC clock with a queue of timed callbacks."""

    def __init__(self, start: datetime = DEFAULT_EPOCH):
        if start.tzinfo is None:
            raise ValueError("the clock needs an aware datetime")
        self._now = start.astimezone(UTC)
        self._lock = threading.RLock()
        self._queue: list[tuple[datetime, int, Callable[[datetime], None]]] = []
        self._order = itertools.count()

    @property
    def now(self) -> datetime:
        return self._now

    def iso(self) -> str:
        return iso(self._now)

    def epoch_seconds(self) -> int:
        return int(self._now.timestamp())

    def schedule(self, due: datetime, callback: Callable[[datetime], None]) -> None:
        """Run ``callback(now)`` when the clock reaches ``due`` (at once on the next advance if past)."""
        with self._lock:
            heapq.heappush(self._queue, (max(due, self._now), next(self._order), callback))

    def pending(self) -> list[datetime]:
        with self._lock:
            return sorted(due for due, _, _ in self._queue)

    def advance(self, delta: timedelta | float = 0) -> datetime:
        """Move forward by ``delta`` (seconds or a timedelta), running every event that falls due."""
        step = delta if isinstance(delta, timedelta) else timedelta(seconds=delta)
        if step < timedelta(0):
            raise ValueError("the simulated clock never goes back")
        return self.advance_to(self._now + step)

    def advance_to(self, target: datetime) -> datetime:
        with self._lock:
            target = max(target, self._now)
            while self._queue and self._queue[0][0] <= target:
                due, _, callback = heapq.heappop(self._queue)
                self._now = due
                callback(due)  # may schedule more events, even due before target
            self._now = target
            return self._now
