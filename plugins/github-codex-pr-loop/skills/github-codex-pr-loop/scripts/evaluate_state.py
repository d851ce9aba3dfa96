#!/usr/bin/env python3
"""Entry point of the github-codex-pr-loop evaluator (see evaluator/cli.py).

It runs isolated: it re-executes itself as ``python -I -B`` (no current
directory, script directory, user site or ``PYTHON*`` variable on the import
path, no bytecode written), then loads the skill's code from its sources only
(scripts/isolation.py; references/automation-registry.md#how-the-scripts-run).
"""

import os
import sys

# Only syntax and names Python 3.6 has, up to the launch: an older launcher gets one JSON line, never a traceback.
if not (getattr(sys.flags, "safe_path", False) or sys.flags.isolated):
    del sys.path[0]  # this directory: nothing in it may shadow a module (-I and -P leave it out themselves)

_LOADER = os.path.join(os.path.dirname(os.path.realpath(__file__)), "isolation.py")
with open(_LOADER, "rb") as _source:
    _isolation = {"__name__": "isolation", "__file__": _LOADER}
    exec(compile(_source.read(), _LOADER, "exec"), _isolation)  # compiled here: never from a bytecode cache

if __name__ == "__main__":
    sys.exit(_isolation["launch"](__file__, "evaluator.cli", ("initial", "prompt", "state")))
