"""``loop.py report --repository O/R --pr N``: Codex's review state of any pull request's current head.

Report-only, as a person uses it: no loop, no run id, no request marker. It
reads GitHub once (the collector's pull-request observation) and nothing else:
never a checkout, a remote or the automation registry, and it writes nothing
(references/actions.md, "Report-only for any pull request"). What Codex said
about the head is decided by ``evaluator/head_report.py``; this module only
says which trusted Codex item is about which commit, and lists the findings,
the Codex threads and the merge gates for the person.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from act.command import Context
from act.core.errors import UsageError
from act.core.jsonedge import Output
from act.core.options import given
from act.edge import sources
from evaluator import codex_text, policy
from evaluator.formats import REPOSITORY
from evaluator.head_report import About, Item, ItemForm, head_verdict
from observe.collect import FINDING_TEXT_LIMIT, finding_texts

if TYPE_CHECKING:
    from observe.github.observation import PullRequestObservation
    from observe.github.pull_request import PullRequestSnapshot

# How a summary row's status and an issue comment's form read as report items.
_ROW_FORMS: dict[str, ItemForm] = {"running": "running", "completed": "completed", "failed": "failed"}
_COMMENT_FORMS: dict[str, ItemForm] = {
    "findings": "findings",
    "clean": "clean",
    "clean-commitless": "clean",
    "unrecognized": "unrecognized",
}
# The observation reads loop markers of one run; the report reads no run's, so it names none that exists.
NO_RUN = "0" * 32


def run_report(context: Context) -> Output:
    from observe.github.pull_request import fetch_snapshot, normalize_snapshot

    args = context.options
    if args.state_dir is not None or args.run_id is not None:
        raise UsageError("report reads a pull request, not a loop: give --repository and --pr, no loop's directory")
    repository, pr = given(args.repository, "--repository").lower(), given(args.pr, "--pr")
    if not REPOSITORY.matches(repository):
        raise UsageError(f"--repository must be OWNER/REPO, not {args.repository!r}")
    if pr < 1:
        raise UsageError("--pr must be a positive pull request number")
    with sources.observing():
        client = sources.github_client(context.world, repository)
        snapshot = fetch_snapshot(client, repository, pr)
        observation = normalize_snapshot(snapshot, repository, pr, NO_RUN)
        return build(snapshot, observation, context.world.secrets)


def _about(head: str, named: set[str]) -> About:
    """What a set of named commits (short or full shas) says a reply is about."""
    if not named:
        return "none"
    return "head" if any(head.startswith(sha) for sha in named) else "other"


def codex_items(snapshot: PullRequestSnapshot, head: str) -> list[Item]:
    """Every trusted Codex item of the pull request, with its form and the commit it is about."""
    from observe.github import codex_signals

    items: list[Item] = []
    for comment in snapshot.issue_comments:
        if not codex_signals.is_trusted_codex_author(comment.get("user")):
            continue
        comment_id, body = comment["id"], comment.get("body") or ""
        reading = codex_signals.read_codex_issue_comment(comment_id, body)
        if reading.form == "summary":
            for status, short_sha in codex_signals.parse_summary_rows(comment_id, body):
                row_about = _about(head, {short_sha})
                items.append(Item("summary-row", str(comment_id), comment["updated_at"], _ROW_FORMS[status], row_about))
            continue
        if reading.form == "unavailable":
            created = comment["created_at"]
            items.append(Item("issue-comment", str(comment_id), created, "unavailable", "none", reading.kind))
            continue
        prefix = codex_signals.reviewed_commit_prefix(comment_id, body)
        named = {prefix} if prefix is not None else codex_text.permalink_shas(body)
        form = _COMMENT_FORMS[reading.form]
        items.append(Item("issue-comment", str(comment_id), comment["created_at"], form, _about(head, named)))
    for review in snapshot.reviews:
        if not codex_signals.is_trusted_codex_author(review.get("user")):
            continue
        commit_id = review.get("commit_id")
        form = codex_text.read_review(review.get("body") or "", commit_id)
        about: About = "head" if commit_id == head else "other"
        items.append(Item("review", str(review["id"]), review["submitted_at"], form, about))
    for comment in snapshot.review_comments:
        if codex_signals.is_trusted_codex_author(comment.get("user")):
            about = "head" if comment.get("original_commit_id") == head else "other"
            items.append(Item("review-comment", str(comment["id"]), comment["created_at"], "findings", about))
    for reaction in snapshot.reactions:
        # Codex's +1 names no commit, and GitHub removes it when a new push lands: it is about the head.
        if reaction.get("content") == "+1" and codex_signals.is_trusted_codex_reactor(reaction.get("user")):
            items.append(Item("reaction", str(reaction["id"]), reaction["created_at"], "clean", "head"))
    return items


@dataclass(frozen=True)
class Finding:
    """One finding the report lists: an open Codex thread's, or one Codex posted as a plain PR comment."""

    source: str  # "thread" or "issue-comment"
    id: str
    path: str | None
    start_line: int | None
    line: int | None
    priority: str | None
    text: str
    truncated: bool


