"""The hands' typed options and their command line say the same thing.

``loop.py next`` runs each single command on ``Options`` it builds itself
(act/advance.py), never through the parser; these tests hold that shortcut
to the parser: every flag is a field with the parser's default, and every
command ``next`` shows in ``did`` parses back to exactly the options it ran.
"""

from __future__ import annotations

import argparse
import re
import shlex
from dataclasses import fields, replace

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from act import advance
from act.cli import TABLE, parser
from act.core.errors import UsageError
from act.core.options import Options
from act.core.options import given as required
from tests.helpers import ROOT

COMMANDS = [row.name for row in TABLE]
FIELDS = {field.name: field for field in fields(Options)}


def _subparser(name: str) -> argparse.ArgumentParser:
    top = parser()
    commands = next(a for a in top._actions if isinstance(a, argparse._SubParsersAction))
    return commands.choices[name]


@pytest.mark.parametrize("name", COMMANDS)
def test_every_flag_is_an_option_with_the_parsers_default(name):
    for action in _subparser(name)._actions:
        if action.dest == "help" or isinstance(action, argparse._HelpAction):
            continue
        assert action.dest in FIELDS, f"{name}: {action.option_strings} has no typed option"
        default = FIELDS[action.dest].default
        expected = tuple(action.default) if isinstance(action.default, list) else action.default
        if not action.required:
            assert default == expected, (name, action.dest, default, expected)


def test_an_option_the_parser_does_not_give_is_refused_not_ignored():
    with pytest.raises(TypeError, match="flags without an option"):
        Options.parsed(argparse.Namespace(subcommand="status", surprise=1))


def test_a_required_flag_left_out_is_the_usage_error_naming_it():
    with pytest.raises(UsageError, match="--hash"):
        required(Options(subcommand="approve").hash, "--hash")


# What `next` gives the commands it runs (act/advance.py), each value drawn freely.
_HEX = st.text("0123456789abcdef", min_size=64, max_size=64)
_TEXT = st.text(min_size=1, max_size=40).filter(str.isprintable)  # an id or key as the tool answers it
_NEXT_CALLS = st.one_of(
    st.builds(lambda: ("execute", {})),
    st.builds(lambda n: ("automation-create", {"pr": n}), st.integers(1, 10**6)),
    st.builds(
        lambda i: ("verify-automation", {"automation_id": i}), st.text(min_size=1, max_size=40).filter(str.isprintable)
    ),
    st.builds(lambda k: ("wakeup", {"automation_key": k}), _TEXT),
    st.builds(
        lambda k: ("wakeup", {"automation_key": k, "continue_wakeup": True}),
        st.from_regex(r"[a-z0-9-]{1,40}", fullmatch=True),
    ),
    st.builds(lambda h: ("record-executed", {"plan_hash": h}), _HEX),
    st.builds(lambda: ("end-wakeup", {"reason": "edit-not-in-place"})),
    st.builds(lambda: ("plan-remediation", {"reuse_pending": True})),
    st.builds(lambda h: ("approve", {"hash": h}), _HEX),
)


@settings(deadline=None)  # the parser is built once per example; a loaded machine must not fail it
@given(_NEXT_CALLS)
def test_every_command_next_runs_parses_back_to_the_options_it_ran(call):
    command, options_given = call
    shown = advance._shown(command, options_given)
    words = shlex.split(shown)
    assert words[:2] == ["loop.py", command]
    parsed = Options.parsed(parser().parse_args([*words[1:], "--state-dir", "/tmp/loop"]))
    assert parsed == replace(Options(subcommand=command, state_dir="/tmp/loop"), **options_given)


# --- every command a message names ------------------------------------------------------------------

_NAMED = re.compile(r"`loop\.py ([a-z][a-z-]*)((?: [^`]*)?)`")
_FLAG = re.compile(r"(?<![\w-])(--[a-z][a-z-]*)")


def _named_commands() -> list[tuple[str, str, str]]:
    """(file, command, the rest of the backticked text) for every `loop.py …` in the hands' code and SKILL.md."""
    named = []
    sources = [*sorted((ROOT / "act").rglob("*.py")), ROOT / "SKILL.md", *sorted((ROOT / "references").glob("*.md"))]
    for path in sources:
        for command, rest in _NAMED.findall(path.read_text(encoding="utf-8")):
            named.append((str(path.relative_to(ROOT)), command, rest))
    return named


def test_every_command_a_message_names_exists_with_the_flags_it_names():
    """The advice in refusals and notes is written by hand (the rows are not): it may name only real commands.

    Every backticked `loop.py COMMAND --flag …` in act/, SKILL.md and references/ names a command of the
    command table, and each flag it names is one of that command's (``...`` and placeholders aside).
    """
    named = _named_commands()
    assert len(named) > 50  # the scan finds the messages (a broken pattern would pass vacuously)
    for where, command, rest in named:
        assert command in COMMANDS, f"{where}: `loop.py {command}` is no command"
        flags = {option for action in _subparser(command)._actions for option in action.option_strings}
        for flag in _FLAG.findall(rest):
            assert flag in flags, f"{where}: `loop.py {command}` has no {flag}"
