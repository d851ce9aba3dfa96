"""The skill's metadata, read strictly: SKILL.md front matter and agents/openai.yaml.

Codex reads both as YAML. Rather than depend on a YAML library, the files are
kept to a small subset that this module parses exactly, and refuses anything
outside it (so nothing in them can mean something else to a full YAML parser):

- SKILL.md opens with ``---``, then one ``key: value`` line per key, then
  ``---``. A value is a plain scalar: one line, not starting with a YAML
  indicator, holding no ``": "`` and no ``" #"``, and not a word YAML reads as
  a boolean, null or number.
- agents/openai.yaml holds ``interface:`` and, indented by two spaces,
  ``key: "double-quoted value"`` lines (no escapes).

The rules the front matter must then meet are those of Codex's skill
validator: only the keys below, a hyphen-case name of at most 64 characters,
a description of at most 1024 characters without angle brackets.
"""

from __future__ import annotations

import re

FRONT_MATTER_KEYS = frozenset({"name", "description", "license", "allowed-tools", "metadata"})
INTERFACE_KEYS = frozenset({"display_name", "short_description", "default_prompt"})
MAX_NAME = 64
MAX_DESCRIPTION = 1024
SHORT_DESCRIPTION_RANGE = (25, 64)

_KEY = re.compile(r"[a-z][a-z0-9_-]*")
_PLAIN_START_FORBIDDEN = set("-?:,[]{}#&*!|>'\"%@`")
_YAML_WORDS = re.compile(r"(?i)(y|yes|n|no|true|false|on|off|null|~|[-+]?[0-9][0-9_.:eE+-]*|\.inf|\.nan)")
_QUOTED = re.compile(r'"([^"\\]*)"')


class MetadataError(ValueError):
    """The metadata is outside the parsed subset or breaks a validator rule."""


def parse_front_matter(text: str) -> dict[str, str]:
    """The SKILL.md front matter as a dict of strings (strict subset, see the module docstring)."""
    lines = text.split("\n")
    if not lines or lines[0] != "---":
        raise MetadataError("SKILL.md must open with a '---' line")
    try:
        end = lines.index("---", 1)
    except ValueError:
        raise MetadataError("the front matter has no closing '---' line") from None
    fields: dict[str, str] = {}
    for number, line in enumerate(lines[1:end], start=2):
        key, separator, value = line.partition(": ")
        if not separator or not _KEY.fullmatch(key):
            raise MetadataError(f"line {number}: expected 'key: value' with a lowercase key")
        if key in fields:
            raise MetadataError(f"line {number}: key {key!r} repeats")
        fields[key] = _plain_scalar(value, number)
    return fields


def validate_front_matter(fields: dict[str, str]) -> None:
    """Codex's skill validator rules (keys, name, description)."""
    unexpected = set(fields) - FRONT_MATTER_KEYS
    if unexpected:
        raise MetadataError(f"unexpected front matter keys: {', '.join(sorted(unexpected))}")
    for required in ("name", "description"):
        if required not in fields:
            raise MetadataError(f"the front matter has no {required!r}")
    name, description = fields["name"], fields["description"]
    if not re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", name) or len(name) > MAX_NAME:
        raise MetadataError(f"name {name!r} is not hyphen-case of at most {MAX_NAME} characters")
    if "<" in description or ">" in description:
        raise MetadataError("the description holds an angle bracket")
    if len(description) > MAX_DESCRIPTION:
        raise MetadataError(f"the description has {len(description)} characters, over {MAX_DESCRIPTION}")


def parse_openai_yaml(text: str) -> dict[str, str]:
    """The ``interface`` mapping of agents/openai.yaml (strict subset, see the module docstring)."""
    lines = text.rstrip("\n").split("\n")
    if not lines or lines[0] != "interface:":
        raise MetadataError("agents/openai.yaml must open with 'interface:'")
    interface: dict[str, str] = {}
    for number, line in enumerate(lines[1:], start=2):
        key, separator, value = line.partition(": ")
        match = _QUOTED.fullmatch(value)
        if not separator or not key.startswith("  ") or not _KEY.fullmatch(key[2:]) or match is None:
            raise MetadataError(f"line {number}: expected '  key: \"value\"' (two spaces, double quotes, no escapes)")
        if key[2:] in interface:
            raise MetadataError(f"line {number}: key {key[2:]!r} repeats")
        interface[key[2:]] = match.group(1)
    return interface


def validate_interface(interface: dict[str, str]) -> None:
    missing = INTERFACE_KEYS - set(interface)
    if missing:
        raise MetadataError(f"agents/openai.yaml lacks {', '.join(sorted(missing))}")
    low, high = SHORT_DESCRIPTION_RANGE
    if not low <= len(interface["short_description"]) <= high:
        raise MetadataError(f"short_description must have {low} to {high} characters")
    if not all(value.strip() for value in interface.values()):
        raise MetadataError("an interface value is empty")


def _plain_scalar(value: str, number: int) -> str:
    if value != value.strip() or not value:
        raise MetadataError(f"line {number}: the value is empty or has surrounding spaces")
    if value[0] in _PLAIN_START_FORBIDDEN or ": " in value or " #" in value or value.endswith(":"):
        raise MetadataError(f"line {number}: the value is not a YAML plain scalar this parser reads exactly")
    if _YAML_WORDS.fullmatch(value):
        raise MetadataError(f"line {number}: YAML would read {value!r} as something other than a string")
    if any(ord(character) < 0x20 or character == "\t" for character in value):
        raise MetadataError(f"line {number}: the value holds a control character")
    return value
