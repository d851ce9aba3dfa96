"""The CLI contract of README.md ("The evaluator's contract"), run as a subprocess."""

from __future__ import annotations

import json
import time

import pytest

from tests.helpers import FIXTURES, load, run_cli

MAXIMAL = FIXTURES / "initial" / "valid" / "new-pr-branch-validate-commit-push.json"

RAW_CASES = {
    "invalid-utf8": (b'{"a": "\xc3\x28"}', "json-invalid-utf8"),
    "bom": (b"\xef\xbb\xbf" + MAXIMAL.read_bytes(), "json-bom"),
    "duplicate-key-deep": (b'{"initial_snapshot": {"x": {"y": 1, "y": 1}}}', "json-duplicate-key"),
    "nan": (b'{"initial_plan_hash": NaN}', "json-non-finite-number"),
    "infinity": (b'{"initial_plan_hash": Infinity}', "json-non-finite-number"),
    "fraction": (b'{"initial_plan_hash": 0.5}', "json-fractional-number"),
    "exponent": (b'{"initial_plan_hash": 1E2}', "json-fractional-number"),
    "integer-too-large": (b'{"initial_plan_hash": 9007199254740992}', "json-integer-out-of-range"),
    "integer-too-small": (b'{"initial_plan_hash": -9007199254740992}', "json-integer-out-of-range"),
    "lone-surrogate": (b'{"initial_plan_hash": "\\udc00"}', "json-lone-surrogate"),
    "array-top": (b"[1, 2]", "json-not-object"),
    "scalar-top": (b"true", "json-not-object"),
    "empty": (b"", "json-empty"),
    "deep-nesting": (b"[" * 100_000 + b"]" * 100_000, "json-too-deep"),
    "deep-object-nesting": (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, "json-too-deep"),
    "syntax": (b'{"initial_plan_hash": }', "json-syntax"),
}


@pytest.mark.parametrize("name", sorted(RAW_CASES))
def test_raw_bad_input_is_a_structured_rejection(name, tmp_path):
    raw, code = RAW_CASES[name]
    started = time.monotonic()
    status, output, _ = run_cli("--initial", "-", stdin=raw)
    assert time.monotonic() - started < 10  # generous: a hang would hit the subprocess timeout instead
    assert status == 1
    assert output == {"ok": False, "check": "initial", "errors": [output["errors"][0]]}
    assert output["errors"][0]["code"] == code
    assert output["errors"][0]["path"] == "" or output["errors"][0]["path"].startswith("/")


def test_fifty_megabyte_file_is_rejected_cleanly(tmp_path):
    big = tmp_path / "big.json"
    with big.open("wb") as handle:
        handle.write(b'{"a": "')
        handle.write(b"x" * (50 * 1024 * 1024))
        handle.write(b'"}')
    status, output, _ = run_cli("--initial", str(big))
    assert status == 1
    assert [e["code"] for e in output["errors"]] == ["json-too-large"]


def test_accepted_output_shape():
    status, output, _ = run_cli("--initial", str(MAXIMAL))
    document = load(MAXIMAL)
    assert status == 0
    assert output == {
        "ok": True,
        "check": "initial",
        "initial_plan_hash": document["initial_plan_hash"],
        "snapshot_sha256": document["initial_manifest"]["snapshot_sha256"],
        "mode": "approval-gated",
        "operations": document["initial_manifest"]["operations"],
    }


def test_standard_input_equals_file():
    assert run_cli("--initial", "-", stdin=MAXIMAL.read_bytes())[1] == run_cli("--initial", str(MAXIMAL))[1]


def test_approved_hash_flag():
    document = load(MAXIMAL)
    assert run_cli("--initial", str(MAXIMAL), "--approved-hash", document["initial_plan_hash"])[0] == 0
    status, output, _ = run_cli("--initial", str(MAXIMAL), "--approved-hash", "0" * 64)
    assert status == 1 and [e["code"] for e in output["errors"]] == ["plan-hash-mismatch"]


@pytest.mark.parametrize(
    "args",
    [
        ["--initial", "/nonexistent/document.json"],
        ["--unknown-flag"],
        [],
        ["--initial", str(MAXIMAL), "--prompt", str(MAXIMAL)],
        ["--initial", str(MAXIMAL), "--approved-hash", "ABC"],
        ["--initial", str(MAXIMAL), "--approved-hash", "0" * 64 + "0"],
        ["--initial", str(MAXIMAL), "--now", "2026-11-29T10:00:00Z"],
        ["--initial"],
    ],
)
def test_usage_and_io_errors_exit_two(args):
    status, output, _ = run_cli(*args)
    assert status == 2
    assert output["ok"] is False and output["errors"][0]["code"] == "usage-error"