def _comment_finding(comment_id: str, body: str, head: str) -> Finding:
    """A finding Codex posted as a plain PR comment: where its permalink points (at the head), its badge, its text."""
    text = codex_text.normalise(body)
    badge = policy.CODEX_PRIORITY.search(text)
    link = next((m for m in policy.CODEX_BLOB_PERMALINK_LINES.finditer(body) if m.group("sha") == head), None)
    start = int(link.group("start")) if link and link.group("start") else None
    end = int(link.group("end")) if link and link.group("end") else start
    return Finding(
        source="issue-comment",
        id=comment_id,
        path=link.group("path") if link else None,
        start_line=start,
        line=end,
        priority=badge.group(1).upper() if badge else None,
        text=body[:FINDING_TEXT_LIMIT],
        truncated=len(body) > FINDING_TEXT_LIMIT,
    )


def build(snapshot: PullRequestSnapshot, observation: PullRequestObservation, secrets: list[str]) -> Output:
    pull = observation["pull_request"]
    head = pull["head_sha"]
    codex_threads = [thread for thread in observation["threads"] if thread["root_is_codex"]]
    open_threads = [thread for thread in codex_threads if not thread["is_resolved"]]
    verdict, evidence = head_verdict(codex_items(snapshot, head), len(open_threads))
    findings = [
        Finding(
            "thread",
            found["thread_id"],
            found["path"],
            found["start_line"],
            found["line"],
            found["priority"],
            found["text"],
            found["truncated"],
        )
        for found in finding_texts(open_threads, secrets)
    ]
    bodies = {str(comment["id"]): comment.get("body") or "" for comment in snapshot.issue_comments}
    findings += [
        _comment_finding(item.id, bodies[item.id], head)
        for item in evidence
        if item.form == "findings" and item.source == "issue-comment"
    ]
    return {
        "repository": pull["repository"],
        "pr_number": pull["number"],
        "pr_url": pull["url"],
        "pr_state": pull["state"],
        "pr_is_draft": pull["is_draft"],
        "head_sha": head,
        "codex": verdict,
        "codex_evidence": [
            {"source": item.source, "id": item.id, "at": item.at, "form": item.form, "kind": item.kind}
            for item in evidence
        ],
        "findings": [asdict(finding) for finding in findings],
        "codex_threads": [
            {
                "id": thread["thread"]["id"],
                "path": thread["text"]["path"],
                "start_line": thread["text"]["start_line"],
                "line": thread["text"]["line"],
                "resolved": thread["is_resolved"],
                "outdated": thread["is_outdated"],
            }
            for thread in codex_threads
        ],
        "non_codex_threads": sum(
            1 for thread in observation["threads"] if not thread["root_is_codex"] and not thread["is_resolved"]
        ),
        "gates": dict(observation["gates"]),
        "writes": "none",
    }


def text(result: Output) -> str:
    """For people: the verdict, each finding with where it is, the threads and the gates."""
    lines = [
        f"pull request: {result['pr_url']} ({result['pr_state']}{', draft' if result['pr_is_draft'] else ''})",
        f"head: {result['head_sha']}",
        f"codex on this head: {result['codex']}",
    ]
    for item in result["codex_evidence"]:
        kind = f" ({item['kind']})" if item["kind"] else ""
        lines.append(f"  - {item['form']}{kind}: {item['source']} {item['id']} at {item['at']}")
    lines.append(f"findings: {len(result['findings'])}")
    for finding in result["findings"]:
        where = finding["path"] or "(no path)"
        if finding["line"] is not None:
            start = finding["start_line"] if finding["start_line"] is not None else finding["line"]
            where += f":{start}" if start == finding["line"] else f":{start}-{finding['line']}"
        lines.append(f"  - [{finding['priority'] or 'no priority'}] {where} ({finding['source']} {finding['id']})")
        lines.extend(f"      {line}" for line in finding["text"].splitlines() if line.strip())
    lines.append(f"codex threads: {len(result['codex_threads'])}")
    for thread in result["codex_threads"]:
        state = "resolved" if thread["resolved"] else "open"
        lines.append(f"  - {thread['path']}:{thread['line']} {state}{', outdated' if thread['outdated'] else ''}")
    lines.append(f"other open threads: {result['non_codex_threads']}")
    lines.append("gates: " + ", ".join(f"{name} {value}" for name, value in result["gates"].items()))
    lines.append("writes: none (report-only)")
    return "\n".join(lines) + "\n"
