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
from typing import NoReturn

from act import flags
from act.command import Command, Context
from act.core import statelock
from act.core.errors import ActError, UsageError
from act.core.jsonedge import Output
from act.core.options import Options
from act.edge.sources import DEFAULT_API_URL, ROUTE_FLAGS, World
from act.text import summary as summaries
from observe.cli import UnknownFlagsFirstParser, add_network_options, network_from
from observe.errors import UsageError as ObserveUsageError
from observe.network import Network

# The table: a new command is a new row (see act/command.py). Only the module
# of the command that runs is imported.
TABLE: list[Command] = [
    Command(
        "next",
        "every mechanical step of the loop, up to the one act that is the agent's or the person's (the usual command)",
        flags.next_step,
        "act.advance:run_next",
    ),
    Command(
        "init",
        "observe the checkout and GitHub, build and validate the initial plan, create the state directory",
        flags.init,
        "act.plans:run_init",
    ),
    Command(
        "plan-remediation",
        "build the remediation plan the evaluator asked for, embed it, re-run --state",
        flags.plan_remediation,
        "act.plans:run_plan_remediation",
    ),
    Command(
        "plan-finalization",
        "build the finalization plan (phase one or two) the evaluator asked for, embed it, re-run --state",
        flags.plan_finalization,
        "act.plans:run_plan_finalization",
    ),
    Command(
        "approve",
        "record the person's approval of the pending plan, only for its exact hash",
        flags.approve,
        "act.plans:run_approve",
    ),
    Command(
        "status",
        "what the state directory holds: pending plan, approval, wakeup, automation; "
        "once the loop has finished, what Codex said since",
        flags.none,
        "act.plans:run_status",
    ),
    Command(
        "list",
        "every loop under the default state root: run, repository, mode, last action, automation stage",
        flags.none,
        "act.loops:run_list",
    ),
    Command(
        "forget",
        "remove a loop's state directory, only when its automation can no longer wake",
        flags.none,
        "act.loops:run_forget",
    ),
    Command(
        "report",
        "report-only, for any pull request: Codex's review state of its head, findings, threads, gates; no write",
        flags.report,
        "act.report:run_report",
    ),
    Command(
        "wakeup",
        "start (or --continue) a wakeup from the automation's prompt: collect, run --state, print the action",
        flags.wakeup,
        "act.wakeup:run_wakeup",
    ),
    Command(
        "record-claim",
        "record that this wakeup posted its claim for the pending plan (then `wakeup --continue`)",
        flags.record_claim,
        "act.wakeup:run_record_claim",
    ),
    Command(
        "record-executed",
        "record that the claimed plan's operations are done (it is not embedded again)",
        flags.record_executed,
        "act.wakeup:run_record_executed",
    ),
    Command(
        "end-wakeup",
        "end the current wakeup (its claims then count as another wakeup's)",
        flags.end_wakeup,
        "act.wakeup:run_end_wakeup",
    ),
    Command(
        "execute",
        "perform the validated plan's next operation(s), each re-checked and idempotent by observation",
        flags.execute,
        "act.execute_cli:run_execute",
    ),
    Command(
        "claim",
        "post the evaluator's claim comment exactly once and record it for this wakeup",
        flags.none,
        "act.execute_cli:run_claim",
    ),
    Command(
        "automation-create",
        "the create payload for the PAUSED inert heartbeat stub named by the loop key",
        flags.automation_create,
        "act.automation:run_create",
    ),
    Command(
        "automation-prompt",
        "collect the bootstrap prompt document, run --prompt, and give the update payload with the rendered prompt",
        flags.none,
        "act.automation:run_prompt",
    ),
    Command(
        "automation-delete",
        "the delete payload, only when the evaluator's action (or a rejected bootstrap) permits it",
        flags.none,
        "act.automation:run_delete",
    ),
    Command(
        "verify-automation",
        "read the registry after an automation_update call and say exactly what to do next",
        flags.verify_automation,
        "act.automation:run_verify",
    ),
]


class _Parser(UnknownFlagsFirstParser):
    def error(self, message: str) -> NoReturn:  # argparse would print and exit itself
        raise UsageError(message)


def _common() -> _Parser:
    common = _Parser(add_help=False, allow_abbrev=False)
    common.add_argument("--state-dir", metavar="DIR", help="the loop's state directory")
    common.add_argument("--run-id", metavar="HEX", help="name the loop by run id (its default state directory)")
    common.add_argument("--api-url", help="GitHub REST base URL (default https://api.github.com)")
    common.add_argument(
        "--gh", metavar="PATH", help="absolute path of the GitHub CLI, git's credential helper (default: gh on PATH)"
    )
    common.add_argument(
        "--registry", metavar="DIR", help="the Codex automation registry (default $CODEX_HOME/automations)"
    )
    common.add_argument(
        "--observed-at", metavar="TS", help="the observation instant (ISO-8601 with offset); default now"
    )
    common.add_argument(
        "--format",
        choices=("json", "text"),
        default="json",
        help="json (default): one JSON line, the contract; text: the same for people, the approval summary first",
    )
    add_network_options(common)
    return common


