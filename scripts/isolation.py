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
import importlib.machinery
import os
import sys

# Only modules the interpreter has loaded before any script runs are imported
# here: ``importlib.metadata``, ``importlib.abc`` and ``importlib.util`` pull in
# about forty more standard-library modules (email, zipfile, tempfile...), which
# every run would pay for before its first line of work.

PACKAGES = frozenset({"evaluator", "observe", "act"})


class SourceOnlyLoader(importlib.machinery.SourceFileLoader):
    """Compiles the source every time: never reads or writes a bytecode cache."""

    def get_code(self, fullname):
        path = self.get_filename(fullname)
        return self.source_to_code(self.get_data(path), path)


class SkillFinder:
    """Finds the skill's ``PACKAGES`` (and their submodules) under the skill root only.

    A meta path finder needs only ``find_spec``; it is not derived from
    ``importlib.abc.MetaPathFinder`` so that module is not loaded.
    """

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
        # What importlib.util.spec_from_file_location builds, without loading importlib.util.
        spec = importlib.machinery.ModuleSpec(fullname, SourceOnlyLoader(fullname, filename), origin=filename)
        spec.has_location = True
        spec.submodule_search_locations = search_locations
        spec.cached = None  # there is no bytecode cache for skill code
        return spec


MINIMUM_PYTHON = (3, 11)
RUNTIME_LOCK = "requirements-runtime.lock"
APP = "github-codex-pr-loop"
BUILDER = os.path.join("scripts", "environment.py")
BUILD_HINT = (
    "build the skill's private environment once with `python3 {builder}` (Python 3.11+; it downloads the "
    "locked packages from PyPI, hashes checked); see the skill's README"
)


# Everything from here to ``run`` is compiled and called by whatever interpreter started the script, before it
# re-executes itself: it must parse and run on Python 3.6 (no walrus, no ``match``, no f-string ``=``), so that an
# older ``python3`` (macOS's is 3.9) gets one JSON line instead of a traceback.


def private_environment(root):
    """The skill's private environment: ``$XDG_DATA_HOME/github-codex-pr-loop/env/<SHA-256 of its runtime lock>``.

    Outside the skill's files, so any copy of the skill (a plugin install, a
    plain copy, a clone) with the same lock shares one environment, and a copy
    that lost its symlinks still finds it. ``XDG_DATA_HOME`` defaults to
    ``~/.local/share`` (a relative value is ignored, as the XDG specification
    says). None when the lock cannot be read (the dependency check says so).
    """
    import hashlib  # here, not at the top: a script that re-executes at once never needs it

    try:
        with open(os.path.join(root, RUNTIME_LOCK), "rb") as lock:
            digest = hashlib.sha256(lock.read()).hexdigest()
    except OSError:
        return None
    base = os.environ.get("XDG_DATA_HOME", "")
    if not os.path.isabs(base):
        base = os.path.join(os.path.expanduser("~"), ".local", "share")
    return os.path.join(base, APP, "env", digest)


def build_hint(root):
    return BUILD_HINT.format(builder=os.path.join(root, BUILDER))


def lock_pins(text):
    """The (name, version) of each requirement of a lock; a line ending in a backslash goes on on the next one."""
    pins = []
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            pins.append(tuple(line.split()[0].partition("==")[::2]))
    return pins


def launch(script, module, checks=(), errors_to="stdout"):
    """Re-execute ``script`` isolated in the skill's private environment (or this interpreter), then ``run`` it.

    Under an interpreter older than ``MINIMUM_PYTHON`` with no private
    environment to go to, or one that is itself too old, one JSON line (code
    ``python-too-old``, exit 2) says what to run instead. ``errors_to`` is the
    stream the script prints its errors on (the collector keeps standard
    output for its documents).
    """
    root = os.path.dirname(os.path.dirname(os.path.realpath(script)))
    private = private_environment(root)
    private_python = os.path.join(private, "bin", "python") if private else ""
    target = private_python if private_python and os.path.exists(private_python) else sys.executable
    isolated = sys.flags.isolated and sys.flags.dont_write_bytecode
    if not isolated or sys.executable != target:
        if target == sys.executable and sys.version_info[:2] < MINIMUM_PYTHON:
            return _too_old(script, checks, errors_to)
        try:
            os.execv(target, [target, "-I", "-B", os.path.realpath(script)] + sys.argv[1:])
        except OSError as error:  # refuse rather than run the skill's code unisolated
            problem = f"cannot re-execute {target} isolated ({error.strerror})"
            _report("dependency-missing", problem + "; " + build_hint(root), checks, errors_to)
            return 2
    if sys.version_info[:2] < MINIMUM_PYTHON:
        return _too_old(script, checks, errors_to)
    return run(script, module, checks, errors_to)


