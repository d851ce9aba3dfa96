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
import importlib.metadata
import importlib.util
import json
import os
import sys

PACKAGES = frozenset({"evaluator", "observe", "act"})


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Compiles the source every time: never reads or writes a bytecode cache."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class SkillFinder(importlib.abc.MetaPathFinder):
    """Finds the skill's ``PACKAGES`` (and their submodules) under the skill root only."""

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


RUNTIME_LOCK = "requirements-runtime.lock"
PRIVATE_ENVIRONMENT = ".venv"
INSTALL_HINT = (
    "install the skill with its private environment: from a clone of the github-codex-pr-loop "
    "repository run `python install.py` (`--upgrade` to replace an install); see its README"
)


def run(script, module, checks=()):
    """Import ``module`` from the skill that holds ``script`` and return what its ``main()`` returns.

    A missing or wrongly versioned dependency is one JSON error line (code
    ``dependency-missing``, exit 2) naming the package and the install
    command: on standard output with the check the command line names when
    ``checks`` is given (the evaluator's contract), else on standard error.
    """
    if not (sys.flags.isolated and sys.flags.dont_write_bytecode):
        raise RuntimeError("the skill's code runs only under python -I -B")
    root = os.path.dirname(os.path.dirname(os.path.realpath(script)))
    problem = dependency_problem(root)
    if problem is None:
        sys.meta_path.insert(0, SkillFinder(root))
        try:
            entry = importlib.import_module(module)
        except ImportError as error:  # an incomplete install: say so in one line, never a traceback
            missing = error.name or module
            if missing.partition(".")[0] in PACKAGES:
                sys.stderr.write(f"cannot load {missing} from the skill: {error.msg}\n")
                return 2
            problem = f"the package providing {missing!r} is not installed for {sys.executable}"
    if problem is not None:
        _report_missing(problem, checks)
        return 2
    return entry.main()


def dependency_problem(root):
    """What is wrong with this interpreter's packages against the skill's runtime lock, or None."""
    private = os.path.join(root, PRIVATE_ENVIRONMENT)
    if os.path.isdir(private) and os.path.realpath(sys.prefix) != os.path.realpath(private):
        return f"the skill's private environment {private} is not the one running (python is {sys.executable})"
    try:
        with open(os.path.join(root, RUNTIME_LOCK), encoding="utf-8") as lock:
            lines = [line.strip() for line in lock]
    except OSError as error:
        return f"{RUNTIME_LOCK} cannot be read: {error.strerror}"
    wrong = []
    for line in lines:
        if not line or line.startswith("#"):
            continue
        name, _, pinned = line.partition("==")
        try:
            found = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found = None
        if found != pinned:
            wrong.append(f"{name}=={pinned} ({'missing' if found is None else 'found ' + found})")
    if wrong:
        return f"{sys.executable} lacks the pinned packages {', '.join(wrong)}"
    return None


def _report_missing(problem, checks):
    error = {"code": "dependency-missing", "path": "", "message": f"{problem}; {INSTALL_HINT}"}
    if checks:
        named = next((c for arg in sys.argv[1:] for c in checks if arg == f"--{c}" or arg.startswith(f"--{c}=")), None)
        line = {"ok": False, "check": named or checks[0], "errors": [error]}
        sys.stdout.write(json.dumps(line, ensure_ascii=True, separators=(",", ":")) + "\n")
    else:
        sys.stderr.write(json.dumps({"ok": False, "errors": [error]}, ensure_ascii=True) + "\n")

