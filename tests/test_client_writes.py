"""The client's writes: sent once, never retried, an uncertain outcome said so (github-observations.md)."""

from __future__ import annotations

import pytest

from observe.github.client import GitHubClient
from observe.github.errors import GitHubObservationError
from simulator.app import Server
from simulator.world import World

TOKEN = "ghp_clientWritesOwnerToken000000000000000"
RESOLVE = "mutation($threadId: ID!) { resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } } }"


@pytest.fixture
def github(tmp_path):
    world = World(tmp_path / "world")
    world.add_token(TOKEN, "loop-owner")
    world.create_repository("octo-org", "gadgets")
    world.commit("octo-org", "gadgets", "fix", {"src/app.py": "print('hello')\n"}, "Fix")
    pull = world.open_pull_request("octo-org", "gadgets", head="fix", title="Fix")
    server = Server(world).start()
    sleeps: list[float] = []
    client = GitHubClient("octo-org/gadgets", host=server.url, token=TOKEN, use_cache=False, sleep=sleeps.append)
    yield world, client, pull["number"], sleeps
    client.close()
    server.stop()
    world.close()


def comments(world, number):
    return world._issue(world.repository("octo-org", "gadgets"), number)


def test_a_write_is_sent_once_and_answers(github):
    world, client, number, _ = github
    answer = client.write("POST", f"/repos/octo-org/gadgets/issues/{number}/comments", {"body": "hello"})
    assert answer["body"] == "hello"
    assert [c["body"] for c in comments(world, number)] == ["hello"]


@pytest.mark.parametrize(
    ("status", "code"),
    [(502, "github-write-uncertain"), (422, "github-write-refused"), (429, "github-write-uncertain")],
)
def test_a_failed_write_is_never_retried(github, status, code):
    world, client, number, sleeps = github
    world.fail("POST", rf"/issues/{number}/comments$", status, times=3)
    with pytest.raises(GitHubObservationError) as failed:
        client.write("POST", f"/repos/octo-org/gadgets/issues/{number}/comments", {"body": "hello"})
    assert failed.value.code == code
    assert sleeps == [] and client.stats["requests"] == 1
    assert comments(world, number) == []


def test_a_lost_answer_is_uncertain_although_the_write_happened(github):
    world, client, number, _ = github
    world.truncate("POST", rf"/issues/{number}/comments$")
    with pytest.raises(GitHubObservationError) as failed:
        client.write("POST", f"/repos/octo-org/gadgets/issues/{number}/comments", {"body": "hello"})
    assert failed.value.code == "github-write-uncertain"
    assert [c["body"] for c in comments(world, number)] == ["hello"]


def test_a_mutation_answering_errors_is_uncertain(github):
    world, client, _, sleeps = github
    world.graphql_errors()
    with pytest.raises(GitHubObservationError) as failed:
        client.graphql_mutation(RESOLVE, {"threadId": "PRRT_missing"})
    assert failed.value.code == "github-write-uncertain" and sleeps == []


def test_only_post_and_patch_are_writes(github):
    _, client, _, _ = github
    with pytest.raises(ValueError):
        client.write("DELETE", "/repos/octo-org/gadgets/issues/comments/1", {})
