import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The skill's code directories never hold bytecode: the evaluator pin refuses a
# __pycache__ there (references/automation-registry.md#bytecode-caches). Tests
# import that code in-process, so their bytecode (and pytest's rewritten test
# modules) goes to one cache outside every code directory, .pycache/ at the
# root, for this process and every interpreter a test starts (the scripts run
# ``-I -B``: they neither read the variable nor write any). Caches left in the
# code directories by an earlier plain import are removed before anything else
# is imported (the list of code directories comes from the pin itself, which
# imports only the standard library besides observe/errors.py).
sys.pycache_prefix = str(ROOT / ".pycache")
os.environ["PYTHONPYCACHEPREFIX"] = sys.pycache_prefix
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False
sys.path.insert(0, str(ROOT))
from observe.evaluator_digest import CODE_DIRECTORIES  # noqa: E402

for _code_directory in CODE_DIRECTORIES:
    for _cache in sorted((ROOT / _code_directory).rglob("__pycache__")):
        shutil.rmtree(_cache, ignore_errors=True)  # another test worker may be removing it too

# The skill's private environment is looked up under XDG_DATA_HOME (scripts/isolation.py): one the person
# built for their own installs must not stand in for the interpreter under test. Nothing is ever built here;
# a test that builds one names its own directory.
os.environ["XDG_DATA_HOME"] = str(ROOT / ".pycache" / "no-private-environment")

# Loopback servers only: never let an inherited proxy see test traffic.
os.environ["NO_PROXY"] = "127.0.0.1,localhost"
os.environ["no_proxy"] = "127.0.0.1,localhost"


import pytest  # noqa: E402
from hypothesis import settings  # noqa: E402

# Example budgets. "fast" (the default) keeps the README's test command quick;
# "thorough" is what CI runs (.ci/run sets HYPOTHESIS_PROFILE=thorough; pytest's
# --hypothesis-profile=thorough does the same). A property that needs more
# examples asks for a multiple of the profile's budget (tests/helpers.examples).
# No deadline: a loaded machine must not turn a slow example into a failure.
# No example database: parallel workers share no example files in the checkout
# (a failure prints its falsifying example). Hypothesis still caches the
# constants it reads from the sources in .hypothesis/constants/, one file per
# source digest, each written atomically: safe for parallel workers.
settings.register_profile("fast", max_examples=15, deadline=None, database=None)
settings.register_profile("thorough", max_examples=100, deadline=None, database=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "fast"))


@pytest.fixture(scope="module")
def server():
    """The fake GitHub on 127.0.0.1, one per test module."""
    from simulator.fakegithub import FakeGitHub

    fake = FakeGitHub().start()
    yield fake
    fake.stop()


@pytest.fixture
def fake(server):
    """The fake GitHub, reset to a fresh scenario for each test."""
    server.reset()
    return server


# -- what the default run leaves out -------------------------------------------------------
# pyproject.toml's addopts deselect the tests marked slow (-m "not slow"): long
# end-to-end scenarios that .ci/run runs with -m slow. The summary names how
# many were left out and how to run them, also when the tests ran in parallel
# (each xdist worker collects and deselects; the controller prints the count).

_slow_left_out: set[str] = set()


def pytest_deselected(items):
    _slow_left_out.update(item.nodeid for item in items if item.get_closest_marker("slow"))


def pytest_sessionfinish(session):
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:  # an xdist worker: the controller prints the summary
        workeroutput["slow_left_out"] = sorted(_slow_left_out)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    _slow_left_out.update(getattr(node, "workeroutput", {}).get("slow_left_out", []))


def pytest_terminal_summary(terminalreporter, config):
    if _slow_left_out and "not slow" in config.getoption("markexpr"):  # not when -k alone left them out
        terminalreporter.write_line(
            f"{len(_slow_left_out)} slow end-to-end tests were left out (-m 'not slow'); "
            "run them with: python -m pytest -m slow"
        )
