"""``sitecustomize`` of the crash tests' own Python environment (tests/crash_points.py), never of the skill's.

Every interpreter of that environment imports it at start-up (``-I`` leaves
the site directory's ``sitecustomize`` in place). With ``LOOP_CRASH_PLAN``
naming a plan file it installs an audit hook on ``os.rename`` (which
``os.replace`` raises): each state-file write renamed into the watched state
root is counted in the plan's log, one line per write across every process
of the command, and at the planned write the command's whole process group
is killed, before the rename (``temp``: the new file complete beside the old
one) or right after it (``renamed``). A GitHub write's ``answered`` kill
point is armed by the test (the plan's ``armed`` file, created before the
simulator sends the answer): the group is then killed at the command's next
state-file write (before its rename) or, failing that, when an interpreter of
the command exits, so the kill always lands after the answer and never misses
a command that finished fast. Without the variable it does nothing.
The skill's code has no hook of its own: this is the test's window on it.
"""

import atexit
import fcntl
import json
import os
import signal
import sys


def _install(plan_path):
    with open(plan_path, encoding="utf-8") as handle:
        plan = json.load(handle)
    root = plan["root"].rstrip("/") + "/"
    log = plan["log"]
    kill_at = plan.get("kill_at")  # the 0-based index of the write in this command; None: count only
    phase = plan.get("phase")
    armed = plan.get("armed")  # a path: once it exists, the next state write (or an exit) is the kill
    busy = []

    def kill_if_armed():
        if armed and os.path.exists(armed):
            os.killpg(os.getpgrp(), signal.SIGKILL)

    def hook(event, arguments):
        if event != "os.rename" or busy:
            return
        source, target = os.fsdecode(arguments[0]), os.fsdecode(arguments[1])
        if not os.path.abspath(target).startswith(root):
            return
        busy.append(True)
        try:
            kill_if_armed()
            descriptor = os.open(log, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o600)
            try:
                fcntl.flock(descriptor, fcntl.LOCK_EX)
                index = len(os.pread(descriptor, 1 << 20, 0).splitlines())
                os.write(descriptor, (json.dumps([index, os.getpid(), os.path.relpath(target, root)]) + "\n").encode())
            finally:
                os.close(descriptor)
            if index != kill_at:
                return
            if phase == "renamed":
                os.replace(source, target)
            os.killpg(os.getpgrp(), signal.SIGKILL)
        finally:
            busy.clear()

    sys.addaudithook(hook)
    atexit.register(kill_if_armed)


if os.environ.get("LOOP_CRASH_PLAN"):
    _install(os.environ["LOOP_CRASH_PLAN"])
