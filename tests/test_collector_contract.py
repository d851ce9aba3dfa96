"""scripts/collect_state.py as a subprocess: what reaches standard output and
standard error, whatever the environment or the server does.

The contract (references/collector.md): standard output is one document line
or nothing; a failure is exactly one JSON line on standard error; the token
never appears in either.
"""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

import pytest

from evaluator.redact import contains_secret
from simulator.fakegithub import PR_NUMBER, REPOSITORY, RUN_ID, TOKEN, at

ROOT = Path(__file__).resolve().parent.parent
COLLECTOR = ROOT / "scripts" / "collect_state.py"


def run_collector(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "NO_PROXY": "127.0.0.1",
        "GH_TOKEN": TOKEN,
    }
    environment.update(env or {})
    environment = {key: value for key, value in environment.items() if value is not None}
    return subprocess.run(
        [sys.executable, str(COLLECTOR), *args], capture_output=True, text=True, env=environment, timeout=120
    )


def report(fake, tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_collector(
        tmp_path,
        "--api-url",
        fake.url,
        *options,
        "report",
        "--repository",
        REPOSITORY,
        "--pr",
        str(PR_NUMBER),
        "--run-id",
        RUN_ID,
        env=env,
    )


def one_error(completed: subprocess.CompletedProcess) -> dict:
    assert completed.returncode == 1 and completed.stdout == ""
    lines = completed.stderr.splitlines()
    assert len(lines) == 1, completed.stderr
    errors = json.loads(lines[0])["errors"]
    assert len(errors) == 1
    return errors[0]


def write_gh(path: Path, script: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n" + script)
    path.chmod(0o755)
    return path


def test_a_failing_run_with_stats_writes_one_line(fake, tmp_path):
    fake.fail("GET", r"/pulls/7$", 404)
    assert one_error(report(fake, tmp_path, "--stats"))["code"] == "github-not-found"


def test_stats_follow_a_document(fake, tmp_path):
    fake.add_request(0, at(10))
    completed = report(fake, tmp_path, "--stats")
    assert completed.returncode == 0, completed.stderr
    assert json.loads(completed.stdout)["pr_number"] == PR_NUMBER
    assert list(json.loads(completed.stderr)) == ["stats"]


def test_ghapi_debug_and_a_jwt_in_the_environment_change_nothing(fake, tmp_path):
    fake.add_request(0, at(10))
    completed = report(
        fake, tmp_path, env={"GHAPI_DEBUG": "1", "GITHUB_JWT_TOKEN": "eyJhbGciOiJSUzI1NiJ9.fromTheEnvironment.sig"}
    )
    assert completed.returncode == 0, completed.stderr
    assert len(completed.stdout.splitlines()) == 1 and json.loads(completed.stdout)["pr_number"] == PR_NUMBER
    assert completed.stderr == ""


def test_the_token_comes_from_the_named_gh_else_the_one_on_path(fake, tmp_path):
    fake.add_request(0, at(10))
    path_gh = write_gh(tmp_path / "path-bin" / "gh", f'touch "{tmp_path}/path-gh-ran"\necho ghp_fromWhateverIsOnPath\n')
    named_gh = write_gh(tmp_path / "named" / "gh", f"echo {TOKEN}\n")
    env = {"GH_TOKEN": None, "PATH": f"{path_gh.parent}:/usr/bin:/bin"}

    completed = report(fake, tmp_path, "--gh", str(named_gh), env=env)
    assert completed.returncode == 0, completed.stderr
    assert not (tmp_path / "path-gh-ran").exists()

    # Without --gh, the gh on PATH is asked (as users have it), once it is checked as trusted.
    report(fake, tmp_path, env=env)
    assert (tmp_path / "path-gh-ran").exists()
    assert os.environ.get("NO_PROXY")


SENTINEL = "ghp_sentinelTokenForLeakTests00000000abcd"


def no_token_anywhere(completed: subprocess.CompletedProcess, token: str = SENTINEL) -> None:
    assert not contains_secret(completed.stdout + completed.stderr, [token]), completed.stdout + completed.stderr


@pytest.mark.parametrize("variable", ["GH_TOKEN", "GITHUB_TOKEN"])
def test_a_server_echoing_the_token_gets_a_clean_error_and_no_token_is_printed(fake, tmp_path, variable):
    fake.token = SENTINEL
    fake.add_request(0, at(10))
    fake.echo(
        "GET",
        r"/pulls/7$",
        lambda payload, authorization: payload["head"].update(sha=authorization, ref="feature/" + SENTINEL),
    )
    env = {"GH_TOKEN": None, variable: SENTINEL}

    completed = report(fake, tmp_path, "--stats", env=env)

    assert one_error(completed)["code"] == "github-credential-echoed"
    no_token_anywhere(completed)


def test_the_collector_redacts_every_encoding_of_the_token_on_standard_error(tmp_path):
    basic = base64.b64encode(f"x-access-token:{SENTINEL}".encode()).decode()
    for shown in (SENTINEL, quote(SENTINEL, safe=""), basic):
        completed = run_collector(
            tmp_path,
            "recheck-paths",
            "--checkout",
            str(tmp_path),
            "--document",
            f"/nonexistent/{shown}",
            env={"GH_TOKEN": SENTINEL},
        )
        assert completed.returncode == 2 and completed.stdout == ""
        assert json.loads(completed.stderr)["errors"][0]["code"] == "usage-error"
        assert "[REDACTED]" in completed.stderr
        no_token_anywhere(completed)


def test_the_evaluator_redacts_every_encoding_of_the_token(tmp_path):
    basic = base64.b64encode(f"x-access-token:{SENTINEL}".encode()).decode()
    for shown in (SENTINEL, quote(SENTINEL, safe=""), basic):
        completed = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "evaluate_state.py"), "--state", f"/nonexistent/{shown}"],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "GITHUB_TOKEN": SENTINEL},
            timeout=60,
        )
        assert completed.returncode == 2 and len(completed.stdout.splitlines()) == 1
        assert json.loads(completed.stdout)["errors"][0]["code"] == "usage-error"
        assert "[REDACTED]" in completed.stdout
        no_token_anywhere(completed)


def test_the_loop_redacts_every_encoding_of_the_token(tmp_path):
    basic = base64.b64encode(f"x-access-token:{SENTINEL}".encode()).decode()
    for shown in (SENTINEL, quote(SENTINEL, safe=""), basic):
        completed = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "loop.py"), "status", "--state-dir", f"/nonexistent/{shown}"],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "GH_TOKEN": SENTINEL},
            timeout=60,
        )
        assert completed.returncode == 1 and len(completed.stdout.splitlines()) == 1
        assert json.loads(completed.stdout)["errors"][0]["code"] == "state-dir-missing"
        assert "[REDACTED]" in completed.stdout
        no_token_anywhere(completed)
