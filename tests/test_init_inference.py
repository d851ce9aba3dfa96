"""``loop.py init`` without --repository, --base or --head: taken from a real checkout, never guessed.

The checkout (tests/checkout_world.py) is on ``feature/loop`` with ``origin``
at https://github.com/octo-org/widgets.git; the fake GitHub has PR #7 open on
that branch. What is inferred is bound by the plan like a given value, and
the approval summary says which values were inferred.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from act.core.errors import ActError, UsageError
from act.edge import inference, sources
from simulator.fakegithub import PR_NUMBER
from tests import checkout_world
from tests.checkout_world import OFFLINE, REPOSITORY, git
from tests.test_hands_loop import loop


@pytest.fixture
def world(tmp_path, fake, monkeypatch):
    made = checkout_world.build(tmp_path, fake, monkeypatch)
    # What `git clone` records: the remote's default branch.
    git(made["repo"], "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/main")
    return made


def bare_init(world, *extra: str) -> list[str]:
    """init naming only the checkout, the change and the mode: the repository, base and head are the checkout's."""
    return [
        "init",
        "--checkout",
        str(world["repo"]),
        "--path",
        "src/app.py",
        "--commit",
        "--push",
        OFFLINE,
        "--mode",
        "approval-gated",
        "--reuse-pr",
        str(PR_NUMBER),
        *extra,
    ]


def test_init_infers_the_repository_base_and_head_and_the_summary_says_so(capsys, world):
    inferred = loop(capsys, world, *bare_init(world))
    summary = inferred["approval_summary"]
    assert (summary["repository"], summary["base_branch"], summary["head_branch"]) == (
        REPOSITORY,
        "main",
        "feature/loop",
    )
    assert summary["inferred_from_checkout"] == {
        "head_branch": "feature/loop",
        "repository": REPOSITORY,
        "base_branch": "main",
    }
    assert "inferred from the checkout" in summary["coverage"]["inferred_from_checkout"]["informational"]
    document = json.loads((Path(inferred["state_dir"]) / "initial.json").read_text(encoding="utf-8"))
    snapshot = document["initial_snapshot"]
    assert (snapshot["repository"], snapshot["base_branch"], snapshot["head_branch"]) == (
        REPOSITORY,
        "main",
        "feature/loop",
    )
    # The same plan as with every flag given: inference changes what is typed, not what is bound.
    given = loop(
        capsys,
        world,
        *bare_init(world, "--repository", REPOSITORY, "--base", "main", "--head", "feature/loop"),
    )
    assert "inferred_from_checkout" not in given["approval_summary"]
    given_document = json.loads((Path(given["state_dir"]) / "initial.json").read_text(encoding="utf-8"))
    assert given_document["initial_snapshot"] == snapshot
    text = inferred_text(capsys, world)
    assert "inferred from checkout (informational): head_branch=feature/loop" in text


def inferred_text(capsys, world) -> str:
    from act import cli

    code = cli.main(
        [*bare_init(world), "--format", "text", "--api-url", world["fake"].url, "--gh", str(world["gh"])]
        + ["--registry", str(world["registry"])]
    )
    out = capsys.readouterr().out
    assert code == 0, out
    return out


def test_only_what_is_left_out_is_inferred(capsys, world):
    made = loop(capsys, world, *bare_init(world, "--base", "main"))
    assert made["approval_summary"]["inferred_from_checkout"] == {
        "head_branch": "feature/loop",
        "repository": REPOSITORY,
    }


def test_a_checkout_without_the_remotes_default_branch_names_the_fix(capsys, world):
    git(world["repo"], "symbolic-ref", "--delete", "refs/remotes/origin/HEAD")
    refused = loop(capsys, world, *bare_init(world), status=1)
    (error,) = refused["errors"]
    assert (error["code"], error["path"]) == ("base-not-inferred", "/base_branch")
    assert "git remote set-head origin --auto" in error["message"] and "--base" in error["message"]
    assert not (world["tmp"] / "state" / "github-codex-pr-loop").exists()  # nothing was created


def test_a_detached_head_is_no_head_branch(capsys, world):
    git(world["repo"], "checkout", "-q", "--detach")
    refused = loop(capsys, world, *bare_init(world), status=1)
    assert (refused["errors"][0]["code"], refused["errors"][0]["path"]) == ("head-not-inferred", "/head_branch")


@pytest.mark.parametrize(
    "flag, value, code, pointer",
    [
        ("--path", "../x", "invalid-path", "/paths/0"),
        ("--path", ".gitattributes", "invalid-path", "/paths/0"),
        ("--head", "bad..name", "invalid-branch-name", "/head_branch"),
    ],
)
def test_a_value_no_plan_can_hold_is_refused_before_the_plan_is_observed(capsys, world, flag, value, code, pointer):
    refused = loop(capsys, world, *bare_init(world, flag, value), status=1)
    (error,) = refused["errors"]
    assert (error["code"], error["path"]) == (code, pointer)
    assert f"give another {flag}" in error["message"]
    assert not (world["tmp"] / "state" / "github-codex-pr-loop").exists()  # nothing was created


def test_create_branch_needs_the_new_branch_named(capsys, world):
    refused = loop(capsys, world, *bare_init(world, "--create-branch"), status=2)
    assert refused["errors"][0]["code"] == "usage-error" and "--head" in refused["errors"][0]["message"]


def fill(world, **given) -> tuple[dict, dict]:
    named = inference.Given(**{"repository": None, "base_branch": None, "head_branch": None, **given})
    branches, found = inference.fill(sources.World(gh=str(world["gh"])), str(world["repo"]), named, create_branch=False)
    return branches._asdict(), found


