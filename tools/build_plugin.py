"""Build the Codex plugin this repository offers as a plugin marketplace, from the repository itself.

    python tools/build_plugin.py          # write plugins/github-codex-pr-loop/ and the marketplace file
    python tools/build_plugin.py --check  # exit 1, naming each difference, if they are not up to date

Codex (``codex plugin marketplace add OWNER/REPO`` or a local path, then
``codex plugin add github-codex-pr-loop@github-codex-pr-loop``) reads
``.agents/plugins/marketplace.json``, which names the plugin's directory, and
copies that whole directory into its plugin cache, leaving symlinks out. So
the plugin directory holds a plain copy of exactly what the skill runs
(install.py's ``runtime_files``: no tests, simulator, benchmarks or
fixtures), in ``skills/github-codex-pr-loop/``, beside the manifest
``.codex-plugin/plugin.json``. The repository's own files stay the one
source: this script writes the copy, and tests/test_plugin.py fails while the
committed copy differs from what it would write.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import sys
from pathlib import Path

sys.dont_write_bytecode = True  # install.py is imported below: no bytecode beside the sources
ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import install  # noqa: E402  (the root is on the path only from the line above)

NAME = install.SKILL_NAME
MARKETPLACE_FILE = ".agents/plugins/marketplace.json"
PLUGIN_DIRECTORY = f"plugins/{NAME}"
SKILL_DIRECTORY = f"skills/{NAME}"


def _json(value: object) -> bytes:
    return (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode("utf-8")


def _skill_description() -> str:
    front_matter = (ROOT / "SKILL.md").read_text(encoding="utf-8").split("---\n")[1]
    [line] = [line for line in front_matter.splitlines() if line.startswith("description: ")]
    return line.removeprefix("description: ")


def plugin_manifest() -> dict[str, object]:
    return {
        "name": NAME,
        "version": install.skill_version(ROOT),  # evaluator/version.py: the one place it is written
        "description": _skill_description(),
        "license": "MIT",
        "keywords": ["github", "pull-request", "code-review", "codex-review"],
        "skills": "./skills/",
        "interface": {
            "displayName": NAME,
            "shortDescription": "Carry a local change to a GitHub PR and loop Codex review on it until it is clean",
            "category": "Coding",
            "capabilities": ["Interactive", "Write"],
        },
    }


def marketplace() -> dict[str, object]:
    return {
        "name": NAME,
        "interface": {"displayName": NAME},
        "plugins": [
            {
                "name": NAME,
                "source": {"source": "local", "path": f"./{PLUGIN_DIRECTORY}"},
                "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                "category": "Coding",
            }
        ],
    }


def expected_files() -> dict[str, tuple[bytes, bool]]:
    """Every file the build writes: repository-relative path -> (content, executable)."""
    files = {
        MARKETPLACE_FILE: (_json(marketplace()), False),
        f"{PLUGIN_DIRECTORY}/.codex-plugin/plugin.json": (_json(plugin_manifest()), False),
    }
    for relative in install.runtime_files(ROOT):
        source = ROOT / relative
        executable = bool(source.stat().st_mode & stat.S_IXUSR)
        files[f"{PLUGIN_DIRECTORY}/{SKILL_DIRECTORY}/{relative}"] = (source.read_bytes(), executable)
    return files


def differences() -> list[str]:
    """What the committed plugin and marketplace file lack, hold in excess or hold differently."""
    expected = expected_files()
    present = {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / PLUGIN_DIRECTORY).rglob("*")
        if path.is_file() or path.is_symlink()
    }
    found = []
    for relative in sorted(set(expected) | present):
        path = ROOT / relative
        if relative not in expected:
            found.append(f"{relative}: not part of the plugin")
        elif path.is_symlink() or not path.is_file():
            found.append(f"{relative}: missing (or not a plain file)")
        elif path.read_bytes() != expected[relative][0]:
            found.append(f"{relative}: differs from its source")
        elif bool(path.stat().st_mode & stat.S_IXUSR) != expected[relative][1]:
            found.append(f"{relative}: executable bit differs from its source")
    return found


def build() -> None:
    shutil.rmtree(ROOT / PLUGIN_DIRECTORY, ignore_errors=True)
    for relative, (content, executable) in expected_files().items():
        path = ROOT / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
        os.chmod(path, 0o755 if executable else 0o644)


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        found = differences()
        for line in found:
            print(line)
        if found:
            print("the plugin is not up to date: run python tools/build_plugin.py", file=sys.stderr)
        return 1 if found else 0
    if argv:
        print(__doc__, file=sys.stderr)
        return 2
    build()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