def test_directory_is_an_io_error(tmp_path):
    assert run_cli("--initial", str(tmp_path))[0] == 2


def test_text_format_for_people():
    import subprocess
    import sys

    from tests.helpers import SCRIPT

    completed = subprocess.run(
        [
            sys.executable,
            str(SCRIPT),
            "--initial",
            str(FIXTURES / "initial" / "invalid" / "paths-not-sorted--reversed.json"),
            "--format",
            "text",
        ],
        capture_output=True,
        text=True,
    )
    assert completed.returncode == 1
    assert "paths-not-sorted" in completed.stdout and "/initial_snapshot/paths" in completed.stdout


@pytest.mark.parametrize("spelling", [["--format", "text"], ["--format=text"]])
def test_text_format_in_either_spelling(spelling):
    import subprocess
    import sys

    from tests.helpers import SCRIPT

    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--initial", str(MAXIMAL), *spelling], capture_output=True, text=True
    )
    assert completed.returncode == 0
    assert completed.stdout.startswith("check: initial\nok: yes\n")


def test_an_unknown_format_is_a_usage_error_in_json():
    status, output, _ = run_cli("--initial", str(MAXIMAL), "--format", "xml")
    assert status == 2 and output["errors"][0]["code"] == "usage-error"


def test_the_cli_writes_no_environment():
    import subprocess
    import sys

    from tests.helpers import ROOT

    probe = (
        "import os\n"
        "before = dict(os.environ)\n"
        "import evaluator.cli\n"
        "assert dict(os.environ) == before, 'import wrote the environment'\n"
        f"evaluator.cli.main(['--initial', {str(MAXIMAL)!r}])\n"
        "assert dict(os.environ) == before, 'a run wrote the environment'\n"
    )
    completed = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr


def test_no_secret_from_environment_reaches_output(monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secretvalue1234567890")
    for path in (MAXIMAL, FIXTURES / "initial" / "invalid" / "invalid-path--dot-dot.json"):
        _, output, stderr = run_cli("--initial", str(path))
        assert "ghp_secretvalue" not in json.dumps(output) + stderr


def test_usage_error_names_the_check_it_was_asked_for():
    assert run_cli("--state")[1]["check"] == "state"
    assert run_cli("--prompt=/nonexistent")[1]["check"] == "prompt"
    assert run_cli("--unknown")[1]["check"] == "initial"


def test_malformed_risk_record_is_named_as_the_record(tmp_path):
    record = tmp_path / "record.json"
    record.write_bytes(b"{")
    status, output, _ = run_cli(
        "--initial",
        str(FIXTURES / "initial" / "valid" / "explicit-risk-acceptance.json"),
        "--risk-acceptance",
        str(record),
    )
    assert status == 1 and [e["code"] for e in output["errors"]] == ["risk-acceptance-invalid"]


def test_unverified_risk_acceptance_is_noted_for_people():
    status, _, stderr = run_cli("--initial", str(FIXTURES / "initial" / "valid" / "explicit-risk-acceptance.json"))
    assert status == 0 and "not verified" in stderr
    assert "not verified" not in run_cli("--initial", str(MAXIMAL))[2]


def test_output_is_one_ascii_json_line_even_for_a_stray_byte_in_argv():
    import subprocess
    import sys

    from tests.helpers import SCRIPT

    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--state", str(MAXIMAL), b"\xff"],
        capture_output=True,
        env={"PYTHONIOENCODING": "ascii", "PATH": "/usr/bin:/bin"},
    )
    assert completed.returncode == 2
    line = completed.stdout.decode("ascii")
    assert line.count("\n") == 1 and json.loads(line)["errors"][0]["code"] == "usage-error"


def test_non_ascii_documents_print_under_an_ascii_locale():
    import subprocess
    import sys

    from tests.helpers import SCRIPT

    path = FIXTURES / "initial" / "invalid" / "invalid-path--hfs-ignorable.json"
    completed = subprocess.run(
        [sys.executable, str(SCRIPT), "--initial", str(path)],
        capture_output=True,
        env={"PYTHONIOENCODING": "ascii", "PATH": "/usr/bin:/bin"},
    )
    assert completed.returncode == 1 and b"Traceback" not in completed.stderr
    assert json.loads(completed.stdout.decode("ascii"))["errors"][0]["code"] == "invalid-path"


@pytest.mark.parametrize(
    "args",
    [["--init", str(MAXIMAL)], ["--initial", str(MAXIMAL), "--approved-hash", "0" * 64, "--approved-hash", "1" * 64]],
)
def test_abbreviated_or_repeated_flags_are_usage_errors(args):
    assert run_cli(*args)[0] == 2
