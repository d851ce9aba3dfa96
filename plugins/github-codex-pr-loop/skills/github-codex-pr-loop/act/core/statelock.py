"""One inter-process lock per state directory, held for a whole ``loop.py`` command.

Every command that reads a state directory and then writes (every command
but ``list`` and ``status``) takes an exclusive ``flock`` on the directory's ``lock`` file
the moment it names the directory (``Context.state_dir``; ``init`` as soon as
it has created it) and keeps it until the command returns, ``next``'s whole
chain included: the commands ``next`` runs in process take the lock they
already hold. A second copy of any command on the same directory waits at
most ``WAIT_SECONDS`` and then answers ``loop-busy``, naming the holder (its
pid, command and since when, which the holder writes into the lock file),
having written nothing. ``status``, which only reads, shares the lock through a
read-only descriptor, so it waits for a writer and answers in a read-only
sandbox too.

The kernel releases a ``flock`` when its holder's last descriptor closes, a
process killed by SIGKILL included, so a dead holder's lock is simply taken:
nothing is ever removed or broken by hand, and no stale pid is trusted. The
descriptor is close-on-exec, so no git, gh or validation process started
under the lock can keep it after the command ends.

Under the lock no other process is running a command of this loop, so any
wakeup ``wakeup.json`` shows open is one no live process holds: a refusal
that tells the agent to end it (``wakeup-claim-open``, ``plan-drifted``)
never ends another process's wakeup.
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import stat
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import NamedTuple

from act.core.errors import ActError

LOCK = "lock"
# Codex's shell tool hands control back after about 10 seconds with the command still running; a
# second copy answers well within that, in its own words, instead of being left running unseen.
WAIT_SECONDS = 5.0
_POLL_SECONDS = 0.05
_HOLDER_BYTES = 1024
_COMMAND = re.compile(r"[a-z][a-z-]{0,40}")
_SINCE = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z")

_held: dict[str, int] = {}  # directory path -> the open lock file this process holds
_command = "loop.py"
# Commands that only read the state directory: they share the lock (a writer waits for them, they wait for
# a writer) through a read-only descriptor, so they still answer where the directory cannot be written
# (Codex's read-only sandbox). Before any writer made the lock file there is nothing to wait for.
READERS = frozenset({"status"})


@contextmanager
def command(name: str) -> Iterator[None]:
    """One command: every state directory lock it takes is held until it returns, then released."""
    global _command
    outer, _command = _command, name
    try:
        yield
    finally:
        _command = outer
        release_all()


def release_all() -> None:
    for path in list(_held):
        os.close(_held.pop(path))  # closing the only descriptor releases the flock


def hold(directory: Path) -> None:
    """Take ``directory``'s lock for the rest of the command; a no-op when this process holds it already.

    Waits at most ``WAIT_SECONDS`` for another process to let go, then raises ``loop-busy``.
    """
    key = os.path.abspath(directory)
    if key in _held:
        return
    path = os.path.join(key, LOCK)
    reader = _command in READERS
    descriptor = _open(path, reader=reader)
    if descriptor is None:
        return
    try:
        deadline = time.monotonic() + WAIT_SECONDS
        while not _try_lock(descriptor, fcntl.LOCK_SH if reader else fcntl.LOCK_EX):
            if time.monotonic() >= deadline:
                raise _busy(descriptor, path)
            time.sleep(_POLL_SECONDS)
        if not reader:
            _write_holder(descriptor)
    except BaseException:
        os.close(descriptor)
        raise
    _held[key] = descriptor


def _open(path: str, *, reader: bool) -> int | None:
    """The lock file, created 0600 in one step if absent; it must be a plain 0600 file of this user's.

    A reader opens it read-only and never creates it: None when no writer has made it yet.
    """
    flags = os.O_NOFOLLOW | os.O_CLOEXEC | (os.O_RDONLY if reader else os.O_RDWR | os.O_CREAT)
    try:
        descriptor = os.open(path, flags, 0o600)
    except FileNotFoundError:
        if reader:
            return None
        raise ActError("state-file-unsafe", f"cannot open {path}: no such file", path="/state_dir") from None
    except OSError as error:
        raise ActError("state-file-unsafe", f"cannot open {path}: {error.strerror}", path="/state_dir") from None
    info = os.fstat(descriptor)
    if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid() or info.st_mode & 0o077:
        os.close(descriptor)
        raise ActError("state-file-unsafe", f"{path} must be a regular file with mode 0600", path="/state_dir")
    return descriptor


def _try_lock(descriptor: int, kind: int) -> bool:
    try:
        fcntl.flock(descriptor, kind | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _write_holder(descriptor: int) -> None:
    """Who holds the lock, for a waiting copy to name: the pid, the command, since when. Nothing else."""
    since = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    data = json.dumps({"pid": os.getpid(), "command": _command, "since": since}).encode("ascii") + b"\n"
    os.ftruncate(descriptor, 0)
    os.pwrite(descriptor, data, 0)


class Holder(NamedTuple):
    """Who the lock file says holds the state directory."""

    pid: int
    command: str
    since: str


def read_holder(descriptor: int) -> Holder | None:
    """The holder the lock file names, checked field by field; None when it names none readably."""
    try:
        value = json.loads(os.pread(descriptor, _HOLDER_BYTES, 0).decode("ascii"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    if not isinstance(value, dict) or set(value) != {"pid", "command", "since"}:
        return None
    pid, name, since = value["pid"], value["command"], value["since"]
    if type(pid) is not int or pid < 1 or not isinstance(name, str) or not isinstance(since, str):
        return None
    if not _COMMAND.fullmatch(name) or not _SINCE.fullmatch(since):
        return None
    return Holder(pid, name, since)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _busy(descriptor: int, path: str) -> ActError:
    holder = read_holder(descriptor)
    if holder is not None and not _alive(holder.pid):
        holder = None  # the file names an earlier, finished holder: a reader holds it now, and names none
    named = (
        f"`loop.py {holder.command}` (pid {holder.pid}, since {holder.since})"
        if holder is not None
        else "another command (it has not yet said which)"
    )
    return ActError(
        "loop-busy",
        f"{named} holds this loop's state directory ({path}); after {WAIT_SECONDS:g} s of waiting nothing was written",
        path="/state_dir",
        details={"holder": None if holder is None else holder._asdict()},
    )