def _too_old(script, checks, errors_to):
    root = os.path.dirname(os.path.dirname(os.path.realpath(script)))
    found = "{}.{}".format(*sys.version_info[:2])
    needed = "{}.{}".format(*MINIMUM_PYTHON)
    builder = os.path.join(root, BUILDER)
    private = private_environment(root)
    if private and os.path.realpath(sys.prefix) == os.path.realpath(private):
        problem = f"the skill's private environment {sys.prefix} runs Python {found}"
        fix = "rebuild it with Python {0}+: `python{0} " + builder + " --rebuild`"
    else:
        problem = f"{sys.executable} is Python {found} and the skill has no private environment"
        fix = (
            "run the script with Python {0}+ (`python{0} " + os.path.realpath(script) + "`), or "
            "build the skill's private environment with `python{0} " + builder + "`: its scripts then "
            "re-execute themselves in it under any python3"
        )
    _report("python-too-old", f"{problem}; the skill needs Python {needed}+: {fix.format(needed)}", checks, errors_to)
    return 2


def run(script, module, checks=(), errors_to=None):
    """Import ``module`` from the skill that holds ``script`` and return what its ``main()`` returns.

    A missing or wrongly versioned dependency is one JSON error line (code
    ``dependency-missing``, exit 2) naming the package and the install
    command, on ``errors_to`` (with the check the command line names when
    ``checks`` is given: the evaluator's contract).
    """
    if not (sys.flags.isolated and sys.flags.dont_write_bytecode):
        raise RuntimeError("the skill's code runs only under python -I -B")
    # A pydantic plugin (any installed distribution's ``pydantic`` entry point)
    # gets a hook into every validation: the skill's validators run none. Set
    # before any model is built; the evaluator run as a child inherits it.
    os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"
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
        _report("dependency-missing", f"{problem}; {build_hint(root)}", checks, errors_to or "stdout")
        return 2
    return entry.main()


def dependency_problem(root):
    """What is wrong with this interpreter's packages against the skill's runtime lock, or None."""
    private = private_environment(root)
    if private and os.path.isdir(private) and os.path.realpath(sys.prefix) != os.path.realpath(private):
        return f"the skill's private environment {private} is not the one running (python is {sys.executable})"
    try:
        with open(os.path.join(root, RUNTIME_LOCK), encoding="utf-8") as lock:
            pins = lock_pins(lock.read())
    except OSError as error:
        return f"{RUNTIME_LOCK} cannot be read: {error.strerror}"
    versions = installed_versions([name for name, _ in pins])
    wrong = []
    for name, pinned in pins:
        found = versions.get(name)
        if found != pinned:
            wrong.append(f"{name}=={pinned} ({'missing' if found is None else 'found ' + found})")
    if wrong:
        return f"{sys.executable} lacks the pinned packages {', '.join(wrong)}"
    return None


def installed_versions(names):
    """Each name's installed version, found as ``importlib.metadata.version`` finds it; a missing one is left out.

    The first ``<name>-<version>.dist-info`` (or ``.egg-info``) on ``sys.path``
    whose normalized name matches wins, and its version is the ``Version``
    header of its metadata. One listing of each ``sys.path`` directory serves
    every name, where ``importlib.metadata`` (and the ~40 modules it imports)
    would search the whole path once per name.
    """
    wanted = {_normalized(name): name for name in names}
    found = {}
    for entry in sys.path:
        try:
            children = os.listdir(entry or ".")
        except OSError:  # not a directory (a zip archive holds no installed distribution here)
            continue
        for child in children:
            stem, _, suffix = child.lower().rpartition(".")
            key = _normalized(stem.partition("-")[0])
            if suffix in ("dist-info", "egg-info") and key in wanted and wanted[key] not in found:
                found[wanted[key]] = _metadata_version(os.path.join(entry or ".", child))
    return {name: version for name, version in found.items() if version is not None}


def _normalized(name):
    """A distribution name as importlib.metadata compares it: lower case, each run of ``-_.`` one ``_``."""
    characters = []
    for character in name.lower():
        if character in "-_.":
            if characters[-1:] == ["_"]:
                continue
            character = "_"
        characters.append(character)
    return "".join(characters)


def _metadata_version(info):
    """The ``Version`` header of a ``.dist-info``'s METADATA (an ``.egg-info``'s PKG-INFO), or None."""
    for candidate in (os.path.join(info, "METADATA"), os.path.join(info, "PKG-INFO"), info):
        try:
            with open(candidate, encoding="utf-8", errors="surrogateescape") as metadata:
                for line in metadata:
                    if not line.strip():
                        return None  # the headers end at the first blank line
                    key, colon, value = line.partition(":")
                    if colon and key.strip().lower() == "version":
                        return value.strip()
        except OSError:
            continue
        return None
    return None


def _report(code, message, checks, errors_to):
    """One JSON error line on ``errors_to``: the only thing the script prints."""
    import json  # only on this path: a run that goes on never needs it here

    error = {"code": code, "path": "", "message": message}
    line = {"ok": False, "errors": [error]}
    if checks:
        flags = [arg.partition("=")[0] for arg in sys.argv[1:]]
        named = [check for check in checks if "--" + check in flags]
        line = {"ok": False, "check": named[0] if named else checks[0], "errors": [error]}
    stream = sys.stdout if errors_to == "stdout" else sys.stderr
    stream.write(json.dumps(line, ensure_ascii=True, separators=(",", ":")) + "\n")
    stream.flush()
