"""Command line: parse arguments, call the core, print one result, exit 0/1/2.

    evaluate_state.py --initial PATH [--approved-hash HEX] [--risk-acceptance PATH]
    evaluate_state.py --prompt  PATH
    evaluate_state.py --state   PATH [--approved-hash HEX] [--now TS] [--risk-acceptance PATH]

Standard output is exactly one JSON line (or, with ``--format text``, a report
for people). 0: accepted. 1: rejected. 2: usage or I/O error.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn

from .errors import Rejected, Violation, sorted_violations
from .formats import DIGEST, is_timestamp
from .policy import MAX_DOCUMENT_BYTES

EXIT_ACCEPTED, EXIT_REJECTED, EXIT_USAGE = 0, 1, 2
CHECK_NAMES = ("initial", "prompt", "state")


class UsageError(Exception):
    pass


class HelpRequested(Exception):
    """``-h``/``--help``: the help goes to standard output and the exit status is 0."""


class _Help(argparse.Action):
    def __init__(self, option_strings: list[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=kwargs.get("help"))

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        raise HelpRequested(parser.format_help())


def _version() -> str:
    from .version import VERSION

    return f"evaluate_state.py (github-codex-pr-loop) {VERSION}\n"


class _Version(_Help):
    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        raise HelpRequested(_version())


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would print and exit itself
        raise UsageError(message)


class _Once(argparse.Action):
    """A flag given twice is a usage error, never "the last one wins"."""

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: Any,
        option_string: str | None = None,
    ) -> None:
        if getattr(namespace, self.dest) is not None:
            raise UsageError(f"{option_string} given more than once")
        setattr(namespace, self.dest, values)


def _parser(strict: bool = True) -> _Parser:
    """The command line. Not strict: every flag optional and repeatable, to read ``--format`` from any line."""
    parser = _Parser(
        prog="evaluate_state.py",
        add_help=False,
        allow_abbrev=False,
        description="Validate a github-codex-pr-loop document and print exactly one result.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    if strict:
        parser.add_argument("-h", "--help", action=_Help, help="show this help and exit 0")
        parser.add_argument("--version", action=_Version, help="print the version and exit 0")
    checks: Any = parser.add_mutually_exclusive_group(required=True) if strict else parser
    once: Any = _Once if strict else "store"
    checks.add_argument(
        "--initial", metavar="PATH", action=once, help="initial document (snapshot, manifest, plan hash)"
    )
    checks.add_argument("--prompt", metavar="PATH", action=once, help="bootstrap prompt document")
    checks.add_argument("--state", metavar="PATH", action=once, help="recurring wakeup state")
    parser.add_argument("--approved-hash", metavar="HEX", action=once, help="the plan hash the user approved")
    parser.add_argument(
        "--now", metavar="TS", action=once, help="evaluation instant (ISO-8601 with offset) for --state"
    )
    parser.add_argument(
        "--risk-acceptance", metavar="PATH", action=once, help="canonical risk acceptance record to verify"
    )
    parser.add_argument(
        "--format",
        choices=("json", "text"),
        default="json",
        help="json (default): one JSON line, the contract; text: the same result laid out for people",
    )
    return parser


_EPILOG = """\
PATH may be - for standard input. Exactly one of --initial, --prompt, --state.

