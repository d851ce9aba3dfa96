"""The skill's metadata follows Codex's rules: front matter, agents/openai.yaml,
reference files reachable from SKILL.md, long references with contents, LICENSE."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from tools.reference_contents import REFERENCES, anchor, is_long, section_headings, with_contents
from tools.skill_metadata import (
    MetadataError,
    parse_front_matter,
    parse_openai_yaml,
    validate_front_matter,
    validate_interface,
)

ROOT = Path(__file__).resolve().parent.parent
SKILL_NAME = "github-codex-pr-loop"


def skill_text() -> str:
    return (ROOT / "SKILL.md").read_text(encoding="utf-8")


def test_front_matter_is_valid_and_says_when_to_use_the_skill():
    fields = parse_front_matter(skill_text())
    validate_front_matter(fields)
    assert fields["name"] == SKILL_NAME
    assert fields["description"].startswith("Use when ")
    assert fields["license"] == "MIT"


@pytest.mark.parametrize(
    ("front_matter", "message"),
    [
        ("name: a\ndescription: b\nversion: one", "unexpected front matter keys: version"),
        ("name: a\ndescription: use <this>", "angle bracket"),
        ("name: Not-Hyphen-Case\ndescription: b", "hyphen-case"),
        ("name: a--b\ndescription: b", "hyphen-case"),
        (f"name: {'a' * 65}\ndescription: b", "hyphen-case"),
        (f"name: a\ndescription: {'d' * 1025}", "over 1024"),
        ("name: a", "no 'description'"),
    ],
)
def test_validator_rules_refuse(front_matter, message):
    with pytest.raises(MetadataError, match=message):
        validate_front_matter(parse_front_matter(f"---\n{front_matter}\n---\n# x\n"))


@pytest.mark.parametrize(
    "front_matter",
    [
        "name: a\ndescription: >\n  folded",  # block scalar
        "name: a\ndescription: says: this",  # a colon YAML would read as a mapping
        "name: a\ndescription: text # comment",
        "name: a\ndescription: 'quoted'",
        "name: a\ndescription: yes",
        "name: a\nname: b\ndescription: c",
        "name: a\n  description: b",
    ],
)
def test_front_matter_outside_the_strict_subset_is_refused(front_matter):
    with pytest.raises(MetadataError):
        parse_front_matter(f"---\n{front_matter}\n---\n")


def test_front_matter_must_be_closed():
    with pytest.raises(MetadataError, match="closing"):
        parse_front_matter("---\nname: a\ndescription: b\n")


def test_openai_yaml_has_display_name_short_description_and_default_prompt():
    interface = parse_openai_yaml((ROOT / "agents" / "openai.yaml").read_text(encoding="utf-8"))
    validate_interface(interface)
    assert set(interface) == {"display_name", "short_description", "default_prompt"}
    assert f"${SKILL_NAME}" in interface["default_prompt"]


@pytest.mark.parametrize(
    "text",
    [
        "interface:\n  display_name: GitHub\n",  # unquoted
        'interface:\n    display_name: "x"\n',  # wrong indentation
        'interface:\n  display_name: "a\\"b"\n',  # an escape
        'ui:\n  display_name: "x"\n',
    ],
)
def test_openai_yaml_outside_the_strict_subset_is_refused(text):
    with pytest.raises(MetadataError):
        parse_openai_yaml(text)


def test_openai_yaml_needs_every_interface_field():
    with pytest.raises(MetadataError, match="default_prompt"):
        validate_interface({"display_name": "x", "short_description": "a" * 30})


def reference_files() -> list[Path]:
    return sorted(path for path in REFERENCES.rglob("*") if path.is_file())


def test_skill_md_links_every_reference_file_directly():
    linked = set(re.findall(r"\]\((references/[^)#\s]+)\)", skill_text()))
    for target in linked:
        assert (ROOT / target).is_file(), f"SKILL.md links {target}, which does not exist"
    missing = {path.relative_to(ROOT).as_posix() for path in reference_files()} - linked
    assert not missing, f"SKILL.md does not link {sorted(missing)}"


@pytest.mark.parametrize("path", sorted(REFERENCES.glob("*.md")), ids=lambda path: path.name)
def test_long_reference_opens_with_its_contents(path):
    text = path.read_text(encoding="utf-8")
    if not is_long(text):
        return
    assert text.split("\n")[2] == "## Contents", f"{path.name} does not open with ## Contents under its title"
    assert with_contents(text) == text, f"{path.name}: Contents is stale; run python -m tools.reference_contents"
    anchors = {anchor(heading) for heading in section_headings(text.split("\n"))}
    for target in re.findall(r"^- \[.*\]\(#([^)]+)\)$", text, flags=re.MULTILINE):
        assert target in anchors


def test_contents_builder_replaces_a_stale_section_and_skips_code_fences():
    body = "Intro.\n\n```\n## not a heading\n```\n\n## New part\n"
    rebuilt = with_contents("# T\n\n## Contents\n\n- [Old](#old)\n\n" + body)
    assert rebuilt == "# T\n\n## Contents\n\n- [New part](#new-part)\n\n" + body
    assert with_contents(rebuilt) == rebuilt


def test_license_is_mit_as_pyproject_says():
    license_text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert license_text.startswith("MIT License\n")
    assert "Copyright (c) 2026 the github-codex-pr-loop authors" in license_text
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == {"text": "MIT"}


# Every heartbeat's prompt names the skill, so Codex adds the whole SKILL.md to every wakeup: it holds the rules
# and the wakeup table, and the detail lives in references/agent-guide.md (bench/heartbeat_bytes.py measures it).
SKILL_MD_BUDGET = 10_279 // 2  # half of what it was when the heartbeat's cost was first measured


def test_skill_md_stays_within_the_heartbeat_budget_and_keeps_the_wakeup_table():
    text = skill_text()
    assert len(text.encode("utf-8")) <= SKILL_MD_BUDGET, "move detail to references/agent-guide.md"
    assert "| `next` says | you do |" in text
    for act in ("automation_update", "choose the fix", "edit exactly `paths`", "show the `approval_summary`"):
        assert act in text
    assert "write_stdin" in text and "never start it" in text
