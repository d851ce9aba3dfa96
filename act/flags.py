"""Each ``scripts/loop.py`` subcommand's own options (the flags every command shares: act/cli.py).

Kept apart from the commands' code, which is imported only for the command
that runs: building the parser (``--help`` included) needs argparse and the
policy's names, nothing else. Commands: references/hands.md.
"""

from __future__ import annotations

import argparse

from evaluator import policy


def none(parser: argparse.ArgumentParser) -> None:
    """A command with only the shared flags."""


def report(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--repository", required=True, metavar="OWNER/REPO", help="the GitHub repository of the pull request"
    )
    parser.add_argument("--pr", required=True, type=int, metavar="N", help="the pull request number")


def _observing(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--path", action="append", default=[], metavar="P", help="a repository-relative path the change edits (repeat)"
    )
    parser.add_argument(
        "--command",
        action="append",
        default=[],
        metavar="JSON",
        help="one validation command as a JSON array of strings, argv[0] absolute (repeat, in order)",
    )


def init(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--checkout", required=True, metavar="DIR", help="the local checkout holding the change")
    parser.add_argument(
        "--repository",
        metavar="OWNER/REPO",
        help="the pull request's repository on github.com (default: the one the remote of the head branch's "
        "upstream names, else origin's)",
    )
    parser.add_argument(
        "--base",
        metavar="BRANCH",
        help="the branch the pull request merges into (default: that remote's default branch, its "
        "refs/remotes/REMOTE/HEAD)",
    )
    parser.add_argument(
        "--head",
        metavar="BRANCH",
        help="the pull request's branch (default: the checkout's current branch; required with --create-branch)",
    )
    _observing(parser)
    for flag in ("create-branch", "commit", "push"):
        parser.add_argument(f"--{flag}", action="store_true", help=f"the plan must {flag.replace('-', ' ')}")
    parser.add_argument(
        "--mode",
        required=True,
        choices=policy.WRITE_MODES,
        help="approval-gated: the person approves every plan by its hash; autonomous: validated plans run",
    )
    parser.add_argument("--title", help="the new PR's title (one line)")
    parser.add_argument("--title-file", metavar="PATH", help="the new PR's title, read exactly from a UTF-8 file")
    parser.add_argument("--body", help="the new PR's body")
    parser.add_argument("--body-file", metavar="PATH", help="the new PR's body, read exactly from a UTF-8 file")
    parser.add_argument(
        "--author-name", metavar="NAME", help="the commits' author and committer name (default: git's user.name)"
    )
    parser.add_argument(
        "--author-email", metavar="EMAIL", help="the commits' author and committer e-mail (default: git's user.email)"
    )
    parser.add_argument(
        "--no-network-preflight",
        action="store_true",
        help="plan offline: skip the gh login and git ls-remote checks (execute runs them before its first write)",
    )
    parser.add_argument(
        "--accept-risk",
        metavar="G,...",
        help="only on the person's word: the guarantees they accept the plan runs without, where this machine "
        "cannot give them (exactly those init names when it refuses; references/prerequisites.md)",
    )
    parser.add_argument(
        "--allow-many-loops",
        action="store_true",
        help="only on the person's word: start this loop although four loops of this machine can still wake "
        "(`loop.py list`)",
    )
    parser.add_argument(
        "--reuse-pr",
        type=int,
        metavar="N",
        help="the open PR on the head branch to reuse (its title and body stay as they are)",
    )


def _plan(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state", metavar="PATH", help="the collected state to plan from (default: the state directory's state.json)"
    )


def plan_remediation(parser: argparse.ArgumentParser) -> None:
    _plan(parser)
    _observing(parser)
    parser.add_argument(
        "--reuse-pending",
        action="store_true",
        help="rebuild with the pending plan's paths and commands (after the person approved it)",
    )
    parser.add_argument(
        "--no-commands",
        action="store_true",
        help="plan no validation command (by default the loop's own, from init, carry over; --command replaces them)",
    )


def plan_finalization(parser: argparse.ArgumentParser) -> None:
    _plan(parser)


def approve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--hash", required=True, metavar="HEX", help="the 64-hex hash exactly as the person wrote it")


def wakeup(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--prompt-file", metavar="PATH", help="the automation's prompt, exactly (- for standard input)")
    parser.add_argument(
        "--automation-key", metavar="KEY", help="read the prompt of the owned automation named by this loop key"
    )
    parser.add_argument(
        "--continue",
        dest="continue_wakeup",
        action="store_true",
        help="re-collect within the current wakeup (after a claim), under the same wakeup id",
    )


def record_claim(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plan-hash", required=True, metavar="HEX", help="the plan the posted claim names (the pending plan)"
    )
    parser.add_argument(
        "--kind",
        required=True,
        choices=("remediation", "finalization", "cleanup"),
        help="the claim's kind, as in its marker",
    )
    parser.add_argument("--comment-id", type=int, metavar="N", help="the posted claim comment's id")


def record_executed(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--plan-hash", required=True, metavar="HEX", help="the claimed plan whose operations are done")


def end_wakeup(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--reason", default="ended", help="why the wakeup ends (recorded)")


def execute(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--operation", metavar="NAME", help="refuse unless NAME is the plan's next operation")
    parser.add_argument("--one", action="store_true", help="perform only the next operation")


def automation_create(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--pr", type=int, metavar="N", help="the pull request number (a reused PR's is known already)")


def verify_automation(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--id", dest="automation_id", metavar="ID", help="the automationId the create call answered (first verify only)"
    )


def next_step(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--automation-key", metavar="KEY", help="the loop key (default: the one this state directory recorded)"
    )
    parser.add_argument(
        "--id", dest="automation_id", metavar="ID", help="the automationId automation_update answered for the create"
    )
    parser.add_argument(
        "--approve",
        dest="approve_hash",
        metavar="HEX",
        help="the person's reply: the pending plan's 64-hex hash exactly as they wrote it, recorded first "
        "(as `loop.py approve --hash` records it)",
    )
