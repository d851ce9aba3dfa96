"""The simulated GitHub enforces each token's permissions on reads and writes as GitHub does.

Fine-grained tokens (a permission map) are refused with 403, GitHub's message
and ``X-Accepted-GitHub-Permissions``; classic tokens (scopes) carry
``X-OAuth-Scopes`` on every answer and are refused with 404 where their
scopes do not reach; drafts are refused in a private repository of a Free or
Pro account. Nothing a refusal answers changes the World.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.world import World
from tests.simulation import NAME, OWNER, Api, make_world

REPO = f"/repos/{OWNER}/{NAME}"
FINE_GRAINED = "github_pat_simulatorNoPullRequestsWrite000000"
CLASSIC = "ghp_simulatorClassicPublicRepoOnly0000000"
NO_PULL_WRITE = {"contents": "write", "issues": "write", "metadata": "read", "pull_requests": "read"}


@pytest.fixture
def world(tmp_path: Path):
    created = make_world(tmp_path)
    created.commit(OWNER, NAME, "fix", {"src/app.py": "print('hello')\n"}, "Fix")
    yield created
    created.close()


def test_a_fine_grained_refusal_names_the_permission_in_the_header(world: World):
    world.add_token(FINE_GRAINED, "loop-owner", permissions=NO_PULL_WRITE)
    api = Api(world, FINE_GRAINED)
    status, body, headers = api("POST", f"{REPO}/pulls", {"head": "fix", "base": "main", "title": "Fix"})
    assert status == 403
    assert body["message"] == "Resource not accessible by personal access token"
    assert body["documentation_url"].startswith("https://docs.github.com/")
    assert headers["X-Accepted-GitHub-Permissions"] == "pull_requests=write"
    assert world.repository(OWNER, NAME).pulls == {}
    # The permission is checked before the body: an empty one is refused the same way (the preflight's probe).
    assert api("POST", f"{REPO}/pulls", {})[2]["X-Accepted-GitHub-Permissions"] == "pull_requests=write"
    # Either of two permissions would do: both sets are named.
    world.token_permissions[FINE_GRAINED].pop("issues")
    number = world.open_pull_request(OWNER, NAME, head="fix", title="Fix")["number"]
    status, _, headers = api("POST", f"{REPO}/issues/{number}/comments", {"body": "hi"})
    assert (status, headers["X-Accepted-GitHub-Permissions"]) == (403, "issues=write; pull_requests=write")


def test_a_permitted_probe_with_an_empty_body_creates_nothing(world: World):
    world.add_token(FINE_GRAINED, "loop-owner", permissions={**NO_PULL_WRITE, "pull_requests": "write"})
    api = Api(world, FINE_GRAINED)
    assert api("POST", f"{REPO}/pulls", {})[0] == 422
    assert api("POST", f"{REPO}/git/refs", {})[0] == 422
    assert world.repository(OWNER, NAME).pulls == {}


def test_reads_of_a_private_repository_need_the_read_permission(world: World):
    world.add_token(FINE_GRAINED, "loop-owner", permissions={"metadata": "read"})
    api = Api(world, FINE_GRAINED)
    assert api("GET", f"{REPO}/pulls")[0] == 200  # a public repository's pulls need no permission
    world.repository(OWNER, NAME).private = True
    status, _, headers = api("GET", f"{REPO}/pulls")
    assert (status, headers["X-Accepted-GitHub-Permissions"]) == (403, "pull_requests=read")
    assert api("GET", REPO)[0] == 200


def test_a_classic_token_names_its_scopes_and_is_hidden_what_they_do_not_reach(world: World):
    world.add_token(CLASSIC, "loop-owner", scopes=["public_repo", "read:org"])
    api = Api(world, CLASSIC)
    status, body, headers = api("GET", REPO)
    assert (status, headers["X-OAuth-Scopes"]) == (200, "public_repo, read:org")
    assert body["permissions"]["push"] is True
    assert api("POST", f"{REPO}/pulls", {"head": "fix", "base": "main", "title": "Fix"})[0] == 201
    world.repository(OWNER, NAME).private = True
    status, _, headers = api("GET", REPO)
    assert (status, headers["X-Accepted-OAuth-Scopes"]) == (404, "repo")


def test_the_repository_reports_the_accounts_role(world: World):
    repository = world.repository(OWNER, NAME)
    repository.roles["loop-owner"] = "read"
    permissions = Api(world)("GET", REPO)[1]["permissions"]
    assert permissions == {"pull": True, "triage": False, "push": False, "maintain": False, "admin": False}


@pytest.mark.parametrize(
    ("private", "plan", "refused"),
    [
        (True, "free", True),
        (True, "pro", True),
        (True, "team", False),
        (False, "free", False),
    ],
)
def test_drafts_are_refused_where_the_owners_plan_has_none(world: World, private: bool, plan: str, refused: bool):
    repository = world.repository(OWNER, NAME)
    repository.private, repository.owner_plan = private, plan
    draft = {"head": "fix", "base": "main", "title": "Fix", "draft": True}
    status, body, _ = Api(world)("POST", f"{REPO}/pulls", draft)
    if refused:
        assert (status, body["message"]) == (422, "Validation Failed")
        assert body["errors"][0]["message"] == "Draft pull requests are not supported in this repository."
        assert repository.pulls == {}
    else:
        assert status == 201 and body["draft"] is True
    if refused:  # a ready pull request is always possible
        assert Api(world)("POST", f"{REPO}/pulls", {"head": "fix", "base": "main", "title": "Fix"})[0] == 201
