"""How the entry points load the skill's code: from its pinned sources, and nothing else.

An entry point compiles this file from source and calls ``run`` once it runs as
``python -I -B`` (it re-executes itself that way first). ``run`` puts a finder
in front of every other: the skill's packages are found in the skill directory
only, and only as ``.py`` sources compiled on the spot. So no extension module
(``policy.cpython-311-x86_64-linux-gnu.so``), no bytecode file (a planted
``__pycache__/*.pyc``) and no package of the same name elsewhere on
``sys.path`` is ever loaded in their place, and the skill directory itself is
never on ``sys.path``, so a ``json.py`` there cannot shadow the standard
library. Why and what is pinned: references/automation-registry.md#how-the-scripts-run.
"""

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import os
import sys

PACKAGES = frozenset({"evaluator", "observe"})


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Compiles the source every time: never reads or writes a bytecode cache."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class SkillFinder(importlib.abc.MetaPathFinder):
    """Finds ``evaluator`` and ``observe`` (and their submodules) under the skill root only."""

    def __init__(self, root):
        self.root = root

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in PACKAGES:
            return None
        location = os.path.join(self.root, *fullname.split("."))
        package_init = os.path.join(location, "__init__.py")
        if os.path.isfile(package_init):
            return self._spec(fullname, package_init, [location])
        if os.path.isfile(location + ".py"):
            return self._spec(fullname, location + ".py", None)
        # Never fall through to the other finders: they would look elsewhere.
        raise ModuleNotFoundError(f"No module named {fullname!r} in the skill", name=fullname)

    @staticmethod
    def _spec(fullname, filename, search_locations):
        loader = SourceOnlyLoader(fullname, filename)
        spec = importlib.util.spec_from_file_location(
            fullname, filename, loader=loader, submodule_search_locations=search_locations
        )
        spec.cached = None  # there is no bytecode cache for skill code
        return spec


def run(script, module):
    """Import ``module`` from the skill that holds ``script`` and return what its ``main()`` returns."""
    if not (sys.flags.isolated and sys.flags.dont_write_bytecode):
        raise RuntimeError("the skill's code runs only under python -I -B")
    root = os.path.dirname(os.path.dirname(os.path.realpath(script)))
    sys.meta_path.insert(0, SkillFinder(root))
    try:
        entry = importlib.import_module(module)
    except ImportError as error:  # an incomplete install: say so in one line, never a traceback
        sys.stderr.write(f"cannot load {error.name or module} from the skill: {error.msg}\n")
        return 2
    return entry.main()
