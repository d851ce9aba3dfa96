"""The collector's command line: parse, collect, print one result.

    collect_state.py initial  --checkout DIR --repository O/R --base B --head H --path P...
                              [--command JSON...] [--create-branch] [--commit] [--push]
    collect_state.py prompt   --initial DOC --pr N --automation-id ID --checkout DIR [--registry DIR]
    collect_state.py state    --checkpoint PROMPT_DOC --checkout DIR --wakeup-id HEX [--registry DIR]
                              [--approved-hash HEX]
    collect_state.py report   --repository O/R --pr N --run-id HEX
    collect_state.py boundary --checkout DIR --repository O/R [--risk-acceptance-sha256 HEX]
    collect_state.py recheck-paths --checkout DIR --document DOC

Standard output carries the document and nothing else; on any failure it stays
empty (nothing that could be mistaken for a snapshot), the error goes to
standard error as one JSON line, and the exit status is 1 (2 for usage). The
work is done by observe/collect.py; every failure it knows is an
``ObserveError`` (observe/errors.py). references/collector.md is the manual.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, NoReturn, Protocol

from evaluator.redact import contains_secret, redact
from observe.errors import ObserveError, UsageError
from observe.gh import find_gh
from observe.network import Network, NetworkSettingError, from_environment

if TYPE_CHECKING:
    from observe import collect  # imported by main(): --help and usage errors need none of it

_HEX32 = re.compile(r"[0-9a-f]{32}")
_HEX64 = re.compile(r"[0-9a-f]{64}")


class RouteFlags(Protocol):
    """The route flags a command line gives (this one's, or the hands' typed options)."""

    @property
    def https_proxy(self) -> str | None: ...
    @property
    def ca_file(self) -> str | None: ...
    @property
    def api_url(self) -> str | None: ...


class UnknownFlagsFirstParser(argparse.ArgumentParser):
    """A parser that names an unknown flag before any other complaint about the line.

    argparse reports a missing required flag first, so a mistyped flag
    (``--chekout``) would never be named; a first pass with nothing required,
    in this parser and in its subcommand's, finds the words no parser knows.
    Every complaint goes through ``error``, which raises (argparse would print
    and exit itself): here observe's ``UsageError``; the hands' command line
    (act/cli.py) overrides it with its own.
    """

    def error(self, message: str) -> NoReturn:
        raise UsageError(message)

    # True while the first pass runs: every nested (subcommand) parser relaxes too.
    _first_pass = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        if UnknownFlagsFirstParser._first_pass:
            return self._relaxed(args, namespace)
        if {"-h", "--help"} & set(sys.argv[1:] if args is None else args):
            return super().parse_known_args(args, namespace)  # help shows what is required
        UnknownFlagsFirstParser._first_pass = True
        try:
            _, unknown = self._relaxed(args, None)
        finally:
            UnknownFlagsFirstParser._first_pass = False
        if unknown:
            self.error(f"unrecognized arguments: {' '.join(unknown)}")
        return super().parse_known_args(args, namespace)

    def _relaxed(self, args: Any, namespace: Any) -> Any:
        required = [action for action in self._actions if action.required]
        for action in required:
            action.required = False
        try:
            return super().parse_known_args(args, namespace)
        finally:
            for action in required:
                action.required = True


_EPILOG = """\
Run "collect_state.py COMMAND --help" for one command's flags.

