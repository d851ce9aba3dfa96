"""No refusal prints the pending plan's hash: at most its first 8 digits.

An approval is the person naming the full hash the approval summary showed
them; a refusal that printed it would hand an agent a hash to copy. The
properties: any command line ``loop.py`` refuses, run against a loop with a
plan pending, prints no occurrence of that hash (a message, a ``next`` hint,
``did``, a detail such as the evaluator's output); and the masking itself
removes every occurrence from any JSON and changes nothing else.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from act import cli
from act.core import statedir
from act.text import refusals
from simulator.fakegithub import PR_NUMBER
from tests import checkout_world
from tests.helpers import examples
from tests.test_hands_loop import init_args, loop

HEX64 = re.compile(r"[0-9a-f]{64}")


@pytest.fixture
def pending(tmp_path, fake, monkeypatch, capsys):
    """A loop with its initial plan pending approval, and the world it was planned in."""
    world = checkout_world.build(tmp_path, fake, monkeypatch)
    made = loop(capsys, world, *init_args(world, "--mode", "approval-gated", "--reuse-pr", str(PR_NUMBER)))
    return world, made


def run(world, argv: list[str], capsys) -> tuple[int, str]:
    route = ["--api-url", world["fake"].url, "--gh", str(world["gh"]), "--registry", str(world["registry"])]
    code = cli.main([*argv, *route])
    return code, capsys.readouterr().out


def variants(plan_hash: str) -> st.SearchStrategy[str]:
    """The pending hash, and hashes a person might mistype: shortened, re-cased, changed, older, decorated."""
    return st.one_of(
        st.just(plan_hash),
        st.integers(1, 63).map(lambda n: plan_hash[:n]),
        st.just(plan_hash.upper()),
        st.integers(0, 63).map(lambda i: plan_hash[:i] + ("0" if plan_hash[i] != "0" else "1") + plan_hash[i + 1 :]),
        st.sampled_from([f" {plan_hash}", f"{plan_hash}.", f"`{plan_hash}`", "0" * 64]),
    )


def command_lines(plan_hash: str) -> st.SearchStrategy[list[str]]:
    named = variants(plan_hash)
    return st.one_of(
        named.map(lambda h: ["next", "--approve", h]),
        named.map(lambda h: ["approve", "--hash", h]),
        named.map(lambda h: ["record-claim", "--plan-hash", h, "--kind", "remediation"]),
        named.map(lambda h: ["record-executed", "--plan-hash", h]),
        st.sampled_from(
            [
                ["execute"],  # approval-missing: the case
                ["execute", "--operation", "push"],
                ["next"],
                ["claim"],
                ["plan-remediation", "--path", "src/app.py"],
                ["plan-finalization"],
                ["automation-prompt"],
                ["automation-delete"],
                ["verify-automation"],
                ["wakeup", "--automation-key", "k"],
                ["end-wakeup"],
            ]
        ),
    )


def test_approval_missing_names_the_plan_by_its_first_8_digits(pending, capsys):
    world, made = pending
    plan_hash = made["initial_plan_hash"]
    code, out = run(world, ["execute", "--state-dir", made["state_dir"]], capsys)
    (error,) = json.loads(out)["errors"]
    assert code == 1 and error["code"] == "approval-missing"
    assert plan_hash not in out and plan_hash[:8] in error["message"]


@settings(max_examples=examples(3), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_no_refusal_prints_the_pending_hash(pending, capsys, data):
    world, made = pending
    plan_hash = made["initial_plan_hash"]
    argv = data.draw(command_lines(plan_hash))
    where = data.draw(st.sampled_from([["--state-dir", made["state_dir"]], ["--run-id", made["run_id"]]]))
    text = data.draw(st.sampled_from([[], ["--format", "text"]]))
    code, out = run(world, [argv[0], *where, *argv[1:], *text], capsys)
    if code != 0:
        assert plan_hash not in out, (argv, out)
    pending_now = statedir.StateDir(Path(made["state_dir"])).read(statedir.PENDING)
    assert pending_now["plan_hash"] == plan_hash  # nothing here builds another plan: the hash stayed the one to hide


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4),
    max_leaves=12,
)


def planted(plan_hash: str) -> st.SearchStrategy:
    """JSON with the hash planted in strings and keys, alone or inside other text."""
    holding = st.tuples(st.text(max_size=8), st.text(max_size=8)).map(lambda t: t[0] + plan_hash + t[1])
    return st.recursive(
        JSON | holding,
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10) | holding, inner, max_size=4),
        max_leaves=12,
    )


@settings(max_examples=examples(5))
@given(plan_hash=st.text("0123456789abcdef", min_size=64, max_size=64), data=st.data())
def test_masking_removes_every_occurrence_and_nothing_else(plan_hash, data):
    value = data.draw(planted(plan_hash))
    shown = json.dumps(refusals.masked(value, plan_hash))
    assert plan_hash not in shown
    assert refusals.masked(value, None) is value
    restored = shown.replace(refusals.shown(plan_hash), plan_hash)
    assert json.loads(restored) == value or plan_hash[:8] + "..." in json.dumps(value)
