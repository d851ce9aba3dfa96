"""Command-line conventions every script keeps: ``--version``, help text on every flag, a worked example."""

from __future__ import annotations

import argparse
import importlib.util
import shlex
import subprocess
import sys
import tomllib
from collections.abc import Iterator

import pytest

from act import cli as loop_cli
from evaluator import cli as evaluator_cli
from evaluator.version import VERSION
from observe import cli as collector_cli
from tests.helpers import ROOT

SCRIPTS = ["scripts/loop.py", "scripts/evaluate_state.py", "scripts/collect_state.py", "install.py"]


def _installer():
    spec = importlib.util.spec_from_file_location("installer_under_test", ROOT / "install.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_script_prints_the_skills_one_version(script):
    completed = subprocess.run(
        [sys.executable, str(ROOT / script), "--version"], capture_output=True, text=True, timeout=60, check=False
    )
    name = script.rpartition("/")[2]
    assert (completed.returncode, completed.stdout, completed.stderr) == (
        0,
        f"{name} (github-codex-pr-loop) {VERSION}\n",
        "",
    )


def test_the_version_is_written_once():
    """pyproject.toml and install.py read evaluator/version.py; neither writes a version of its own."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "evaluator.version.VERSION"}
    assert _installer().skill_version() == VERSION
    assert VERSION.count(".") == 2 and all(part.isdigit() for part in VERSION.split("."))


def _parsers() -> list[tuple[str, argparse.ArgumentParser]]:
    return [
        ("loop.py", loop_cli.parser()),
        ("evaluate_state.py", evaluator_cli._parser()),
        ("collect_state.py", collector_cli._parser()),
        ("install.py", _installer()._parser()),
    ]


def _actions(name: str, parser: argparse.ArgumentParser) -> Iterator[tuple[str, argparse.Action]]:
    """Every flag and positional of ``parser`` and of each of its subcommands, as ``(where, action)``."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for choice in action._choices_actions:  # the line each subcommand has in its parent's help
                yield f"{name} (subcommand {choice.dest})", choice
            for command, sub in action.choices.items():
                yield from _actions(f"{name} {command}", sub)
        else:
            yield name, action


def test_every_flag_of_every_command_has_help_text():
    seen, missing = 0, []
    for name, parser in _parsers():
        for where, action in _actions(name, parser):
            seen += 1
            if not action.help or action.help == argparse.SUPPRESS or not action.help.strip():
                missing.append(f"{where}: {action.option_strings or action.dest}")
    assert missing == []
    assert seen > 150  # every command of every script was walked, not only the top parsers


def _subcommand(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    (commands,) = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    return commands.choices[name]


def test_init_names_its_defaults_for_the_repository_base_and_head():
    init = _subcommand(loop_cli.parser(), "init")
    flags = {option: action for action in init._actions for option in action.option_strings}
    for flag in ("--repository", "--base", "--head"):
        assert flags[flag].required is False and "default" in (flags[flag].help or "")
    assert flags["--checkout"].required is True and flags["--mode"].required is True


def test_loop_help_shows_a_worked_example_whose_commands_parse():
    completed = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "loop.py"), "--help"], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 0
    example = completed.stdout.partition("\nexample")[2]
    assert "loop.py init --checkout" in example and "loop.py next --state-dir DIR --approve HASH" in example
    # Each example command is one the parser accepts as written (continuation lines joined, comments dropped).
    lines = example.replace("\\\n", " ").splitlines()
    typed = [shlex.split(line.split("#")[0]) for line in lines if line.strip().startswith("loop.py ")]
    assert [words[1] for words in typed] == ["init", "next", "next"]
    for words in typed:
        parsed = loop_cli.parser().parse_args(words[1:])
        assert parsed.subcommand == words[1]
