"""The hands' GitHub writes (act/edge/ghops.py): sent once, never retried, an uncertain outcome said so."""

from __future__ import annotations

import pytest

from act.core.errors import ActError
from act.edge.ghops import GitHubWriter
from observe.github.client import READ_OPERATIONS, GitHubClient
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
    yield world, GitHubWriter(client, "octo-org/gadgets"), pull["number"], sleeps
    client.close()
    server.stop()
    world.close()


def comments(world, number):
    return world._issue(world.repository("octo-org", "gadgets"), number)


def test_a_write_is_sent_once_and_answers(github):
    world, client, number, _ = github
    answer = client.write("issues.create_comment", issue_number=number, body="hello")
    assert answer["body"] == "hello"
    assert [c["body"] for c in comments(world, number)] == ["hello"]


@pytest.mark.parametrize(
    ("status", "code"),
    [(502, "github-write-uncertain"), (422, "github-write-refused"), (429, "github-write-uncertain")],
)
def test_a_failed_write_is_never_retried(github, status, code):
    world, client, number, sleeps = github
    world.fail("POST", rf"/issues/{number}/comments$", status, times=3)
    with pytest.raises(ActError) as failed:
        client.write("issues.create_comment", issue_number=number, body="hello")
    assert failed.value.code == code
    assert sleeps == [] and client.channel.sent == 1
    assert comments(world, number) == []


def test_a_lost_answer_is_uncertain_although_the_write_happened(github):
    world, client, number, _ = github
    world.truncate("POST", rf"/issues/{number}/comments$")
    with pytest.raises(ActError) as failed:
        client.write("issues.create_comment", issue_number=number, body="hello")
    assert failed.value.code == "github-write-uncertain"
    assert [c["body"] for c in comments(world, number)] == ["hello"]


def test_a_mutation_answering_errors_is_uncertain(github):
    world, client, _, sleeps = github
    world.graphql_errors()
    with pytest.raises(ActError) as failed:
        client.graphql_mutation(RESOLVE, {"threadId": "PRRT_missing"})
    assert failed.value.code == "github-write-uncertain" and sleeps == []


def test_the_writer_holds_only_its_write_operations_and_the_observer_none(github):
    world, client, number, _ = github
    with pytest.raises(ValueError):
        client.write("issues.delete_comment", comment_id=1)
    assert {op.verb for op in client.writes.ops} == {"POST"}
    assert {op.verb for op in client.client.api.ops} == {"GET"}
    assert len(client.client.api.ops) == len(READ_OPERATIONS)
    assert not hasattr(client.client, "write") and not hasattr(client.client, "graphql_mutation")
    assert comments(world, number) == []


def test_a_write_is_ghapis_operation_with_its_own_parameters(github):
    """ghapi's operation table, not a URL we build, decides the route and refuses a parameter it does not define."""
    world, client, number, _ = github
    with pytest.raises(TypeError, match="unexpected keyword"):
        client.write("issues.create_comment", issue_number=number, body="hello", bodie="typo")
    client.write("issues.create_comment", issue_number=number, body="hello")
    assert [entry for entry in world.log if entry[0] == "POST"] == [
        ("POST", f"/repos/octo-org/gadgets/issues/{number}/comments", 201)
    ]


def test_a_write_whose_connection_never_opened_is_attempted_once(monkeypatch):
    """ghapi's transport retries a failed connection (twice by default, with its own sleep); ours is off."""
    import socket

    import httpx2

    with socket.socket() as probe:  # a loopback port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    attempts: list[str] = []
    handle_request = httpx2.HTTPTransport.handle_request

    def counted(transport, request):
        attempts.append(request.url.path)
        return handle_request(transport, request)

    monkeypatch.setattr(httpx2.HTTPTransport, "handle_request", counted)
    client = GitHubClient("octo-org/gadgets", host=f"http://127.0.0.1:{port}", token=TOKEN, use_cache=False)
    try:
        with pytest.raises(ActError) as failed:
            GitHubWriter(client, "octo-org/gadgets").write("issues.create_comment", issue_number=7, body="hello")
    finally:
        client.close()
    assert failed.value.code == "github-write-failed"
    assert attempts == ["/repos/octo-org/gadgets/issues/7/comments"]


@pytest.mark.parametrize("hostile_id", ["1/../../../issues/1", 0, True, None])
def test_a_reply_goes_only_to_a_root_comment_with_an_integer_id(github, hostile_id):
    # The root comment's id becomes part of the reply's URL: an answer whose id is
    # no positive integer could address another resource on the same host.
    world, client, number, _ = github
    thread = world.add_review_thread("octo-org", "gadgets", number, "chatgpt-codex-connector[bot]", "**P2** finding")
    root = thread["comments"][0]["rest"]
    root["id"] = hostile_id
    with pytest.raises(ActError) as refused:
        client.reply_once(number, 1, root["node_id"], "fixed <!-- marker -->", "<!-- marker -->")
    assert refused.value.code == "thread-root-not-found"
    assert client.channel.sent == 1  # the one listing of review comments; no write was sent
    assert [c["body"] for c in world.repository("octo-org", "gadgets").review_comments[number]] == ["**P2** finding"]
