"""The collector: observe the world and print one complete evaluator document.

    collect_state.py initial  --checkout DIR --repository O/R --base B --head H --path P... [--command JSON...] [--create-branch] [--commit] [--push]
    collect_state.py prompt   --initial DOC --pr N --automation-id ID --checkout DIR [--registry DIR]
    collect_state.py state    --checkpoint PROMPT_DOC --checkout DIR --wakeup-id HEX [--registry DIR]
    collect_state.py report   --repository O/R --pr N --run-id HEX
    collect_state.py boundary --checkout DIR --repository O/R [--risk-acceptance-sha256 HEX]
    collect_state.py recheck-paths --checkout DIR --document DOC

Standard output carries the document and nothing else; on any failure it stays
empty (nothing that could be mistaken for a snapshot), the error goes to
standard error as one JSON line, and the exit status is 1 (2 for usage).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable
from contextlib import ExitStack
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parent.parent
_HEX32 = re.compile(r"[0-9a-f]{32}")


class UsageError(Exception):
    pass


class CollectionError(Exception):
    def __init__(self, code: str, message: str):
        super().__init__(message)
        self.code, self.message = code, message


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:
        raise UsageError(message)


def _parser() -> _Parser:
    parser = _Parser(prog="collect_state.py", description="Collect a github-codex-pr-loop document.")
    parser.add_argument("--api-url", default="https://api.github.com", help="GitHub REST base URL")
    parser.add_argument("--gh", help="absolute path of the GitHub CLI used as git's credential helper")
    parser.add_argument("--stats", action="store_true", help="print request and rate-limit counts to standard error")
    parser.add_argument("--observed-at", help="override the observation instant (ISO-8601 with offset)")
    commands = parser.add_subparsers(dest="subcommand", required=True, parser_class=_Parser)

    initial = commands.add_parser("initial")
    initial.add_argument("--checkout", required=True)
    initial.add_argument("--repository", required=True)
    initial.add_argument("--base", required=True)
    initial.add_argument("--head", required=True)
    initial.add_argument("--path", action="append", default=[])
    initial.add_argument("--command", action="append", default=[], help="one command as a JSON array of strings, in execution order")
    for flag in ("create-branch", "commit", "push"):
        initial.add_argument(f"--{flag}", action="store_true")

    prompt = commands.add_parser("prompt")
    prompt.add_argument("--initial", required=True)
    prompt.add_argument("--pr", type=int, required=True)
    prompt.add_argument("--automation-id", required=True)
    prompt.add_argument("--checkout", required=True)
    prompt.add_argument("--registry")

    state = commands.add_parser("state")
    state.add_argument("--checkpoint", required=True, help="the prompt document that --prompt accepted")
    state.add_argument("--checkout", required=True)
    state.add_argument("--wakeup-id", required=True)
    state.add_argument("--registry")

    report = commands.add_parser("report")
    report.add_argument("--repository", required=True)
    report.add_argument("--pr", type=int, required=True)
    report.add_argument("--run-id", required=True)

    boundary = commands.add_parser("boundary", help="the execution boundary a remediation plan binds")
    boundary.add_argument("--checkout", required=True)
    boundary.add_argument("--repository", required=True)
    boundary.add_argument("--risk-acceptance-sha256", help="bind an accepted risk record (explicit-risk-acceptance form)")

    recheck = commands.add_parser("recheck-paths")
    recheck.add_argument("--checkout", required=True)
    recheck.add_argument("--document", required=True)
    return parser


def _load(path: str) -> dict[str, Any]:
    from evaluator.canonical import parse_document
    from evaluator.errors import Rejected

    try:
        return parse_document(Path(path).read_bytes())
    except OSError as error:
        raise UsageError(f"cannot read {path!r}: {error.strerror}") from None
    except Rejected as error:
        raise CollectionError("document-invalid", f"{path}: {error}") from None


def _now(args: argparse.Namespace) -> datetime:
    if args.observed_at is None:
        return datetime.now(timezone.utc)
    from evaluator.models.common import is_timestamp, parse_timestamp

    if not is_timestamp(args.observed_at):
        raise UsageError("--observed-at must be ISO-8601 with an explicit offset")
    return parse_timestamp(args.observed_at)


def _github(args: argparse.Namespace, stack: ExitStack, repository: str):
    from observe.github.client import GitHubClient
    from observe.github.token import resolve_token

    # The token comes from GH_TOKEN, GITHUB_TOKEN or the --gh CLI itself, never
    # from whichever gh is first on PATH.
    token = resolve_token(None, api_base_url=args.api_url, gh_path=args.gh)
    args.secrets.append(token)  # redacted from every line printed from now on
    client = GitHubClient(repository, host=args.api_url, token=token, sleep=args.sleep)
    stack.callback(client.close)
    args.github_clients.append(client)
    return client


def _git(args: argparse.Namespace, stack: ExitStack, checkout: str):
    from observe.git.observer import GitObserver

    return stack.enter_context(GitObserver(checkout, gh_path=args.gh))


def _registry(args: argparse.Namespace) -> Path:
    from observe.registry import default_registry_root

    return Path(args.registry) if args.registry else default_registry_root()


def collect_initial(args: argparse.Namespace, stack: ExitStack) -> dict[str, Any]:
    from evaluator import policy

    from observe.git.observer import command_definition_sha256
    from observe.github.pulls import existing_pull_request

    commands = []
    for text in args.command:
        try:
            argv = json.loads(text)
        except ValueError:
            argv = None
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise UsageError("--command takes a JSON array of strings")
        commands.append({"argv": argv, "definition_sha256": command_definition_sha256(argv)})
    git_fields = _git(args, stack, args.checkout).initial_snapshot_fields(args.repository, args.base, args.path)
    client = _github(args, stack, args.repository)
    user_id, open_prs_sha256, existing = existing_pull_request(client, args.repository, args.head)
    return {
        "authenticated_user_id": user_id,
        "base_branch": args.base,
        "commands": commands,
        "commit_required": args.commit,
        "create_branch_required": args.create_branch,
        **{key: git_fields[key] for key in ("base_sha", "current_head_sha", "diff_sha256", "execution_boundary")},
        **existing,
        "head_branch": args.head,
        "heartbeat_rrule": policy.HEARTBEAT_RRULE,
        "host": policy.HOST,
        "open_prs_sha256": open_prs_sha256,
        "paths": git_fields["paths"],
        "path_records": git_fields["path_records"],
        "policy_schema_version": policy.POLICY_SCHEMA_VERSION,
        "push_required": args.push,
        **{key: git_fields[key] for key in ("remote_name", "remote_refs_sha256")},
        "repository": args.repository,
        "worktree_status_sha256": git_fields["worktree_status_sha256"],
    }


def _owned(args: argparse.Namespace, key: str) -> list[dict[str, Any]]:
    from observe.registry import owned_automations

    return [dict(record) for record in owned_automations(_registry(args), key)]


def collect_prompt(args: argparse.Namespace, stack: ExitStack) -> dict[str, Any]:
    from evaluator import policy
    from evaluator.canonical import digest, text_digest
    from evaluator.render import render_prompt, render_review_body

    from observe import collect
    from observe.github.pull_request import observe_pull_request
    from observe.evaluator_digest import evaluator_sha256

    initial = _load(args.initial)
    snapshot, manifest = initial["initial_snapshot"], initial["initial_manifest"]
    repository, run_id = snapshot["repository"], manifest["run_id"]
    git = _git(args, stack, args.checkout)
    github = observe_pull_request(_github(args, stack, repository), repository, args.pr, run_id)
    key = policy.automation_key(policy.HOST, repository, args.pr, run_id)
    state = collect.bootstrap_state(
        initial,
        github,
        _owned(args, key),
        owned_automation_id=args.automation_id,
        evaluator_sha256=evaluator_sha256(PROJECT_ROOT),
        current_remote_name=git.remote_name_for(repository),
        observed_at=_now(args),
    )
    final_head = git.current_head_sha()
    body = render_review_body(manifest["review_request_body_template"], final_head)
    posted = [request for request in github["requests"] if request["round"] == 0]
    if len(posted) != 1 or posted[0]["body_sha256"] != text_digest(body):
        # The receipt names the body that was approved; it must be the one on GitHub.
        raise CollectionError("request-body-mismatch", "the round-0 request on GitHub is not the approved template rendered with the final head")
    receipt = {
        "base_sha": snapshot["base_sha"],
        "final_head_sha": final_head,
        "head_descends_from_initial": git.is_ancestor(snapshot["current_head_sha"], final_head),
        "initial_head_sha": snapshot["current_head_sha"],
        "paths": list(snapshot["paths"]),
        "pr_head_sha": github["pull_request"]["head_sha"],
        "pushed_diff_sha256": git.tree_diff_sha256(snapshot["base_sha"], final_head),
        "remote_head_sha": github["head_tip_sha"],
        "review_request_body": body,
        "review_request_body_sha256": text_digest(body),
        "worktree_clean": git.worktree_clean(),
    }
    boot = {"initial_plan_hash": initial["initial_plan_hash"], "post_write_receipt": receipt, "pr_url": state["pr_url"], "request_deadline": state["request_deadline"], "state": state}
    rendered = render_prompt(key, boot)
    return {"bootstrap_snapshot": boot, "bootstrap_snapshot_sha256": digest(boot), "initial_document": initial, "rendered_prompt": rendered, "rendered_prompt_sha256": text_digest(rendered)}


def collect_wakeup(args: argparse.Namespace, stack: ExitStack) -> dict[str, Any]:
    from evaluator import policy

    from observe import collect
    from observe.github.pull_request import observe_pull_request
    from observe.evaluator_digest import evaluator_sha256

    if not _HEX32.fullmatch(args.wakeup_id):
        raise UsageError("--wakeup-id must be 32 lowercase hex digits")
    boot = _load(args.checkpoint).get("bootstrap_snapshot")
    if not isinstance(boot, dict) or not isinstance(boot.get("state"), dict):
        raise CollectionError("checkpoint-invalid", "the checkpoint must be the prompt document that --prompt accepted")
    checkpoint = boot["state"]
    repository, pr_number, run_id = checkpoint["repository"], checkpoint["pr_number"], checkpoint["run_id"]
    git = _git(args, stack, args.checkout)
    github = observe_pull_request(_github(args, stack, repository), repository, pr_number, run_id)
    key = policy.automation_key(checkpoint["host"], repository, pr_number, run_id)
    return collect.wakeup_state(
        boot,
        github,
        _owned(args, key),
        evaluator_sha256=evaluator_sha256(PROJECT_ROOT),
        current_remote_name=_remote_or_none(git, repository),
        observed_at=_now(args),
        wakeup_id=args.wakeup_id,
    )


def _remote_or_none(git: Any, repository: str) -> str | None:
    """A missing or ambiguous remote is drift for the evaluator to report, not a crash."""
    from observe.git.observer import GitObservationError

    try:
        return git.remote_name_for(repository)
    except GitObservationError as error:
        if error.code in ("git-remote-not-found", "git-remote-ambiguous", "git-remote-url-not-canonical"):
            return None
        raise


def collect_report(args: argparse.Namespace, stack: ExitStack) -> dict[str, Any]:
    from observe import collect
    from observe.github.pull_request import observe_pull_request

    if not _HEX32.fullmatch(args.run_id):
        raise UsageError("--run-id must be 32 lowercase hex digits")
    github = observe_pull_request(_github(args, stack, args.repository), args.repository, args.pr, args.run_id)
    return collect.report_state(github, run_id=args.run_id, observed_at=_now(args))


def collect_boundary(args: argparse.Namespace, stack: ExitStack) -> dict[str, Any]:
    """Observed once, placed twice: as the state's execution_boundary and the plan's execution."""
    return _git(args, stack, args.checkout).execution_boundary(args.repository, risk_acceptance_sha256=args.risk_acceptance_sha256)


def recheck_paths(args: argparse.Namespace, stack: ExitStack) -> dict[str, Any]:
    from observe.git.observer import recheck_path_records

    document = _load(args.document)
    records = _find_path_records(document)
    if records is None:
        raise CollectionError("path-records-missing", "the document holds no path_records to recheck")
    differences = recheck_path_records(str(Path(args.checkout).resolve()), records)
    if differences:
        named = ", ".join(f"{path} ({field})" for path, field in differences)
        raise CollectionError("path-records-changed", f"path records differ from the plan: {named}")
    return {"ok": True, "paths": [record["path"] for record in records]}


def _find_path_records(document: dict[str, Any]) -> list[dict[str, Any]] | None:
    """path_records of an initial document, a snapshot, a manifest or a state holding one."""
    for candidate in (document, document.get("initial_snapshot"), document.get("remediation_manifest")):
        if isinstance(candidate, dict) and isinstance(candidate.get("path_records"), list):
            return candidate["path_records"]
    return None


_COMMANDS = {"initial": collect_initial, "prompt": collect_prompt, "state": collect_wakeup, "report": collect_report, "boundary": collect_boundary, "recheck-paths": recheck_paths}


def _environment_tokens() -> list[str]:
    return [value for value in (os.environ.get("GH_TOKEN"), os.environ.get("GITHUB_TOKEN")) if value]


def _fail(secrets: list[str], code: str, message: str) -> None:
    _print(sys.stderr, json.dumps({"ok": False, "errors": [{"code": code, "path": "", "message": message}]}), secrets)


def _print(stream: Any, line: str, secrets: list[str]) -> None:
    """The one way out: every line either stream carries loses every form of every known token."""
    from evaluator.redact import redact

    stream.write(redact(line, secrets) + "\n")


def main(argv: list[str] | None = None, *, sleep: Callable[[float], None] = time.sleep) -> int:
    """Run one collection; ``sleep`` is the wait between GitHub retries (tests pass their own)."""
    from evaluator.redact import contains_secret

    from observe.git.observer import GitObservationError
    from observe.github.errors import GitHubObservationError

    secrets = _environment_tokens()  # the token resolved for GitHub joins them (_github)
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
        args.sleep, args.github_clients, args.secrets = sleep, [], secrets
        with ExitStack() as stack:
            document = _COMMANDS[args.subcommand](args, stack)
    except UsageError as error:
        _fail(secrets, "usage-error", str(error))
        return 2
    except (CollectionError, GitObservationError, GitHubObservationError) as error:
        _fail(secrets, error.code, error.message)
        return 1
    except KeyboardInterrupt:
        raise
    except Exception as error:  # never a traceback, never a partial document
        _fail(secrets, "collector-internal-error", type(error).__name__)
        return 1
    line = json.dumps(document, ensure_ascii=False)
    if contains_secret(line, secrets):
        # A document that would need redacting is no longer the observation: refuse it whole.
        _fail(secrets, "collector-credential-in-output", "the document would carry the GitHub token; nothing is printed")
        return 1
    _print(sys.stdout, line, secrets)
    if args.stats:
        # After a document only: a failed run's standard error is its one error line.
        for client in args.github_clients:
            _print(sys.stderr, json.dumps({"stats": client.stats}), secrets)
    return 0
