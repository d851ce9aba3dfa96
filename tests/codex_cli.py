"""The real Codex CLI (npm ``@openai/codex``), as the tests find it.

``.ci/run`` installs the pinned version outside the checkout and puts its
``bin`` on ``PATH`` with ``CODEX_CLI_REQUIRED=1``, so there a missing CLI fails
the tests that need it instead of skipping them. On a developer's machine
without it they are skipped, and the skip says how to install it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading

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


def listed_skills(home: str, codex_home: str, cwd: str) -> list[tuple[str, str]]:
    """The user and repository skills Codex finds for ``cwd`` (its app server's ``skills/list``): (name, path).

    Run with ``HOME`` and ``CODEX_HOME`` as given, so only the skills copied there (and Codex's own system
    skills, left out here) are found; it needs no login and no network.
    """
    requests = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"clientInfo": {"name": "tests", "version": "0"}},
        },
        {"jsonrpc": "2.0", "method": "initialized"},
        {"jsonrpc": "2.0", "id": 2, "method": "skills/list", "params": {"cwds": [cwd]}},
    ]
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "CODEX_HOME": codex_home}
    server = subprocess.Popen(
        [codex_binary(), "app-server"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True, env=environment, cwd=cwd,
    )  # fmt: skip
    assert server.stdin is not None and server.stdout is not None
    deadline = threading.Timer(120, server.kill)  # a server that never answers ends the read below
    deadline.start()
    try:
        for request in requests:
            server.stdin.write(json.dumps(request) + "\n")
            server.stdin.flush()
        for line in server.stdout:  # notifications and the initialize answer come first
            answer = json.loads(line)
            if answer.get("id") == 2:
                break
        else:
            pytest.fail("codex app-server ended without answering skills/list")
    finally:
        deadline.cancel()
        server.kill()
        server.wait(timeout=60)
    assert "result" in answer, answer
    return [
        (skill["name"], skill["path"])
        for entry in answer["result"]["data"]
        for skill in entry["skills"]
        if skill.get("scope") != "system"
    ]
