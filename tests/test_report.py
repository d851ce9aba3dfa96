"""``loop.py report``: report-only for any pull request, against the simulated GitHub and its Codex.

Codex reviews pull request #7 because someone other than a loop asked
(``@codex review`` with no loop marker); ``loop.py report`` then says what
Codex said about the head, every finding with its path, lines, priority and
text, the Codex threads and the gates. It reads GitHub only, and nothing it
does reaches the simulator as a write.
"""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from evaluator.head_report import Item, head_verdict
from simulator.codex import CodexReviewer
from simulator.fakegithub import OWNER, PR_NUMBER, REPO, REPOSITORY, TOKEN, USERS

ROOT = Path(__file__).resolve().parent.parent
LOOP = ROOT / "scripts" / "loop.py"


def loop_report(fake, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "XDG_CACHE_HOME": str(tmp_path / "cache"),
        "CODEX_HOME": str(tmp_path / "no-codex-home"),  # the registry is never read: this folder never exists
        "NO_PROXY": "127.0.0.1",
        "GH_TOKEN": TOKEN,
    }
    return subprocess.run(
        [
            sys.executable,
            str(LOOP),
            "report",
            "--api-url",
            fake.url,
            "--repository",
            REPOSITORY,
            "--pr",
            str(PR_NUMBER),
            *extra,
        ],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=120,
    )


def report(fake, tmp_path: Path) -> dict[str, Any]:
    completed = loop_report(fake, tmp_path)
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert TOKEN not in completed.stdout + completed.stderr
    result = json.loads(completed.stdout)
    assert result["ok"] is True and result["command"] == "report" and result["writes"] == "none"
    return result


def someone_asks_codex(fake, script: list[Any]) -> CodexReviewer:
    """A person (no loop, no marker) comments ``@codex review``; the simulated Codex answers five minutes later."""
    codex = CodexReviewer(fake.world, script, repository=REPOSITORY)
    fake.world.add_issue_comment(OWNER, REPO, PR_NUMBER, USERS["human_reviewer"], "@codex review")
    fake.world.clock.advance(timedelta(minutes=5))
    return codex


def world_contents(fake) -> Any:
    repository = fake.repository
    return copy.deepcopy(
        (
            repository.pulls,
            repository.issue_comments,
            repository.issue_reactions,
            repository.comment_reactions,
            repository.reviews,
            repository.review_comments,
            repository.threads,
            fake.head_sha,
        )
    )


def assert_read_only(fake, before: Any) -> None:
    """Nothing changed, and every request was a read: REST GETs and GraphQL queries, no mutation."""
    assert world_contents(fake) == before
    assert fake.log, "the report read nothing"
    for method, target, _status in fake.log:
        assert method == "GET" or (method == "POST" and target.startswith("/graphql")), (method, target)
    assert fake.world.content_generated.get(TOKEN, 0) == 0  # the simulator counts every write and mutation


def test_a_pull_request_codex_reviewed_without_a_loop_reports_its_findings(fake, tmp_path):
    codex = someone_asks_codex(
        fake,
        [
            {
                "kind": "findings",
                "findings": [
                    {
                        "priority": "P2",
                        "path": "src/retry.py",
                        "line": 1,
                        "title": "Bound the retries",
                        "text": "A negative count never ends the loop.",
                    },
                ],
            }
        ],
    )
    assert codex.requests and codex.requests[0].answered_at is not None
    before = world_contents(fake)
    result = report(fake, tmp_path)
    assert_read_only(fake, before)
    assert (result["codex"], result["head_sha"], result["pr_number"]) == ("findings", fake.head_sha, PR_NUMBER)
    [finding] = result["findings"]
    assert (finding["path"], finding["line"], finding["priority"]) == ("src/retry.py", 1, "P2")
    assert "Bound the retries" in finding["text"] and "A negative count never ends the loop." in finding["text"]
    [thread] = result["codex_threads"]
    assert (thread["path"], thread["resolved"], thread["id"]) == ("src/retry.py", False, finding["id"])
    assert {item["source"] for item in result["codex_evidence"]} >= {"review", "review-comment"}
    assert set(result["gates"]) == {"approvals", "branch_protection", "checks", "mergeability"}


