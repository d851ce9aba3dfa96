"""The table of contents every long reference file opens with.

A reference over ``LONG_REFERENCE_LINES`` lines opens (right under its title)
with a ``## Contents`` section that links each of its ``##`` sections, so a
reader, or an agent that loads only the first lines, sees what the file holds.
``python -m tools.reference_contents`` rewrites the section in place;
tests/test_skill_metadata.py checks that every long reference carries exactly
the section this module builds.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REFERENCES = ROOT / "references"
LONG_REFERENCE_LINES = 100
CONTENTS_HEADING = "## Contents"


def section_headings(lines: list[str]) -> list[str]:
    """The ``##`` headings outside fenced code blocks, in order (the Contents section excluded)."""
    headings, fenced = [], False
    for line in lines:
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("## ") and line != CONTENTS_HEADING:
            headings.append(line[3:].strip())
    return headings


def anchor(heading: str) -> str:
    """GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-")


def contents_block(headings: list[str]) -> list[str]:
    return [CONTENTS_HEADING, ""] + [f"- [{_plain(h)}](#{anchor(h)})" for h in headings]


def with_contents(text: str) -> str:
    """``text`` with its Contents section (re)built right under the title."""
    lines = text.split("\n")
    if not lines or not lines[0].startswith("# "):
        raise ValueError("a reference file starts with its '# ' title")
    body = _without_contents(lines[1:])
    while body and body[0] == "":
        body = body[1:]
    return "\n".join([lines[0], ""] + contents_block(section_headings(body)) + [""] + body)


def is_long(text: str) -> bool:
    return len(text.splitlines()) > LONG_REFERENCE_LINES


def _without_contents(lines: list[str]) -> list[str]:
    start = next((i for i, line in enumerate(lines) if line == CONTENTS_HEADING), None)
    if start is None or any(line.strip() for line in lines[:start]):
        return lines  # no Contents section right under the title
    end = start + 1
    while end < len(lines) and not lines[end].startswith("#") and (lines[end] == "" or lines[end].startswith("- [")):
        end += 1
    return lines[end:]


def _plain(heading: str) -> str:
    # Link text cannot hold brackets unescaped; code spans read fine as they are.
    return heading.replace("[", "\\[").replace("]", "\\]")


def main() -> int:
    for path in sorted(REFERENCES.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        if is_long(text):
            rebuilt = with_contents(text)
            if rebuilt != text:
                path.write_text(rebuilt, encoding="utf-8")
                print(f"rewrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
