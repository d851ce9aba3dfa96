"""``scripts/loop.py``: the hands' command line, a table of subcommands.

    loop.py COMMAND [--state-dir DIR | --run-id HEX] [--api-url URL] [--gh PATH] [--registry DIR]
                    [--format json|text] ...

Standard output is exactly one JSON line: ``{"ok": true, "command": ..., ...}``
or ``{"ok": false, "command": ..., "errors": [{"code", "path", "message"}], ...}``.
``--format text`` prints the same for people, the approval summary first.
Exit status: 0 done, 1 refused or failed (no write is permitted), 2 usage or
internal error. Commands: references/hands.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn

# The evaluator's models may be imported in-process by observe; no third-party
# pydantic plugin gets a hook into them (as in evaluator/cli.py).
os.environ["PYDANTIC_DISABLE_PLUGINS"] = "__all__"

from act import automation, execute_cli, plans, wakeup  # noqa: E402
from act import summary as summaries  # noqa: E402
from act.command import Command, Context  # noqa: E402
from act.errors import ActError, UsageError  # noqa: E402
from act.sources import World  # noqa: E402
from observe.cli import add_network_options, network_from  # noqa: E402
from observe.errors import UsageError as ObserveUsageError  # noqa: E402

# The table. A new command is a new row (see act/command.py).
TABLE: list[Command] = [*plans.COMMANDS, *wakeup.COMMANDS, *execute_cli.COMMANDS, *automation.COMMANDS]


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:  # argparse would print and exit itself
        raise UsageError(message)

    # True while the first pass runs: every nested (subcommand) parser relaxes too.
    _first_pass = False

    def parse_known_args(self, args: Any = None, namespace: Any = None) -> Any:
        """Name an unknown flag before any other complaint about the line.

        argparse reports a missing required flag first, so a mistyped flag
        (``--chekout``) would never be named; a first pass with nothing
        required, here and in the subcommand's parser, finds the words no
        parser knows (the collector's command line does the same).
        """
        if _Parser._first_pass:
            return self._relaxed(args, namespace)
        if {"-h", "--help"} & set(sys.argv[1:] if args is None else args):
            return super().parse_known_args(args, namespace)  # help shows what is required
        _Parser._first_pass = True
        try:
            _, unknown = self._relaxed(args, None)
        finally:
            _Parser._first_pass = False
        if unknown:
            raise UsageError(f"unrecognized arguments: {' '.join(unknown)}")
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


def _common() -> _Parser:
    common = _Parser(add_help=False, allow_abbrev=False)
    common.add_argument("--state-dir", metavar="DIR", help="the loop's state directory")
    common.add_argument("--run-id", metavar="HEX", help="name the loop by run id (its default state directory)")
    common.add_argument("--api-url", default="https://api.github.com", help="GitHub REST base URL")
    common.add_argument("--gh", metavar="PATH", help="absolute path of the GitHub CLI (git's credential helper)")
    common.add_argument(
        "--registry", metavar="DIR", help="the Codex automation registry (default $CODEX_HOME/automations)"
    )
    common.add_argument(
        "--observed-at", metavar="TS", help="the observation instant (ISO-8601 with offset); default now"
    )
    common.add_argument("--format", choices=("json", "text"), default="json")
    add_network_options(common)
    return common


def parser() -> _Parser:
    top = _Parser(
        prog="loop.py",
        allow_abbrev=False,
        description=(
            "The hands of github-codex-pr-loop: build plans, keep the loop's state, manage its automation "
            "(references/hands.md)."
        ),
    )
    commands = top.add_subparsers(dest="subcommand", metavar="COMMAND", required=True, parser_class=_Parser)
    common = _common()
    for row in TABLE:
        sub = commands.add_parser(
            row.name, help=row.summary, description=row.summary, parents=[common], allow_abbrev=False
        )
        row.configure(sub)
    return top


def _validate(args: argparse.Namespace) -> None:
    from act.command import HEX32

    if args.run_id is not None and not HEX32.fullmatch(args.run_id):
        raise UsageError("--run-id must be 32 lowercase hex digits")
    if args.state_dir is not None and args.run_id is not None:
        raise UsageError("give --state-dir or --run-id, not both")
    if args.observed_at is not None:
        from evaluator.formats import is_timestamp

        if not is_timestamp(args.observed_at):
            raise UsageError("--observed-at must be ISO-8601 with an explicit offset")


def _network(args: argparse.Namespace) -> Any:
    """The route to github.com (--https-proxy, --ca-file), validated; a bad value is a usage error."""
    try:
        return network_from(args)
    except ObserveUsageError as error:
        raise UsageError(str(error)) from None


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Tokens known from the environment, joined by any a GitHub observation resolves.
    secrets = [value for value in (os.environ.get("GH_TOKEN"), os.environ.get("GITHUB_TOKEN")) if value]
    name = next((token for token in argv if any(token == row.name for row in TABLE)), None)
    output_format = "text" if _format_text(argv) else "json"
    try:
        args = parser().parse_args(argv)
        _validate(args)
        output_format = args.format
        row = next(row for row in TABLE if row.name == args.subcommand)
        world = World(
            api_url=args.api_url,
            gh=args.gh,
            registry=args.registry,
            observed_at=args.observed_at,
            secrets=secrets,
            network=_network(args),
        )
        result: dict[str, Any] = {"ok": True, "command": args.subcommand, **row.run(Context(world, args))}
        status = 0
    except UsageError as error:
        result, status = {"ok": False, "command": name, "errors": [error.as_dict()]}, 2
    except ActError as error:
        result, status = {"ok": False, "command": name, "errors": [error.as_dict()], **error.details}, 1
    except KeyboardInterrupt:
        raise
    except Exception as error:  # never a traceback: a bug here must still fail closed
        result, status = (
            {
                "ok": False,
                "command": name,
                "errors": [
                    {
                        "code": "internal-error",
                        "path": "",
                        "message": f"loop.py error ({type(error).__name__}); no write is permitted",
                    }
                ],
            },
            2,
        )
    _emit(result, output_format, secrets)
    return status


def _format_text(argv: list[str]) -> bool:
    return "--format=text" in argv or any(a == "--format" and b == "text" for a, b in zip(argv, argv[1:], strict=False))


def _emit(result: dict[str, Any], output_format: str, secrets: list[str]) -> None:
    """One way out, as for the other two command lines: no form of a known token ever leaves."""
    from evaluator.redact import redact

    if output_format == "text":
        text = text_report(result).encode("ascii", "backslashreplace").decode("ascii")
    else:
        text = json.dumps(result, ensure_ascii=True, separators=(",", ":")) + "\n"
    sys.stdout.write(redact(text, secrets))
    sys.stdout.flush()


def text_report(result: dict[str, Any]) -> str:
    """For people: the approval summary first, then errors, then the rest as key: value lines."""
    lines = []
    if result.get("approval_summary"):
        lines.append(summaries.text(result["approval_summary"]).rstrip("\n"))
    lines.append(f"command: {result.get('command')}  ok: {'yes' if result['ok'] else 'no'}")
    for error in result.get("errors", []):
        lines.append(f"  {error['code']} at {error['path'] or '/'}: {error['message']}")
    for change in result.get("changes", []):
        lines.append(
            f"  changed {change['path'] or '/'}: {json.dumps(change.get('old'))} -> {json.dumps(change.get('new'))}"
        )
    for key, value in result.items():
        if key not in ("ok", "command", "errors", "approval_summary", "changes"):
            lines.append(
                f"{key}: {json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else value}"
            )
    return "\n".join(lines) + "\n"
