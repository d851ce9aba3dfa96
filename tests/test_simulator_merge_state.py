"""GitHub's merge state as the simulator now judges it, read through the real collector, and what the loop does.

The simulator computes ``mergeable`` / ``mergeStateStatus`` from the
repository itself: not computed yet for the first reads after a push or a base
change (``World.merge_computing_reads``, ``compute_merge_state_again``),
conflicts with the base (DIRTY), a required check failing, pending or never
reported (BLOCKED), a head without the base tip under strict required checks
(BEHIND), clean otherwise. Each is put on PR #7 with real commits, protection
and checks, observed through ``observe_pull_request`` and then given to the
evaluator inside a recurring state: finalization never depends on the merge
state (merging stays the person's), and the gates it reports say what GitHub
said.
"""

from __future__ import annotations

import copy

import pytest

from evaluator.canonical import digest
from evaluator.checks import run_state
from observe.github.client import GitHubClient
from observe.github.pull_request import observe_pull_request
from simulator.fakegithub import PR_NUMBER, REPOSITORY, RUN_ID, TOKEN, fixture
from simulator.world import ApiError
from tools import state_scenarios
from tools.samples import claim, finalization_manifest, with_plan

OWNER, REPO = REPOSITORY.split("/")
ALL_PASS = {"approvals": "pass", "branch_protection": "pass", "checks": "pass", "mergeability": "pass"}
MERGE_STATE_QUERY = """
query($owner: String!, $name: String!, $number: Int!) {
  rateLimit { cost remaining }
  repository(owner: $owner, name: $name) { pullRequest(number: $number) { mergeable mergeStateStatus } }
}"""


@pytest.fixture
def client(fake, tmp_path):
    made = GitHubClient(REPOSITORY, host=fake.url, token=TOKEN, cache_dir=tmp_path / "cache", timeout=3.0, environ={})
    yield made
    made.close()


def gates(client):
    return observe_pull_request(client, REPOSITORY, PR_NUMBER, RUN_ID)["gates"]


def rest_verdict(client):
    pull = client.get("pulls.get", pull_number=PR_NUMBER).body
    return pull["mergeable"], pull["mergeable_state"]


def graphql_verdict(client):
    answer = client.graphql(MERGE_STATE_QUERY, {"owner": OWNER, "name": REPO, "number": PR_NUMBER})
    pull = answer["repository"]["pullRequest"]
    return pull["mergeable"], pull["mergeStateStatus"]


def require_check(fake, *, strict=False):
    """Branch protection on main that requires the check "ci/test" (from any app)."""
    protection = fixture("rest/branch-protection.json")
    protection.update(
        {
            "required_status_checks": {"strict": strict, "contexts": ["ci/test"]},
            "required_pull_request_reviews": None,
            "restrictions": None,
            "required_signatures": {"enabled": False},
            "required_conversation_resolution": {"enabled": False},
            "lock_branch": {"enabled": False},
        }
    )
    fake.protection = protection


# -- what GitHub shows, read through the collector -----------------------------------------


def test_a_pull_request_with_nothing_against_it_is_clean(fake, client):
    assert rest_verdict(client) == (True, "clean")
    assert graphql_verdict(client) == ("MERGEABLE", "CLEAN")
    assert gates(client) == ALL_PASS


def test_while_github_computes_the_merge_state_is_unknown_and_the_gates_wait(fake, client):
    fake.world.merge_computing_reads = 2  # one collection reads the pull request twice: REST, then GraphQL
    fake.world.commit(OWNER, REPO, "feature/loop", {"src/retry.py": "RETRIES = 4\n"}, "Push")
    first = gates(client)
    assert (first["mergeability"], first["branch_protection"]) == ("pending", "pending")
    assert gates(client) == ALL_PASS  # computed by the next collection

    fake.world.compute_merge_state_again(OWNER, REPO, PR_NUMBER, reads=2)
    assert rest_verdict(client) == (None, "unknown")
    assert graphql_verdict(client) == ("UNKNOWN", "UNKNOWN")
    assert rest_verdict(client) == (True, "clean")


def test_a_base_change_starts_the_computation_again(fake, client):
    fake.world.merge_computing_reads = 1
    assert rest_verdict(client) == (None, "unknown")  # the first read after the PR was opened
    assert rest_verdict(client) == (True, "clean")
    fake.world.commit(OWNER, REPO, "main", {"docs/notes.md": "notes\n"}, "Unrelated change on the base")
    assert rest_verdict(client) == (None, "unknown")
    assert rest_verdict(client) == (True, "clean")  # not behind: nothing requires an up-to-date head


def test_conflicts_with_the_base_are_dirty(fake, client):
    fake.world.commit(OWNER, REPO, "main", {"src/retry.py": "RETRIES = 5\n"}, "The same file, otherwise")
    assert rest_verdict(client) == (False, "dirty")
    assert graphql_verdict(client) == ("CONFLICTING", "DIRTY")
    assert gates(client)["mergeability"] == "fail"
    with pytest.raises(ApiError) as refused:
        fake.world.merge_pull_request(OWNER, REPO, PR_NUMBER)
    assert refused.value.status == 405


