"""What one subcommand of ``scripts/loop.py`` is, and what every subcommand gets.

A ``Command`` is a row of the CLI's table (act/cli.py): a name, one line of
help, a function that adds its own options (act/flags.py), and the function
that runs it and returns the result object, named ``module:function`` and
imported only when that command runs (so ``status`` never loads the
executor). Adding a command is adding a row.
"""

from __future__ import annotations

import argparse
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from act.core import statedir, statelock
from act.core.errors import UsageError
from act.core.jsonedge import Output
from act.core.options import Options
from act.edge.sources import World

HEX32 = re.compile(r"[0-9a-f]{32}")
HEX64 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class Context:
    world: World
    options: Options

    def state_dir(self, run_id: str | None = None) -> statedir.StateDir:
        """The loop's directory: --state-dir, else the default for --run-id (or the given run id)."""
        if self.options.state_dir:
            directory = statedir.StateDir(Path(self.options.state_dir))
        else:
            run_id = self.options.run_id or run_id
            if run_id is None:
                raise UsageError("name the loop with --state-dir DIR or --run-id HEX")
            directory = statedir.StateDir(statedir.default_path(run_id))
        directory.check()
        statelock.hold(directory.path)  # for the rest of the command: no second copy reads and writes meanwhile
        self.world.bind(directory)  # the route and identity init recorded, for this and every later step
        return directory


@dataclass(frozen=True)
class Command:
    name: str
    summary: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: str  # "act.plans:run_init"

    def runner(self) -> Callable[[Context], Output]:
        """The command's function, its module imported now."""
        module, _, function = self.run.partition(":")
        found: Callable[[Context], Output] = getattr(importlib.import_module(module), function)
        return found
