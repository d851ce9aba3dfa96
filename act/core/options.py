"""One command's options, typed: what every hands' command reads of its invocation.

The command line builds them once, from its parser (act/cli.py,
``Options.parsed``); ``loop.py next`` builds them directly for each command
it runs (act/advance.py), never through the parser. A field is a flag of
act/flags.py under its ``dest``, with the same default (tests/test_cli.py
holds the two equal); a repeated flag is a tuple.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from act.core.errors import UsageError

T = TypeVar("T")


@dataclass(frozen=True)
class Options:
    subcommand: str
    # every command
    state_dir: str | None = None
    run_id: str | None = None
    api_url: str | None = None
    gh: str | None = None
    registry: str | None = None
    observed_at: str | None = None
    https_proxy: str | None = None
    ca_file: str | None = None
    format: str = "json"
    # init
    checkout: str | None = None
    repository: str | None = None
    base: str | None = None
    head: str | None = None
    path: tuple[str, ...] = ()
    command: tuple[str, ...] = ()
    create_branch: bool = False
    commit: bool = False
    push: bool = False
    mode: str | None = None
    title: str | None = None
    title_file: str | None = None
    body: str | None = None
    body_file: str | None = None
    author_name: str | None = None
    author_email: str | None = None
    no_network_preflight: bool = False
    accept_risk: str | None = None
    allow_many_loops: bool = False
    reuse_pr: int | None = None
    # report, automation-create
    pr: int | None = None
    # plan-remediation, plan-finalization
    state: str | None = None
    reuse_pending: bool = False
    no_commands: bool = False
    # approve
    hash: str | None = None
    # wakeup
    prompt_file: str | None = None
    automation_key: str | None = None
    continue_wakeup: bool = False
    # record-claim, record-executed, end-wakeup
    plan_hash: str | None = None
    kind: str | None = None
    comment_id: int | None = None
    reason: str = "ended"
    # execute
    operation: str | None = None
    one: bool = False
    # verify-automation, next
    automation_id: str | None = None
    approve_hash: str | None = None

    @classmethod
    def parsed(cls, args: argparse.Namespace) -> Options:
        """The parser's answer, typed: a flag without a field here is a bug, never ignored."""
        given = vars(args)
        unknown = sorted(set(given) - {field.name for field in fields(cls)})
        if unknown:
            raise TypeError(f"flags without an option: {unknown}")
        typed: dict[str, Any] = {name: tuple(v) if isinstance(v, list) else v for name, v in given.items()}
        return cls(**typed)


def given(value: T | None, flag: str) -> T:
    """A flag the command requires (its parser says so): its value, else the usage error naming it."""
    if value is None:
        raise UsageError(f"the following arguments are required: {flag}")
    return value