def test_a_required_check_not_reported_blocks_and_waits(fake, client):
    require_check(fake)
    assert rest_verdict(client) == (True, "blocked")
    assert graphql_verdict(client) == ("MERGEABLE", "BLOCKED")
    observed = gates(client)
    assert (observed["branch_protection"], observed["mergeability"], observed["checks"]) == (
        "pending",
        "pending",
        "pass",
    )
    with pytest.raises(ApiError) as refused:
        fake.world.merge_pull_request(OWNER, REPO, PR_NUMBER)
    assert refused.value.status == 405


def test_a_failing_required_check_blocks_and_fails(fake, client):
    require_check(fake)
    fake.world.add_check_run(OWNER, REPO, fake.head_sha, "ci/test", conclusion="failure")
    assert graphql_verdict(client) == ("MERGEABLE", "BLOCKED")
    observed = gates(client)
    assert (observed["branch_protection"], observed["checks"]) == ("fail", "fail")


def test_a_passing_required_check_is_clean_and_a_failing_optional_one_unstable(fake, client):
    require_check(fake)
    fake.world.add_check_run(OWNER, REPO, fake.head_sha, "ci/test")
    assert graphql_verdict(client) == ("MERGEABLE", "CLEAN")
    assert gates(client) == ALL_PASS
    fake.world.add_status(OWNER, REPO, fake.head_sha, "coverage", "failure")
    assert graphql_verdict(client) == ("MERGEABLE", "UNSTABLE")
    observed = gates(client)
    assert (observed["mergeability"], observed["branch_protection"], observed["checks"]) == ("pass", "pass", "fail")


def test_a_head_behind_the_base_under_strict_checks_is_behind(fake, client):
    require_check(fake, strict=True)
    fake.world.add_check_run(OWNER, REPO, fake.head_sha, "ci/test")
    assert graphql_verdict(client) == ("MERGEABLE", "CLEAN")
    fake.world.commit(OWNER, REPO, "main", {"docs/notes.md": "notes\n"}, "The base moves on")
    assert rest_verdict(client) == (True, "behind")
    assert graphql_verdict(client) == ("MERGEABLE", "BEHIND")
    observed = gates(client)
    assert (observed["branch_protection"], observed["mergeability"]) == ("fail", "fail")
    with pytest.raises(ApiError) as refused:
        fake.world.merge_pull_request(OWNER, REPO, PR_NUMBER)
    assert refused.value.status == 405


# -- what the loop does with each --------------------------------------------------------


def observed_gates(fake, client, situation):
    """Put PR #7 into ``situation`` and return the gates the collector reports."""
    if situation == "computing":
        fake.world.compute_merge_state_again(OWNER, REPO, PR_NUMBER, reads=2)
    elif situation == "dirty":
        fake.world.commit(OWNER, REPO, "main", {"src/retry.py": "RETRIES = 5\n"}, "Conflict")
    elif situation == "blocked":
        require_check(fake)
    elif situation == "behind":
        require_check(fake, strict=True)
        fake.world.add_check_run(OWNER, REPO, fake.head_sha, "ci/test")
        fake.world.commit(OWNER, REPO, "main", {"docs/notes.md": "notes\n"}, "The base moves on")
    observed = gates(client)
    assert observed != ALL_PASS
    return observed


@pytest.mark.parametrize("situation", ["computing", "dirty", "blocked", "behind"])
def test_finalization_never_merges_and_reports_what_github_said(fake, client, situation):
    """A clean review finalizes whatever the merge state is, and the finish reports the gates as observed.

    The action table has no row that reads the gates: finalization marks the
    draft ready, resolves the loop's threads and deletes the automation; the
    merge is the person's, and ``finish-finalization`` hands them the gates.
    """
    observed = observed_gates(fake, client, situation)

    planned = run_state(state_scenarios.clean_state(gates=observed), approved_hash=None, now=None)
    assert (planned["action"], planned["reasons"]) == ("plan-finalization", ["codex-clean"])

    finishing = state_scenarios.phase_two_claimed()
    finishing["gates"] = observed
    finishing["finalization_manifest"] = finalization_manifest(finishing)
    finishing = with_plan(finishing, finishing["finalization_manifest"])
    finishing["claims"][-1]["plan_hash"] = finishing["finalization_plan_hash"]
    finished = run_state(finishing, approved_hash=None, now=None)
    assert finished["action"] == "finish-finalization"
    assert finished["gates"] == observed
    assert finished["operations"] == ["delete-owned-automation"]  # the one write it permits; never a merge


def test_a_merge_state_computed_between_plan_and_claim_makes_the_plan_stale(fake, client):
    """The finalization plan binds the gates: computed after planning, they no longer match, and nothing is written.

    The plan is built from the collection that read UNKNOWN; the re-collection
    after the claim reads the computed state. The evaluator stops without a
    write (``finalization-plan-stale``), as for any plan the world moved under.
    """
    computing = observed_gates(fake, client, "computing")
    computed = gates(client)
    assert computed == ALL_PASS

    planned = state_scenarios.finalization_planned(gates=computing)
    claimed = copy.deepcopy(planned)
    claimed["claims"] = [claim(claimed, "finalization", claimed["finalization_plan_hash"])]
    assert run_state(claimed, approved_hash=None, now=None)["action"] == "execute-finalization"
    recollected = {**claimed, "gates": computed}
    stale = run_state(recollected, approved_hash=None, now=None)
    assert (stale["action"], stale["reasons"]) == ("state-inconsistency", ["finalization-plan-stale"])
    assert stale["write_permitted"] is False
    assert digest(recollected["finalization_manifest"]) == recollected["finalization_plan_hash"]