def test_findings_posted_as_plain_comments_report_their_permalinked_lines(fake, tmp_path):
    someone_asks_codex(
        fake, [{"kind": "findings_plain", "findings": [{"priority": "P1", "path": "src/retry.py", "line": 1}]}]
    )
    result = report(fake, tmp_path)
    assert result["codex"] == "findings" and result["codex_threads"] == []
    [finding] = result["findings"]
    assert (finding["source"], finding["path"], finding["start_line"], finding["line"], finding["priority"]) == (
        "issue-comment",
        "src/retry.py",
        1,
        1,
        "P1",
    )


def test_a_clean_review_of_the_head_reports_clean(fake, tmp_path):
    someone_asks_codex(fake, ["clean"])
    before = world_contents(fake)
    result = report(fake, tmp_path)
    assert_read_only(fake, before)
    assert result["codex"] == "clean" and result["findings"] == [] and result["codex_threads"] == []
    assert {item["source"] for item in result["codex_evidence"]} == {"issue-comment", "reaction"}


def test_a_review_of_an_older_head_says_nothing_about_the_new_one(fake, tmp_path):
    someone_asks_codex(fake, ["clean"])
    fake.world.commit(OWNER, REPO, "feature/loop", {"src/retry.py": "RETRIES = 4\n"}, "Four retries")
    result = report(fake, tmp_path)
    assert result["codex"] == "none" and result["codex_evidence"] == []


def test_a_pull_request_codex_never_saw_reports_none_and_the_text_form_says_so(fake, tmp_path):
    before = world_contents(fake)
    result = report(fake, tmp_path)
    assert result["codex"] == "none" and result["findings"] == []
    completed = loop_report(fake, tmp_path, "--format", "text")
    assert completed.returncode == 0, completed.stdout
    assert "codex on this head: none" in completed.stdout and "writes: none (report-only)" in completed.stdout
    assert_read_only(fake, before)


def test_the_text_form_lists_each_finding_with_its_place(fake, tmp_path):
    someone_asks_codex(
        fake, [{"kind": "findings", "findings": [{"priority": "P0", "path": "src/retry.py", "line": 1}]}]
    )
    completed = loop_report(fake, tmp_path, "--format", "text")
    assert completed.returncode == 0, completed.stdout
    assert "codex on this head: findings" in completed.stdout
    assert "[P0] src/retry.py:1 (thread " in completed.stdout


@pytest.mark.parametrize(
    "extra, message",
    [(("--state-dir", "/tmp/x"), "not a loop"), (("--run-id", "a" * 32), "not a loop")],
)
def test_report_names_no_loop(fake, tmp_path, extra, message):
    completed = loop_report(fake, tmp_path, *extra)
    assert completed.returncode == 2 and message in json.loads(completed.stdout)["errors"][0]["message"]
    assert fake.log == []


def test_report_without_a_pull_request_is_a_usage_error(fake, tmp_path):
    completed = subprocess.run(
        [sys.executable, str(LOOP), "report", "--repository", REPOSITORY], capture_output=True, text=True, timeout=60
    )
    assert completed.returncode == 2 and json.loads(completed.stdout)["ok"] is False


def test_the_verdict_rules():
    at = "2026-11-29T10:0{}:00Z".format
    clean, findings = Item("reaction", "1", at(1), "clean", "head"), Item("review", "2", at(2), "findings", "head")
    assert head_verdict([clean, findings], 0)[0] == "findings"
    assert head_verdict([clean], 1)[0] == "findings"  # an open Codex thread is a finding
    unread = Item("issue-comment", "3", at(3), "unrecognized", "none")
    assert head_verdict([clean, unread], 0)[0] == "unrecognized"
    # A commitless reply before Codex last spoke about another commit may answer that one: not counted.
    older = Item("review", "4", at(4), "findings", "other")
    assert head_verdict([unread, older, clean], 0) == ("clean", [clean])
    limit = Item("issue-comment", "5", at(5), "unavailable", "none", "usage-limit")
    assert head_verdict([limit], 0) == ("unavailable", [limit])
    assert head_verdict([Item("summary-row", "6", at(6), "running", "head")], 0)[0] == "running"
    assert head_verdict([Item("summary-row", "6", at(6), "failed", "head")], 0)[0] == "failed"
    assert head_verdict([], 0) == ("none", [])
