"""``sitecustomize`` of the crash tests' own Python environment (tests/crash_points.py), never of the skill's.

Every interpreter of that environment imports it at start-up (``-I`` leaves
the site directory's ``sitecustomize`` in place). With ``LOOP_CRASH_PLAN``
naming a plan file it installs an audit hook on ``os.rename`` (which
``os.replace`` raises): each state-file write renamed into the watched state
root is counted in the plan's log, one line per write across every process
of the command, and at the planned write the command's whole process group
is killed, before the rename (``temp``: the new file complete beside the old
one) or right after it (``renamed``). Without the variable it does nothing.
The skill's code has no hook of its own: this is the test's window on it.
"""

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
    busy = []

    def hook(event, arguments):
        if event != "os.rename" or busy:
            return
        source, target = os.fsdecode(arguments[0]), os.fsdecode(arguments[1])
        if not os.path.abspath(target).startswith(root):
            return
        busy.append(True)
        try:
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


if os.environ.get("LOOP_CRASH_PLAN"):
    _install(os.environ["LOOP_CRASH_PLAN"])
