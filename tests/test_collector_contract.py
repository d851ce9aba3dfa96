"""scripts/collect_state.py as a subprocess: what reaches standard output and
standard error, whatever the environment or the server does.

The contract (references/collector.md): standard output is one document line
or nothing; a failure is exactly one JSON line on standard error; the token
never appears in either.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from simulator.fakegithub import PR_NUMBER, REPOSITORY, RUN_ID, TOKEN, at

ROOT = Path(__file__).resolve().parent.parent
COLLECTOR = ROOT / "scripts" / "collect_state.py"


def run_collector(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    environment = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "NO_PROXY": "127.0.0.1", "GH_TOKEN": TOKEN}
    environment.update(env or {})
    environment = {key: value for key, value in environment.items() if value is not None}
    return subprocess.run([sys.executable, str(COLLECTOR), *args], capture_output=True, text=True, env=environment, timeout=120)


def report(fake, tmp_path: Path, *options: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    return run_collector(tmp_path, "--api-url", fake.url, *options, "report", "--repository", REPOSITORY, "--pr", str(PR_NUMBER), "--run-id", RUN_ID, env=env)


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
    completed = report(fake, tmp_path, env={"GHAPI_DEBUG": "1", "GITHUB_JWT_TOKEN": "eyJhbGciOiJSUzI1NiJ9.fromTheEnvironment.sig"})
    assert completed.returncode == 0, completed.stderr
    assert len(completed.stdout.splitlines()) == 1 and json.loads(completed.stdout)["pr_number"] == PR_NUMBER
    assert completed.stderr == ""


def test_the_token_comes_from_the_named_gh_not_the_one_on_path(fake, tmp_path):
    fake.add_request(0, at(10))
    path_gh = write_gh(tmp_path / "path-bin" / "gh", f'touch "{tmp_path}/path-gh-ran"\necho ghp_fromWhateverIsOnPath\n')
    named_gh = write_gh(tmp_path / "named" / "gh", f"echo {TOKEN}\n")
    env = {"GH_TOKEN": None, "PATH": f"{path_gh.parent}:/usr/bin:/bin"}

    completed = report(fake, tmp_path, "--gh", str(named_gh), env=env)
    assert completed.returncode == 0, completed.stderr

    assert one_error(report(fake, tmp_path, env=env))["code"] == "github-token-missing"  # no --gh: no CLI at all
    assert not (tmp_path / "path-gh-ran").exists()
    assert os.environ.get("NO_PROXY")
