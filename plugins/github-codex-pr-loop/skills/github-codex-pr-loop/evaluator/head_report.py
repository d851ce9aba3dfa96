"""Report-only for any pull request: Codex's review state of its current head.

``loop.py report`` asks this for a pull request the loop may never have
touched: no run, no request marker. The hands read GitHub and describe each
trusted Codex item (a reply, a review, a review comment, a summary row, a +1)
by the form ``evaluator/codex_text.py`` reads and by what it is about: the
current head (``"head"``), another commit (``"other"``) or no commit it names
(``"none"``). This module decides, purely, what they say about the head.
Rules: references/actions.md, "Report-only for any pull request".

Nothing here can permit a write: the report is read by a person.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .formats import parse_timestamp

About = Literal["head", "other", "none"]
ItemForm = Literal["findings", "clean", "unavailable", "unrecognized", "running", "completed", "failed"]
Verdict = Literal["findings", "unrecognized", "clean", "running", "unavailable", "failed", "none"]
VERDICTS: tuple[Verdict, ...] = ("findings", "unrecognized", "clean", "running", "unavailable", "failed", "none")


@dataclass(frozen=True)
class Item:
    source: str  # issue-comment, review, review-comment, summary-row, reaction
    id: str
    at: str  # when Codex wrote it (a summary row: its last edit)
    form: ItemForm
    about: About
    kind: str | None = None  # an unavailable reply's kind


def about_the_head(items: list[Item]) -> list[Item]:
    """The items that speak of the current head: those naming it, and those naming no commit that came
    after everything Codex said about another commit (what came before may answer an older head)."""
    others = [parse_timestamp(item.at) for item in items if item.about == "other"]
    latest_other = max(others) if others else None
    return [
        item
        for item in items
        if item.about == "head"
        or (item.about == "none" and (latest_other is None or parse_timestamp(item.at) > latest_other))
    ]


def head_verdict(items: list[Item], open_codex_threads: int) -> tuple[Verdict, list[Item]]:
    """The head's state and the items it rests on, first match wins.

    A finding always wins (an open Codex thread is one, as it is for the
    loop); then a reply no form knows (it may be a finding: never clean);
    then any clean form; then a review still running; then a "no review"
    reply; then a failed review; else none: Codex has said nothing about
    this head.
    """
    considered = sorted(about_the_head(items), key=lambda item: (parse_timestamp(item.at), item.source, item.id))

    def having(*forms: str) -> list[Item]:
        return [item for item in considered if item.form in forms]

    if having("findings") or open_codex_threads:
        return "findings", having("findings")
    if having("unrecognized"):
        return "unrecognized", having("unrecognized")
    if having("clean", "completed"):
        return "clean", having("clean", "completed")
    if having("running"):
        return "running", having("running")
    if having("unavailable"):
        return "unavailable", having("unavailable")
    if having("failed"):
        return "failed", having("failed")
    return "none", []
