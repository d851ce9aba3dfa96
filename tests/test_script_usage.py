"""Each script, run as a person runs it: real help on --help, and an unknown flag named in the error."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.helpers import FIXTURES, ROOT

EVALUATE = ROOT / "scripts" / "evaluate_state.py"
COLLECT = ROOT / "scripts" / "collect_state.py"
MAXIMAL = FIXTURES / "initial" / "valid" / "new-pr-branch-validate-commit-push.json"


def run(script, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("flag", ["--help", "-h"])
def test_evaluate_state_help_exits_zero_with_every_flag(flag):
    completed = run(EVALUATE, flag)
    assert completed.returncode == 0, completed.stdout
    for word in ("--initial", "--prompt", "--state", "--approved-hash", "--now", "--risk-acceptance", "--format"):
        assert word in completed.stdout
    assert "exit status" in completed.stdout and completed.stderr == ""


def test_evaluate_state_help_wins_over_other_flags():
    completed = run(EVALUATE, "--initial", str(MAXIMAL), "--help")
    assert completed.returncode == 0 and completed.stdout.startswith("usage: evaluate_state.py")


@pytest.mark.parametrize("args", [["--initail", str(MAXIMAL)], ["--initial", str(MAXIMAL), "--initail", "x"]])
def test_evaluate_state_names_an_unknown_flag(args):
    completed = run(EVALUATE, *args)
    assert completed.returncode == 2
    output = json.loads(completed.stdout)
    assert output["errors"][0]["code"] == "usage-error"
    assert "--initail" in output["errors"][0]["message"]


@pytest.mark.parametrize("args", [["--help"], ["state", "--help"], ["initial", "-h"]])
def test_collect_state_help_exits_zero(args):
    completed = run(COLLECT, *args)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("usage: collect_state.py")
    if args[0] == "state":
        # What is required is shown as required, not in brackets.
        assert " --checkpoint DOC --checkout DIR" in completed.stdout


@pytest.mark.parametrize(
    "args",
    [
        ["state", "--chekpoint", "x"],
        ["--chekpoint", "state"],
        ["state", "--checkpoint", "a", "--checkout", "b", "--wakeup-id", "c", "--chekpoint"],
    ],
)
def test_collect_state_names_an_unknown_flag_before_missing_ones(args):
    completed = run(COLLECT, *args)
    assert completed.returncode == 2 and completed.stdout == ""
    error = json.loads(completed.stderr)["errors"][0]
    assert error["code"] == "usage-error" and "--chekpoint" in error["message"]


def test_a_json_syntax_error_says_where_without_a_stutter(tmp_path):
    broken = tmp_path / "broken.json"
    broken.write_bytes(b'{"a": "unterminated')
    completed = run(EVALUATE, "--initial", str(broken))
    message = json.loads(completed.stdout)["errors"][0]["message"]
    assert completed.returncode == 1
    assert "at at" not in message and "starting at line 1 column 7" in message


def test_a_missing_file_is_named():
    completed = run(EVALUATE, "--state", "/nonexistent/state.json")
    assert (
        completed.returncode == 2 and "/nonexistent/state.json" in json.loads(completed.stdout)["errors"][0]["message"]
    )


@pytest.mark.parametrize(
    ("check", "path"),
    [
        ("--initial", MAXIMAL),
        ("--state", FIXTURES / "state" / "scenarios" / "await-approval--remediation.json"),
        ("--state", FIXTURES / "state" / "scenarios" / "claim-plan--finalization.json"),
    ],
)
def test_text_format_lists_operations_and_shows_the_plan_as_a_section(check, path):
    completed = run(EVALUATE, check, str(path), "--format", "text")
    text = completed.stdout
    assert completed.returncode == 0
    assert "[" not in text and "{" not in text.replace("{{", "") and "True" not in text and "None" not in text
    assert "\nplan:\n" in text and "\n  operations:\n    - " in text
    expected = json.loads(run(EVALUATE, check, str(path)).stdout)
    for operation in expected["operations"]:
        assert f"    - {operation}\n" in text


@pytest.mark.parametrize(
    ("flag", "value"), [("--repository", "not-a-repository"), ("--api-url", "ftp://example.invalid")]
)
def test_collect_state_names_the_setting_it_cannot_use(flag, value):
    settings = {"--repository": "octo-org/hello-world", "--api-url": "https://api.github.com", flag: value}
    completed = run(
        COLLECT,
        "--api-url",
        settings["--api-url"],
        "report",
        "--repository",
        settings["--repository"],
        "--pr",
        "7",
        "--run-id",
        "0" * 32,
    )
    error = json.loads(completed.stderr)["errors"][0]
    assert completed.returncode == 2 and completed.stdout == ""
    assert error["code"] == "usage-error" and flag in error["message"] and value in error["message"]


LOOP = ROOT / "scripts" / "loop.py"


@pytest.mark.parametrize("args", [["--help"], ["init", "--help"]])
def test_loop_help_exits_zero(args):
    completed = run(LOOP, *args)
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.startswith("usage: loop.py")


@pytest.mark.parametrize("args", [["init", "--initail"], ["--initail", "init"]])
def test_loop_names_an_unknown_flag_before_missing_ones(args):
    completed = run(LOOP, *args)
    assert completed.returncode == 2
    error = json.loads(completed.stdout or completed.stderr)["errors"][0]
    assert error["code"] == "usage-error" and "--initail" in error["message"]
