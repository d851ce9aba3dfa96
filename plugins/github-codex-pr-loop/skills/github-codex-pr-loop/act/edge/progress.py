"""Progress lines for long steps, on standard error: standard output stays the one JSON line.

Codex's shell tool hands a command that is still running back to the model
after about ten seconds (its ``yield_time_ms``). What the command has printed
so far comes with it, so a push or a validation command that takes longer
says what it is doing instead of looking stuck; the model then polls it
(``write_stdin``) and never starts it again. Each line is
``loop.py: <what>``, written and flushed at once. It never holds a secret:
only operation names, command names and counts reach it.
"""

from __future__ import annotations

import sys


def say(what: str) -> None:
    try:
        sys.stderr.write(f"loop.py: {what}\n")
        sys.stderr.flush()
    except (OSError, ValueError):
        pass  # a closed standard error costs the progress line, never the command