_EXAMPLE = """\
example (approval-gated; the checkout is on its feature branch, whose upstream remote names the
repository on github.com: the repository, the base and the head are inferred from it):
  loop.py init --checkout ~/src/widgets --path src/app.py --commit --push \\
      --mode approval-gated --title "Fix the greeting" --body-file /tmp/body.md
  # show the printed approval_summary; the person replies with its 64-hex hash
  loop.py next --state-dir DIR --approve HASH   # DIR: the state_dir init printed
  loop.py next --state-dir DIR                  # then at every heartbeat, until it says the loop is over

output: one JSON line {"ok": ..., "command": ..., ...}; a refusal carries "errors"
[{"code", "path", "message"}] (codes: references/errors.md).
exit status: 0 done, 1 refused (no write is permitted), 2 usage or internal error.
Run "loop.py COMMAND --help" for one command's flags; manual: references/hands.md.
"""


def parser() -> _Parser:
    from evaluator.version import VERSION

    top = _Parser(
        prog="loop.py",
        allow_abbrev=False,
        description=(
            "The hands of github-codex-pr-loop: build plans, keep the loop's state, manage its automation "
            "(references/hands.md)."
        ),
        epilog=_EXAMPLE,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    top.add_argument(
        "--version", action="version", version=f"%(prog)s (github-codex-pr-loop) {VERSION}", help="print the version"
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


def _network(options: Options) -> Network:
    """The route to github.com (--https-proxy, --ca-file, else HTTPS_PROXY/SSL_CERT_FILE), validated.

    A bad value is a usage error. A loop's state directory replaces it with the route recorded at
    init (``World.bind``).
    """
    try:
        return network_from(options, os.environ)
    except ObserveUsageError as error:
        raise UsageError(str(error)) from None


def _world(options: Options, secrets: list[str]) -> World:
    from observe.gh import GhSetupError, find_gh, gh_config_dir

    try:
        config_dir = gh_config_dir(os.environ)
    except GhSetupError as error:
        raise ActError(error.code, error.message) from None
    return World(
        api_url=options.api_url or DEFAULT_API_URL,
        gh=find_gh(options.gh),
        registry=options.registry,
        observed_at=options.observed_at,
        secrets=secrets,
        network=_network(options),
        gh_config_dir=config_dir,
        explicit={name: getattr(options, name) for name in ROUTE_FLAGS},
    )


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    # Tokens known from the environment, joined by any a GitHub observation resolves.
    secrets = [value for value in (os.environ.get("GH_TOKEN"), os.environ.get("GITHUB_TOKEN")) if value]
    name = next((token for token in argv if any(token == row.name for row in TABLE)), None)
    output_format = "text" if _format_text(argv) else "json"
    options: Options | None = None
    try:
        args = parser().parse_args(argv)
        _validate(args)
        output_format = args.format
        row = next(row for row in TABLE if row.name == args.subcommand)
        from act.edge import sandbox

        options = Options.parsed(args)
        sandbox.check_command(row.name, options)  # what the command will need, before it starts (cheapest first)
        world = _world(options, secrets)
        try:
            with statelock.command(row.name):  # every state directory it locks, held until it returns
                result: Output = {"ok": True, "command": row.name, **row.runner()(Context(world, options))}
        finally:
            if world.session is not None:
                world.session.close()  # the command's one GitHub client per repository
        status = 0
    except UsageError as error:
        result, status = {"ok": False, "command": name, "errors": [error.as_dict()]}, 2
    except ActError as error:
        from act.text import refusals  # no refusal hands out the pending plan's hash (act/text/refusals.py)

        result = {"ok": False, "command": name, "errors": error.all_errors(), **error.details}
        result, status = refusals.masked(result, refusals.pending_hash(options)), 1
    except KeyboardInterrupt:
        raise
    except OSError as error:  # a file the sandbox or the system refused: say which, never "internal"
        from act.edge import sandbox

        refused = sandbox.os_error(error)
        result, status = {"ok": False, "command": name, "errors": refused.all_errors(), **refused.details}, 1
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


def _emit(result: Output, output_format: str, secrets: list[str]) -> None:
    """One way out, as for the other two command lines: no form of a known token ever leaves."""
    from evaluator.redact import redact

    if output_format == "text":
        text = text_report(result).encode("ascii", "backslashreplace").decode("ascii")
    else:
        text = json.dumps(result, ensure_ascii=True, separators=(",", ":")) + "\n"
    sys.stdout.write(redact(text, secrets))
    sys.stdout.flush()


def text_report(result: Output) -> str:
    """For people: the approval summary first, then errors, then the rest as key: value lines."""
    if result.get("command") == "report" and result["ok"]:
        from act.report import text

        return text(result)
    lines, shown_hash = [], None
    if result.get("approval_summary"):
        lines.append(summaries.text(result["approval_summary"]).rstrip("\n"))
        shown_hash = result["approval_summary"]["plan_hash"]  # printed once, in the summary: not again below
    lines.append(f"command: {result.get('command')}  ok: {'yes' if result['ok'] else 'no'}")
    for error in result.get("errors", []):
        lines.append(f"  {error['code']} at {error['path'] or '/'}: {error['message']}")
    for change in result.get("changes", []):
        lines.append(
            f"  changed {change['path'] or '/'}: {json.dumps(change.get('old'))} -> {json.dumps(change.get('new'))}"
        )
    for key, value in result.items():
        if key not in ("ok", "command", "errors", "approval_summary", "changes") and value != shown_hash:
            lines.append(
                f"{key}: {json.dumps(value, ensure_ascii=False) if isinstance(value, (dict, list)) else value}"
            )
    return "\n".join(lines) + "\n"
