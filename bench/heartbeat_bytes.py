"""What each heartbeat adds to the thread's context: the automation's prompt and the SKILL.md it pulls in.

The automation prompt names the skill (``$github-codex-pr-loop``; the
template is the evaluator's, fixed), and a prompt that names a skill makes
Codex add that skill's whole SKILL.md to the turn. So every wakeup carries
the rendered prompt plus SKILL.md. This prints both, in bytes, for this
checkout and, with ``--against REV``, for another revision of it (``git show
REV:SKILL.md``; the prompt template is the same in both unless the evaluator
changed it), and what a 30-minute wait for Codex costs at one heartbeat every
two minutes.

Run by hand: ``python bench/heartbeat_bytes.py [--against main]``. Prints a
table; asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from evaluator.render import render_prompt  # noqa: E402

PROMPT_FIXTURES = sorted((ROOT / "fixtures" / "prompt" / "valid").glob("*.json"))
HEARTBEATS_PER_WAIT = 15  # a 30-minute wait, one heartbeat every two minutes


def prompt_bytes() -> tuple[int, int]:
    """The smallest and largest rendered prompt over the valid prompt fixtures (checked against their own)."""
    sizes = []
    for path in PROMPT_FIXTURES:
        fixture = json.loads(path.read_text(encoding="utf-8"))
        key = fixture["rendered_prompt"].split("\n")[1].removeprefix("Loop key: ")
        rendered = render_prompt(key, fixture["bootstrap_snapshot"])
        assert rendered == fixture["rendered_prompt"], path.name
        sizes.append(len(rendered.encode("utf-8")))
    return min(sizes), max(sizes)


def skill_bytes(revision: str | None) -> int:
    if revision is None:
        return len((ROOT / "SKILL.md").read_bytes())
    shown = subprocess.run(
        ["git", "-C", str(ROOT), "show", f"{revision}:SKILL.md"], capture_output=True, check=True, timeout=60
    )
    return len(shown.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REV", help="another revision whose SKILL.md to compare (e.g. main)")
    arguments = parser.parse_args()
    low, high = prompt_bytes()
    rows = [("this checkout", skill_bytes(None))]
    if arguments.against:
        rows.insert(0, (arguments.against, skill_bytes(arguments.against)))
    print(f"rendered automation prompt: {low} to {high} bytes over {len(PROMPT_FIXTURES)} fixtures\n")
    print("| SKILL.md of | SKILL.md bytes | prompt bytes | per heartbeat | per 30-minute wait (15 heartbeats) |")
    print("| --- | --- | --- | --- | --- |")
    for name, size in rows:
        print(f"| {name} | {size:,} | {high:,} | {size + high:,} | {(size + high) * HEARTBEATS_PER_WAIT:,} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
