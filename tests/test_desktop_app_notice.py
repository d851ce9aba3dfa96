"""The Codex desktop app is a prerequisite, said before anything happens.

Only the desktop app gives the agent the heartbeat automation the loop
wakes by; the skill's description (what Codex lists), its interface, SKILL.md
and the prerequisites say so, and SKILL.md has the agent confirm the tool
takes a heartbeat (a ``view`` call) before any plan is shown for approval.
"""

from __future__ import annotations

from tests.helpers import ROOT
from tools.skill_metadata import parse_front_matter, parse_openai_yaml

SKILL = (ROOT / "SKILL.md").read_text(encoding="utf-8")


def test_the_description_and_interface_name_the_desktop_app():
    description = parse_front_matter(SKILL)["description"]
    assert "Codex desktop app" in description and "heartbeat" in description and "CLI" in description
    interface = parse_openai_yaml((ROOT / "agents" / "openai.yaml").read_text(encoding="utf-8"))
    assert "desktop app" in interface["short_description"]


def test_skill_md_checks_the_heartbeat_tool_before_the_first_plan_is_shown():
    check = SKILL.index('a `view` call (`{"mode": "view"}`)')
    assert "`heartbeat`" in SKILL[check - 300 : check] and "automation_update" in SKILL[check - 400 : check]
    assert check < SKILL.index("## Starting a loop") < SKILL.index("show the `approval_summary`")
    told = SKILL[check : check + 300]
    assert "tell the person" in told and "nothing has been pushed" in told


def test_the_prerequisites_say_it_first():
    prerequisites = (ROOT / "references" / "prerequisites.md").read_text(encoding="utf-8")
    sections = [line for line in prerequisites.splitlines() if line.startswith("## ")]
    assert sections[1] == "## The Codex desktop app"  # after the contents, before every other prerequisite
    body = prerequisites.split("## The Codex desktop app\n", 1)[1].split("\n## ")[0]
    assert "automation_update" in body and "Codex CLI" in body and "cron" in body and "heartbeat" in body
    assert "references/prerequisites.md" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_skill_md_says_how_to_end_a_heartbeat_turn():
    assert 'notification exactly when the last answer says `"notify": true`' in SKILL