def test_the_head_branchs_upstream_remote_wins_over_origin(world):
    repo = world["repo"]
    git(repo, "remote", "add", "fork", "git@github.com:someone/widgets-fork.git")
    git(repo, "update-ref", "refs/remotes/fork/trunk", world["base"])
    git(repo, "symbolic-ref", "refs/remotes/fork/HEAD", "refs/remotes/fork/trunk")
    assert fill(world)[1] == {"head_branch": "feature/loop", "repository": REPOSITORY, "base_branch": "main"}
    git(repo, "config", "branch.feature/loop.remote", "fork")
    assert fill(world)[1] == {
        "head_branch": "feature/loop",
        "repository": "someone/widgets-fork",
        "base_branch": "trunk",
    }


def test_several_remotes_and_none_chosen_is_refused_not_guessed(world):
    repo = world["repo"]
    git(repo, "remote", "rename", "origin", "upstream")
    git(repo, "remote", "add", "fork", "https://github.com/someone/widgets.git")
    with pytest.raises(ActError) as refused:
        fill(world)
    assert refused.value.code == "repository-not-inferred" and refused.value.path == "/repository"
    assert "fork, upstream" in refused.value.message and "--repository" in refused.value.message
    # One remote alone is no choice: it is the repository's.
    git(repo, "remote", "remove", "fork")
    git(repo, "symbolic-ref", "refs/remotes/upstream/HEAD", "refs/remotes/upstream/main")
    assert fill(world)[1]["repository"] == REPOSITORY


def test_a_remote_that_names_no_github_repository_is_refused(world):
    git(world["repo"], "remote", "set-url", "origin", "https://gitlab.example/octo-org/widgets.git")
    with pytest.raises(ActError) as refused:
        fill(world)
    assert refused.value.code == "repository-not-inferred" and "names no repository on github.com" in str(refused.value)


def test_a_given_repository_takes_the_base_from_the_remote_pointing_at_it(world):
    intent, found = fill(world, repository=REPOSITORY, head_branch="feature/loop")
    assert found == {"base_branch": "main"} and intent["base_branch"] == "main"
    with pytest.raises(ActError) as refused:
        fill(world, repository="someone/elsewhere", head_branch="feature/loop")
    assert refused.value.code == "base-not-inferred" and "no remote" in refused.value.message


def test_nothing_is_observed_when_every_flag_is_given(world):
    # A checkout path that is no checkout: fill never looks at it when nothing is missing.
    given = inference.Given(repository=REPOSITORY, base_branch="main", head_branch="x")
    assert inference.fill(sources.World(), "/nonexistent", given, create_branch=True) == (
        inference.Branches(REPOSITORY, "main", "x"),
        {},
    )
    with pytest.raises(UsageError):
        inference.fill(sources.World(), "/nonexistent", given._replace(head_branch=None), create_branch=True)


def test_init_refuses_a_fifth_live_loop_unless_the_person_allows_it(capsys, world):
    from evaluator.policy import MAX_LIVE_LOOPS

    def started(*extra: str) -> dict:
        return loop(capsys, world, *bare_init(world, "--mode", "autonomous", *extra))

    never_scheduled = started()  # no automation: it can never wake, so it does not count
    live = []
    for _ in range(MAX_LIVE_LOOPS):
        made = started()
        assert "warnings" not in made
        loop(capsys, world, "automation-create", "--state-dir", made["state_dir"])  # may now wake
        live.append(made["state_dir"])
    refused = loop(capsys, world, *bare_init(world, "--mode", "autonomous"), status=1)
    (error,) = refused["errors"]
    assert (error["code"], error["path"]) == ("too-many-live-loops", "/loops")
    assert sorted(entry["state_dir"] for entry in refused["live"]) == sorted(live)
    assert never_scheduled["state_dir"] not in error["message"] and all(d in error["message"] for d in live)
    assert "--allow-many-loops" in error["message"]
    listed = loop(capsys, world, "list")["loops"]
    assert len(listed) == MAX_LIVE_LOOPS + 1  # the refusal made no state directory
    allowed = started("--allow-many-loops")
    assert len(allowed["warnings"]) == 1 and "--allow-many-loops" in allowed["warnings"][0]
    # A loop whose automation is verified deleted cannot wake: room again.
    from act.core import statedir

    directory = statedir.StateDir(Path(live[0]))
    automation = directory.read(statedir.AUTOMATION)
    directory.write(statedir.AUTOMATION, {**automation, "stage": "deleted"})
    assert "warnings" not in started()


def test_a_fresh_clone_from_the_simulated_github_needs_only_the_new_branchs_name(tmp_path, monkeypatch, capsys):
    """`git clone` over https from the simulator records origin's default branch: init infers the rest."""
    from tests import executor_stack

    stack = executor_stack.start(tmp_path, monkeypatch)
    try:
        given = executor_stack.init_args(stack)
        for flag in ("--repository", "--base"):  # left out: the clone knows them
            index = given.index(flag)
            del given[index : index + 2]
        made = stack.loop(capsys, *given)
        summary = made["approval_summary"]
        assert summary["inferred_from_checkout"] == {"repository": executor_stack.REPOSITORY, "base_branch": "main"}
        assert (summary["repository"], summary["base_branch"], summary["head_branch"]) == (
            executor_stack.REPOSITORY,
            "main",
            executor_stack.HEAD_BRANCH,
        )
        assert summary["base_sha"] == stack.remote_tip("main")
    finally:
        stack.stop()
