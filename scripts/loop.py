#!/usr/bin/env python3
"""Entry point of the github-codex-pr-loop hands (see act/cli.py).

It runs isolated: it re-executes itself as ``python -I -B`` (no current
directory, script directory, user site or ``PYTHON*`` variable on the import
path, no bytecode written), then loads the skill's code from its sources only
(scripts/isolation.py; references/automation-registry.md#how-the-scripts-run).
"""

import sys

if not sys.flags.safe_path:
    del sys.path[0]  # this directory: nothing in it may shadow a module

import os  # noqa: E402  (loaded at interpreter start-up, before this script)

# The skill's private environment (made by install.py) when it has one, else this interpreter.
_PRIVATE = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), ".venv", "bin", "python")
_PYTHON = _PRIVATE if os.path.exists(_PRIVATE) else sys.executable

if not (sys.flags.isolated and sys.flags.dont_write_bytecode) or sys.executable != _PYTHON:
    try:
        os.execv(_PYTHON, [_PYTHON, "-I", "-B", os.path.realpath(__file__), *sys.argv[1:]])
    except OSError as error:  # refuse rather than run the skill's code unisolated
        sys.stderr.write(f"cannot re-execute the interpreter isolated: {error.strerror}\n")
        sys.exit(2)

_LOADER = os.path.join(os.path.dirname(os.path.realpath(__file__)), "isolation.py")
with open(_LOADER, "rb") as _source:
    _isolation: dict = {"__name__": "isolation", "__file__": _LOADER}
    exec(compile(_source.read(), _LOADER, "exec"), _isolation)  # compiled here: never from a bytecode cache

if __name__ == "__main__":
    sys.exit(_isolation["run"](__file__, "act.cli"))