output: one JSON line {"ok": ..., "check": ..., ...}; on rejection "errors" is a
sorted list of {"code", "path" (a JSON Pointer), "message"} (codes:
references/errors.md).
exit status: 0 accepted, 1 rejected, 2 usage or I/O error.
"""


def _unknown_arguments(argv: list[str]) -> None:
    """Name every argument the command line does not know, before any other complaint about it.

    argparse would report a missing required flag first, and a mistyped flag
    (``--initail``) only after, so a person would never learn which word was wrong.
    """
    try:
        _, unknown = _parser(strict=False).parse_known_args(argv)
    except UsageError:
        return  # a malformed known flag: the strict parse names it
    if unknown:
        raise UsageError(f"unrecognized arguments: {' '.join(unknown)}")


def _output_format(argv: list[str]) -> str:
    """The --format a command line asks for, read by argparse even when the line is otherwise unusable."""
    try:
        known, _ = _parser(strict=False).parse_known_args(argv)
    except UsageError:
        return "json"  # the format itself is unusable: the usage error is reported as JSON
    return str(known.format)


def _read(path: str) -> bytes:
    # Read one byte past the limit so an oversized input is rejected without
    # ever holding more than the limit in memory.
    try:
        if path == "-":
            return sys.stdin.buffer.read(MAX_DOCUMENT_BYTES + 1)
        with open(path, "rb") as handle:
            return handle.read(MAX_DOCUMENT_BYTES + 1)
    except OSError as error:
        raise UsageError(f"cannot read {path!r}: {error.strerror or error}") from None


def _check_name(args: argparse.Namespace) -> str:
    return next(check for check in CHECK_NAMES if getattr(args, check) is not None)


def _validate_usage(args: argparse.Namespace, check: str) -> None:
    if args.approved_hash is not None:
        if check == "prompt":
            raise UsageError("--approved-hash applies to --initial and --state")
        if not DIGEST.matches(args.approved_hash):
            raise UsageError("--approved-hash must be 64 lowercase hex digits")
    if args.now is not None:
        if check != "state":
            raise UsageError("--now applies to --state only")
        if not is_timestamp(args.now):
            raise UsageError("--now must be ISO-8601 with an explicit offset")
    if args.risk_acceptance is not None and check == "prompt":
        raise UsageError("--risk-acceptance applies to --initial and --state")


def _run(args: argparse.Namespace, check: str) -> dict[str, Any]:
    from .canonical import parse_document
    from .checks import CHECKS

    document = parse_document(_read(getattr(args, check)))
    risk_record = _risk_record(args.risk_acceptance) if args.risk_acceptance else None
    outcome = CHECKS[check](document, approved_hash=args.approved_hash, now=args.now, risk_record=risk_record)
    if outcome.ok and outcome.risk_unverified:
        # Accepted on shape and pairing only: say so to the person reading stderr.
        _write(sys.stderr, "note: the risk acceptance record was not verified (pass it with --risk-acceptance)\n")
    return outcome.output


def _risk_record(path: str) -> dict[str, Any]:
    """The record given with --risk-acceptance; its parse errors are named as its own."""
    from .canonical import parse_document

    try:
        return parse_document(_read(path))
    except Rejected as error:
        raise Rejected(
            Violation("risk-acceptance-invalid", "", f"--risk-acceptance file: {v.code}: {v.message}")
            for v in error.violations
        ) from None


def _write(stream: Any, text: str) -> None:
    """The one way out, for both streams: no form of a GitHub token in the environment survives.

    The evaluator never uses a token, but a document built by hand, or a
    message quoting one, could carry one (references/errors.md, section 9).
    """
    from .redact import redact

    stream.write(
        redact(text, [value for value in (os.environ.get("GH_TOKEN"), os.environ.get("GITHUB_TOKEN")) if value])
    )


def _emit(result: dict[str, Any], output_format: str) -> None:
    # ASCII only, so the line is valid UTF-8 whatever the locale's encoding,
    # even when a message quotes a stray byte from the command line.
    if output_format == "text":
        from .report import text_report

        _write(sys.stdout, text_report(result).encode("ascii", "backslashreplace").decode("ascii"))
    else:
        _write(sys.stdout, json.dumps(result, ensure_ascii=True, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def _failure(check: str, violations: list[Violation]) -> dict[str, Any]:
    return {"ok": False, "check": check, "errors": [v.as_dict() for v in sorted_violations(violations)]}


def _named_check(argv: list[str]) -> str:
    """The check a command line asks for, even when it cannot be parsed.

    Every output names one of the three checks; a command line that names
    none is reported as "initial", the first of them.
    """
    for token in argv:
        for check in CHECK_NAMES:
            if token == f"--{check}" or token.startswith(f"--{check}="):
                return check
    return "initial"


def main(argv: list[str] | None = None) -> int:
    if argv is None:
        argv = sys.argv[1:]
    check = _named_check(argv)
    output_format = _output_format(argv)
    try:
        if "-h" in argv or "--help" in argv:  # help wins over any other complaint about the line
            raise HelpRequested(_parser().format_help())
        if "--version" in argv:  # as help: before any complaint about the rest of the line
            raise HelpRequested(_version())
        _unknown_arguments(argv)
        args = _parser().parse_args(argv)
        check = _check_name(args)
        _validate_usage(args, check)
        result = _run(args, check)
        status = EXIT_ACCEPTED if result["ok"] else EXIT_REJECTED
    except HelpRequested as help_text:
        sys.stdout.write(str(help_text))
        sys.stdout.flush()
        return EXIT_ACCEPTED
    except UsageError as error:
        result, status = _failure(check, [Violation("usage-error", "", str(error))]), EXIT_USAGE
    except Rejected as error:
        result, status = _failure(check, error.violations), EXIT_REJECTED
    except Exception as error:  # never a traceback: a bug here must still fail closed
        result, status = (
            _failure(
                check,
                [Violation("internal-error", "", f"evaluator error ({type(error).__name__}); no write is permitted")],
            ),
            EXIT_USAGE,
        )
    result, status = _fitted(check, result, status)
    _emit(result, output_format)
    return status


def _fitted(check: str, result: dict[str, Any], status: int) -> tuple[dict[str, Any], int]:
    """The result, if it fits its own model (evaluator/models/verdict.py) and its exit status; else an internal error.

    What is printed is what the hands parse: a result that fits no model is never printed.
    """
    found = _violations(check, result)
    if not found and (status == EXIT_ACCEPTED) == (result.get("ok") is True):
        return result, status
    where = found[0].path or "/" if found else "/ok"
    message = f"evaluator error (its result does not fit its model at {where}); no write is permitted"
    return _failure(check, [Violation("internal-error", "", message)]), EXIT_USAGE


def _violations(check: str, result: dict[str, Any]) -> list[Violation]:
    """What keeps ``result`` from being a result of ``check``: accepted if ``ok`` is true, else rejected."""
    from .models.common import Strict, validate
    from .models.verdict import InitialVerdict, PromptVerdict, Rejection

    if result.get("check") != check:
        return [Violation("invalid-value", "/check", f"the result is not one of --{check}")]
    model: type[Strict] | None
    if result.get("ok") is not True:
        model = Rejection
    elif check == "state":  # the --state models load the recurring ones: only a --state run imports them
        from .models.state_verdict import state_model

        model = state_model(result)
    else:
        model = InitialVerdict if check == "initial" else PromptVerdict
    if model is None:
        return [Violation("invalid-value", "/action", f"{result.get('action')!r} is not an action of the registry")]
    return validate(model, result)[1]
