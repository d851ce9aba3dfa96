"""The real Codex CLI (npm ``@openai/codex``), as the tests find it.

``.ci/run`` installs the pinned version outside the checkout and puts its
``bin`` on ``PATH`` with ``CODEX_CLI_REQUIRED=1``, so there a missing CLI fails
the tests that need it instead of skipping them. On a developer's machine
without it they are skipped, and the skip says how to install it.
"""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

CODEX_CLI_VERSION = "0.169.0"
INSTALL_HINT = f"npm install -g @openai/codex@{CODEX_CLI_VERSION} (.ci/run does this)"


def codex_binary() -> str:
    """The path of the ``codex`` on PATH, at the pinned version; skip (or fail, in CI) without it."""
    found = shutil.which("codex")
    if found is None:
        if os.environ.get("CODEX_CLI_REQUIRED") == "1":
            pytest.fail(f"the Codex CLI is required here and not on PATH: {INSTALL_HINT}")
        pytest.skip(f"the Codex CLI is not installed: {INSTALL_HINT}")
    version = subprocess.run([found, "--version"], capture_output=True, text=True, timeout=60, check=False)
    if CODEX_CLI_VERSION not in version.stdout:
        pytest.fail(f"{found} is {version.stdout.strip()!r}, not codex-cli {CODEX_CLI_VERSION}: {INSTALL_HINT}")
    return found


def locked_wheelhouse() -> list[str]:
    """``--wheelhouse DIR`` for scripts/environment.py: the runtime lock's files, fetched beforehand.

    ``.ci/run`` downloads them (``pip download --require-hashes``) before the tests and names the directory
    in ``LOCKED_WHEELHOUSE``, so a test that builds the private environment as a person does, hashes
    checked, needs no network. Without it the test is skipped (failed where ``CODEX_CLI_REQUIRED=1``).
    """
    directory = os.environ.get("LOCKED_WHEELHOUSE")
    hint = "python -m pip download --require-hashes --no-deps --only-binary :all: -r requirements-runtime.lock -d DIR"
    if not directory or not os.path.isdir(directory):
        if os.environ.get("CODEX_CLI_REQUIRED") == "1":
            pytest.fail(f"LOCKED_WHEELHOUSE names no directory: {hint} (.ci/run does this)")
        pytest.skip(f"set LOCKED_WHEELHOUSE to a directory made by: {hint}")
    return ["--wheelhouse", directory]
