import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The skill's code directories never hold bytecode: the evaluator pin refuses a
# __pycache__ there (references/automation-registry.md#bytecode-caches). Tests
# import that code in-process, so they write no bytecode, and caches left by an
# earlier plain import are removed before anything else is imported (the list of
# code directories comes from the pin itself, which imports only the standard
# library besides observe/errors.py).
sys.dont_write_bytecode = True
sys.path.insert(0, str(ROOT))
from observe.evaluator_digest import CODE_DIRECTORIES  # noqa: E402

for _code_directory in CODE_DIRECTORIES:
    for _cache in sorted((ROOT / _code_directory).rglob("__pycache__")):
        shutil.rmtree(_cache)

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
settings.register_profile("fast", max_examples=15, deadline=None)
settings.register_profile("thorough", max_examples=100, deadline=None)
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
