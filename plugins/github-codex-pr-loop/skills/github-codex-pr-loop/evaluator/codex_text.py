"""Read what the trusted Codex account wrote: which documented form a reply is.

Pure text in, a form out; the patterns are the policy's (``policy.CODEX_*``).
The collector applies it to every trusted reply and carries the result into
the recurring state; the evaluator then judges the state. Forms and examples:
references/github-observations.md, "Codex replies".

A body is matched as GitHub serves it only after ``normalise``: markdown
images and links reduced to their text (a link's ``[`` is no part of what
Codex says), typographic quotes folded, whitespace collapsed. A finding always
wins: a priority badge makes a reply findings whatever else it says. A reply
that matches more than one kind of "no review" (or one of them and the clean
text) is ambiguous; a reply that reads as findings in prose and says the clean
text too is unrecognised; one that matches nothing is unrecognised.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from . import policy

IssueCommentForm = Literal["summary", "findings", "unavailable", "clean", "clean-commitless", "unrecognized"]
ReviewForm = Literal["findings", "clean", "unrecognized"]

_IMAGE = re.compile(r"!\[([^\[\]]*)\]\([^()\s]*\)")
_LINK = re.compile(r"\[([^\[\]]*)\]\([^()\s]*\)")
_WHITESPACE = re.compile(r"\s+")
_FOLDS = str.maketrans(policy.CODEX_TEXT_FOLDS)


class AmbiguousReplyError(ValueError):
    """A reply matches two forms that exclude each other: no reading is safe."""


@dataclass(frozen=True)
class Reading:
    form: IssueCommentForm
    kind: str | None = None  # the unavailable kind, for form "unavailable"


def normalise(body: str) -> str:
    """The text patterns are matched on: images and links as their text, ASCII quotes, single spaces."""
    text = _IMAGE.sub(r"\1", body)
    text = _LINK.sub(r"\1", text)
    text = text.translate(_FOLDS)
    return _WHITESPACE.sub(" ", text).strip()


def unavailable_kinds(text: str) -> list[str]:
    """The kinds of "no review will come" a normalised text states, each once."""
    found = {kind for kind, _variant, pattern in policy.CODEX_UNAVAILABLE_FORMS if pattern.search(text)}
    return sorted(found)


def has_priority_badge(text: str) -> bool:
    return policy.CODEX_PRIORITY_BADGE.search(text) is not None


def read_issue_comment(body: str) -> Reading:
    """The one form of a trusted Codex issue comment (the summary comment is recognised by its first line)."""
    if body.startswith(policy.CODEX_SUMMARY_MARKER):
        return Reading("summary")
    text = normalise(body)
    if has_priority_badge(text):
        return Reading("findings")
    kinds = unavailable_kinds(text)
    clean = policy.CODEX_CLEAN_TEXT.search(text) is not None
    if len(kinds) > 1 or (kinds and clean):
        raise AmbiguousReplyError(f"the reply states {len(kinds)} kinds of no review and clean={clean}")
    if kinds:
        return Reading("unavailable", kinds[0])
    clean_text = clean or policy.CODEX_TASK_SUMMARY_CLEAN.search(text) is not None
    if reads_as_prose_findings(text):
        # Findings and the clean text at once: no reading is safe.
        return Reading("unrecognized" if clean_text else "findings")
    if policy.CODEX_CLEAN_OPENING.search(text) or (
        policy.CODEX_TASK_SUMMARY_OPENING.search(text) and policy.CODEX_TASK_SUMMARY_CLEAN.search(text)
    ):
        return Reading("clean" if reviewed_commit_prefixes(body) else "clean-commitless")
    return Reading("unrecognized")


def reads_as_prose_findings(text: str) -> bool:
    """Findings without a badge: the review heading opening the reply, the review's suggestions line, or
    the feedback line that ends every Codex finding (a normalised text)."""
    return any(
        pattern.search(text)
        for pattern in (policy.CODEX_REVIEW_HEADING, policy.CODEX_FINDINGS_PROSE, policy.CODEX_FINDING_FEEDBACK)
    )


def read_review(body: str, commit_id: str | None = None) -> ReviewForm:
    """A review is findings when it opens with Codex's review heading, carries a badge, or has no body
    (GitHub's form for a review that is only its inline comments, which are findings); clean when it is
    the clean verdict posted as a review (the clean opening, nothing that reads as findings, and any
    Reviewed commit it names is the review's own ``commit_id``); else unrecognised."""
    text = normalise(body)
    if not text or has_priority_badge(text) or policy.CODEX_REVIEW_HEADING.search(text):
        return "findings"
    if policy.CODEX_CLEAN_OPENING.search(text) and not reads_as_prose_findings(text) and not unavailable_kinds(text):
        named = reviewed_commit_prefixes(body)
        if commit_id is None or all(commit_id.startswith(prefix) for prefix in named):
            return "clean"
    return "unrecognized"


def reviewed_commit_prefixes(body: str) -> set[str]:
    """Every short sha named after "**Reviewed commit:**"."""
    return set(policy.CODEX_REVIEWED_COMMIT.findall(normalise(body)))


def permalink_shas(body: str) -> set[str]:
    """The commits of the blob permalinks in the raw body (normalising would drop a link's target)."""
    return set(policy.CODEX_BLOB_PERMALINK.findall(body))


def excerpt(body: str) -> str:
    """A short, redacted excerpt of a reply for a person: links and credential-like runs replaced, then cut."""
    text = policy.CODEX_EXCERPT_LINK.sub("<link>", normalise(body))
    text = policy.CODEX_EXCERPT_SECRET.sub("[REDACTED]", text)
    text = "".join(character for character in text if character.isprintable())
    limit = policy.CODEX_EXCERPT_MAX_CHARS
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def excerpt_problem(text: str) -> str | None:
    """Why ``text`` is not an excerpt ``excerpt`` could have made, or None (the state rule's check)."""
    if len(text) > policy.CODEX_EXCERPT_MAX_CHARS:
        return f"{len(text)} characters, at most {policy.CODEX_EXCERPT_MAX_CHARS}"
    if not text.isprintable():
        return "a character that is not printable"
    if policy.CODEX_EXCERPT_LINK.search(text) or policy.CODEX_EXCERPT_SECRET.search(text):
        return "a link or a credential-like run that was not replaced"
    return None
