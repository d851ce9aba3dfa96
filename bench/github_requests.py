"""Requests and rate-limit points of one observation, with a cold and a warm ETag cache.

Runs against the fake GitHub of the tests (simulator/fakegithub.py) on 127.0.0.1,
so it needs no network and no token. The PR is unchanged between the two
runs, which is what most wakeups see. By default it has exactly 100 reviews and
100 reactions: a full last page of a list, which the warm run revalidates only
because the first GraphQL page counts both lists.

Target: the warm run spends no primary REST points (every GET is a 304) and
at most one GraphQL query per 100 review threads.

    .venv/bin/python bench/github_requests.py [--threads 250] [--comments 120] [--reviews 100] [--reactions 100]

Exit status 0 when the target is met, 1 when it is not.
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.dont_write_bytecode = (
    True  # the skill's code directories hold no bytecode cache (references/automation-registry.md)
)
sys.path.insert(0, str(ROOT))

from observe.github.client import GitHubClient  # noqa: E402
from observe.github.pull_request import observe_pull_request  # noqa: E402
from simulator.fakegithub import (  # noqa: E402
    BODIES,
    PR_NUMBER,
    REPOSITORY,
    RUN_ID,
    TOKEN,
    USERS,
    FakeGitHub,
    at,
    codex_body,
    fixture,
)


def build_pull_request(fake: FakeGitHub, threads: int, comments: int, reviews: int, reactions: int) -> None:
    """A busy but ordinary PR: chatter, Codex findings, reviews, reactions, checks and protection.

    ``reviews`` and ``reactions`` count Codex's review and +1 among them.
    """
    fake.add_request(0, at(10))
    for index in range(comments):
        fake.add_issue_comment(USERS["other_human"], f"comment {index}", at(20 + index))
    head = fake.head_sha
    review = fake.add_review(USERS["codex_bot"], codex_body("findings_review", head), "COMMENTED", head, at(2000))
    for index in range(threads):
        author = USERS["codex_bot"] if index % 2 == 0 else USERS["human_reviewer"]
        fake.add_thread(author, BODIES["finding_comment_p1"], at(2001 + index), line=index + 1)
        if index % 2 == 0:
            fake.add_review_comment(
                author, BODIES["finding_comment_p1"], head, at(2001 + index), review_id=review["id"], line=index + 1
            )
    fake.add_issue_comment(USERS["codex_bot"], codex_body("summary_completed", head), at(15), at(2500))
    fake.add_reaction(USERS["codex_as_reactor"], "+1", at(2600))
    for index in range(reviews - 1):
        fake.add_review(USERS["human_reviewer"], f"review {index}", "COMMENTED", head, at(2700 + index))
    for index in range(reactions - 1):
        fake.add_reaction(USERS["other_human"], "heart", at(2700 + index))
    for name in ("ci/test", "ci/lint", "ci/docs"):
        fake.add_check_run(name)
    fake.add_status("deploy/preview", "success")
    fake.protection = fixture("rest/branch-protection.json")


def collect(fake: FakeGitHub, cache_dir: Path) -> tuple[dict[str, int], float]:
    client = GitHubClient(REPOSITORY, host=fake.url, token=TOKEN, cache_dir=cache_dir, environ={})
    try:
        started = time.perf_counter()
        observe_pull_request(client, REPOSITORY, PR_NUMBER, RUN_ID)
        return client.stats, time.perf_counter() - started
    finally:
        client.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=250)
    parser.add_argument("--comments", type=int, default=120)
    parser.add_argument("--reviews", type=int, default=100)
    parser.add_argument("--reactions", type=int, default=100)
    arguments = parser.parse_args(argv)
    reviews, reactions = max(1, arguments.reviews), max(1, arguments.reactions)  # Codex's review and +1 at least
    fake = FakeGitHub().start()
    try:
        build_pull_request(fake, arguments.threads, arguments.comments, reviews, reactions)
        with tempfile.TemporaryDirectory() as cache_dir:
            runs = {"cold": collect(fake, Path(cache_dir)), "warm": collect(fake, Path(cache_dir))}
    finally:
        fake.stop()
    print(
        f"one observation of a PR with {arguments.threads} review threads, {arguments.comments + 2} issue comments,"
        f" {reviews} reviews and {reactions} reactions"
    )
    print(
        f"{'cache':<6} {'requests':>8} {'REST':>5} {'304s':>5} {'REST points':>11}"
        f" {'GraphQL':>7} {'GraphQL points':>14} {'seconds':>8}"
    )
    for name, (stats, seconds) in runs.items():
        print(
            f"{name:<6} {stats['requests']:>8} {stats['rest_requests']:>5} {stats['rest_not_modified']:>5}"
            f" {stats['rest_points']:>11}"
            f" {stats['graphql_requests']:>7} {stats['graphql_points']:>14} {seconds:>8.2f}"
        )
    warm = runs["warm"][0]
    graphql_budget = max(1, math.ceil(arguments.threads / 100))
    met = warm["rest_points"] == 0 and warm["graphql_requests"] <= graphql_budget
    print(f"target (warm: 0 REST points, <= {graphql_budget} GraphQL queries): {'met' if met else 'NOT MET'}")
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())