output: the document as one JSON line on standard output, nothing else; on
failure standard output stays empty and standard error carries one JSON line
{"ok": false, "errors": [{"code", "path", "message"}]} (codes: references/errors.md).
exit status: 0 collected, 1 refused, 2 usage error. Manual: references/collector.md.
"""


def _parser() -> UnknownFlagsFirstParser:
    parser = UnknownFlagsFirstParser(
        prog="collect_state.py",
        description="Collect a github-codex-pr-loop document from the checkout, GitHub and the automation registry.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    from evaluator.version import VERSION

    parser.add_argument(
        "--version", action="version", version=f"%(prog)s (github-codex-pr-loop) {VERSION}", help="print the version"
    )
    parser.add_argument("--api-url", default="https://api.github.com", metavar="URL", help="GitHub REST base URL")
    parser.add_argument("--gh", metavar="PATH", help="absolute path of the GitHub CLI used as git's credential helper")
    parser.add_argument("--stats", action="store_true", help="print request and rate-limit counts to standard error")
    parser.add_argument("--observed-at", metavar="TS", help="override the observation instant (ISO-8601 with offset)")
    add_network_options(parser)
    commands = parser.add_subparsers(
        dest="subcommand", required=True, metavar="COMMAND", parser_class=UnknownFlagsFirstParser
    )

    initial = commands.add_parser("initial", help="the initial snapshot of a local change, before any write")
    initial.add_argument("--checkout", required=True, metavar="DIR", help="the git checkout holding the change")
    initial.add_argument("--repository", required=True, metavar="O/R", help="the GitHub repository, owner/name")
    initial.add_argument("--base", required=True, help="the base branch of the pull request")
    initial.add_argument("--head", required=True, help="the head branch of the pull request")
    initial.add_argument("--path", action="append", default=[], help="one changed path (repeat for each)")
    initial.add_argument(
        "--command", action="append", default=[], help="one command as a JSON array of strings, in execution order"
    )
    for flag in ("create-branch", "commit", "push"):
        initial.add_argument(f"--{flag}", action="store_true", help=f"the plan will {flag.replace('-', ' ')}")

    prompt = commands.add_parser("prompt", help="the bootstrap prompt document, after the PR and the stub exist")
    prompt.add_argument("--initial", required=True, metavar="DOC", help="the initial document that was approved")
    prompt.add_argument("--pr", type=int, required=True, metavar="N", help="the pull request number")
    prompt.add_argument("--automation-id", required=True, metavar="ID", help="the paused automation stub")
    prompt.add_argument("--checkout", required=True, metavar="DIR", help="the git checkout")
    prompt.add_argument("--registry", metavar="DIR", help="the Codex automation registry (default: the user's)")

    state = commands.add_parser("state", help="the complete state one wakeup evaluates")
    state.add_argument("--checkpoint", required=True, metavar="DOC", help="the prompt document that --prompt accepted")
    state.add_argument("--checkout", required=True, metavar="DIR", help="the git checkout")
    state.add_argument("--wakeup-id", required=True, metavar="HEX", help="32 lowercase hex digits, new for each wakeup")
    state.add_argument("--registry", metavar="DIR", help="the Codex automation registry (default: the user's)")
    state.add_argument(
        "--approved-hash", metavar="HEX", help="the plan hash the user approved, carried as approved_plan_hash"
    )

    report = commands.add_parser("report", help="a report-only state of a pull request (never plans a write)")
    report.add_argument("--repository", required=True, metavar="O/R", help="the GitHub repository, owner/name")
    report.add_argument("--pr", type=int, required=True, metavar="N", help="the pull request number")
    report.add_argument("--run-id", required=True, metavar="HEX", help="32 lowercase hex digits")

    boundary = commands.add_parser("boundary", help="the execution boundary a remediation plan binds")
    boundary.add_argument("--checkout", required=True, metavar="DIR", help="the git checkout")
    boundary.add_argument("--repository", required=True, metavar="O/R", help="the GitHub repository, owner/name")
    boundary.add_argument(
        "--risk-acceptance-sha256", help="bind an accepted risk record (explicit-risk-acceptance form)"
    )

    recheck = commands.add_parser("recheck-paths", help="re-observe the path records a document holds")
    recheck.add_argument("--checkout", required=True, metavar="DIR", help="the git checkout")
    recheck.add_argument("--document", required=True, metavar="DOC", help="the document whose paths are re-observed")
    return parser


def add_network_options(parser: argparse.ArgumentParser) -> None:
    """The route to github.com for GitHub and git alike (observe/network.py); the hands share it."""
    parser.add_argument("--https-proxy", metavar="URL", help="HTTPS proxy to github.com, http(s)://HOST:PORT")
    parser.add_argument("--ca-file", metavar="PATH", help="extra PEM CA to trust (absolute path)")


def network_from(args: RouteFlags, environ: Mapping[str, str] | None = None) -> Network:
    """The validated Network of --https-proxy/--ca-file; a bad value is a usage error.

    With neither flag, ``environ`` (when given) may name the route: HTTPS_PROXY and
    SSL_CERT_FILE, then taken by git too (observe/network.py, ``from_environment``).
    """
    try:
        if args.https_proxy is None and args.ca_file is None and environ is not None:
            return from_environment(environ, args.api_url or "https://api.github.com")
        return Network(https_proxy=args.https_proxy, ca_file=args.ca_file)
    except NetworkSettingError as error:
        raise UsageError(str(error)) from None


def _observed_at(text: str | None) -> datetime:
    if text is None:
        return datetime.now(UTC)
    from evaluator.formats import is_timestamp, parse_timestamp

    if not is_timestamp(text):
        raise UsageError("--observed-at must be ISO-8601 with an explicit offset")
    return parse_timestamp(text)


def _command_argv(text: str) -> list[str]:
    try:
        argv = json.loads(text)
    except ValueError:
        argv = None
    if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
        raise UsageError("--command takes a JSON array of strings")
    return argv


def _hex32(value: str, flag: str) -> str:
    if not _HEX32.fullmatch(value):
        raise UsageError(f"{flag} must be 32 lowercase hex digits")
    return value


def _check_settings(args: argparse.Namespace) -> None:
    """Name the flag whose value cannot be used, before anything is read or asked of GitHub."""
    from urllib.parse import urlsplit

    from evaluator.formats import REPOSITORY

    repository = getattr(args, "repository", None)
    if repository is not None and not REPOSITORY.matches(repository.lower()):  # the client's own test
        raise UsageError(f"--repository must be owner/name, got {repository!r}")
    api_url = urlsplit(args.api_url)
    if api_url.scheme not in ("http", "https") or not api_url.netloc:
        raise UsageError(f"--api-url must be an http(s) base URL, got {args.api_url!r}")


def _collect(args: argparse.Namespace, settings: collect.Settings) -> dict[str, Any]:
    from observe import collect

    if args.subcommand == "recheck-paths":
        return collect.recheck_paths(checkout=args.checkout, document_path=args.document)
    if args.subcommand == "initial":
        commands = [_command_argv(text) for text in args.command]
        return collect.initial(
            settings,
            checkout=args.checkout,
            repository=args.repository,
            base=args.base,
            head=args.head,
            paths=args.path,
            commands=commands,
            create_branch=args.create_branch,
            commit=args.commit,
            push=args.push,
        )
    if args.subcommand == "prompt":
        return collect.prompt(
            settings,
            initial_path=args.initial,
            pr_number=args.pr,
            automation_id=args.automation_id,
            checkout=args.checkout,
            registry=args.registry,
        )
    if args.subcommand == "state":
        wakeup_id = _hex32(args.wakeup_id, "--wakeup-id")
        if args.approved_hash is not None and not _HEX64.fullmatch(args.approved_hash):
            raise UsageError("--approved-hash must be 64 lowercase hex digits")
        return collect.wakeup(
            settings,
            checkpoint_path=args.checkpoint,
            checkout=args.checkout,
            wakeup_id=wakeup_id,
            registry=args.registry,
            approved_plan_hash=args.approved_hash,
        )
    if args.subcommand == "report":
        run_id = _hex32(args.run_id, "--run-id")
        return collect.report(settings, repository=args.repository, pr_number=args.pr, run_id=run_id)
    return collect.boundary(
        settings, checkout=args.checkout, repository=args.repository, risk_acceptance_sha256=args.risk_acceptance_sha256
    )


def _environment_tokens() -> list[str]:
    return [value for value in (os.environ.get("GH_TOKEN"), os.environ.get("GITHUB_TOKEN")) if value]


def _fail(code: str, message: str, secrets: list[str]) -> None:
    _print(sys.stderr, json.dumps({"ok": False, "errors": [{"code": code, "path": "", "message": message}]}), secrets)


def _print(stream: Any, line: str, secrets: list[str]) -> None:
    """The one way out: every line either stream carries loses every form of every known token."""
    stream.write(redact(line, secrets) + "\n")


def main(argv: list[str] | None = None, *, sleep: Callable[[float], None] = time.sleep) -> int:
    """Run one collection; ``sleep`` is the wait between GitHub retries (tests pass their own)."""
    secrets = _environment_tokens()  # the token resolved for GitHub joins them (collect.Settings.secrets)
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
        _check_settings(args)
        from observe import collect  # only now: --help and a usage error need none of the observers

        settings = collect.Settings(
            api_url=args.api_url,
            gh_path=find_gh(args.gh),  # --gh, else the gh on PATH (checked as trusted where it runs)
            observed_at=_observed_at(args.observed_at),
            sleep=sleep,
            secrets=secrets,
            network=network_from(args, os.environ),
        )
        document = _collect(args, settings)
    except UsageError as error:
        _fail("usage-error", str(error), secrets)
        return 2
    except ObserveError as error:
        _fail(error.code, error.message, secrets)
        return 1
    except KeyboardInterrupt:
        raise
    except Exception as error:  # never a traceback, never a partial document
        _fail("collector-internal-error", type(error).__name__, secrets)
        return 1
    line = json.dumps(document, ensure_ascii=False)
    if contains_secret(line, secrets):
        # A document that would need redacting is no longer the observation: refuse it whole.
        _fail(
            "collector-credential-in-output", "the document would carry the GitHub token; nothing is printed", secrets
        )
        return 1
    _print(sys.stdout, line, secrets)
    if args.stats:
        # After a document only: a failed run's standard error is its one error line.
        for stats in settings.github_stats:
            _print(sys.stderr, json.dumps({"stats": stats}), secrets)
    return 0
