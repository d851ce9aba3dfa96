"""The collector's error codes: one catalogue (observe/errors.py), the codes
the source raises, and references/errors.md sections 9 and 10 agree both ways; the
CLI reports every ObserveError with its own code and a message naming the
path or setting concerned."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime

import pytest

from observe import cli, collect
from observe.errors import CATALOGUE, CLI_CODES, COLLECTION_CODES, ObserveError
from observe.evaluator_digest import CODE_DIRECTORIES, DigestError
from observe.git.runner import GitObservationError
from observe.github.errors import GitHubObservationError
from observe.registry import RegistryError
from tests.helpers import ROOT

REFERENCE = ROOT / "references" / "errors.md"
SOURCES = [path for path in sorted((ROOT / "observe").rglob("*.py")) if path.name != "errors.py"]

_CODE = r"([a-z0-9]+(?:-[a-z0-9]+)+)"
# A code given to an error class, to CollectionError's helpers, or compared by the CLI.
RAISED = re.compile(r"(?:Error|_fail)\(\s*\"" + _CODE + '"')
CODE_CELL = re.compile(r"^\|\s*`" + _CODE + r"`\s*\|", re.MULTILINE)
SUBCLASSES = (GitHubObservationError, GitObservationError, RegistryError, DigestError)


def raised_codes() -> set[str]:
    return set(RAISED.findall("\n".join(path.read_text(encoding="utf-8") for path in SOURCES)))


def collector_section_codes() -> set[str]:
    """The codes of sections 9 (the collector) and 10 (git observation)."""
    _, _, sections = REFERENCE.read_text(encoding="utf-8").partition("\n## 9. Collector")
    assert "\n## 10. Git observation" in sections, "references/errors.md has no collector and git sections"
    sections, _, _ = sections.partition("\n## 11. The hands")  # the hands' codes are their own (test_error_catalogue)
    return set(CODE_CELL.findall(sections))


def test_the_scan_finds_codes_of_every_wing():
    assert {"github-timeout", "git-command-failed", "registry-unreadable", "evaluator-digest-failed"} <= raised_codes()
    assert {"request-body-mismatch", "usage-error", "collector-internal-error"} <= raised_codes()


def test_every_raised_code_is_in_the_catalogue():
    missing = sorted(raised_codes() - set(CATALOGUE))
    assert not missing, f"add these codes to observe/errors.py: {missing}"


def test_every_catalogued_code_is_raised_somewhere():
    # Some codes are chosen from a table (HTTP status -> code): a quoted literal counts.
    text = "\n".join(path.read_text(encoding="utf-8") for path in SOURCES)
    stale = sorted(code for code in CATALOGUE if f'"{code}"' not in text)
    assert not stale, f"observe/errors.py lists codes nothing raises: {stale}"


def test_the_reference_lists_exactly_the_catalogue():
    assert collector_section_codes() == set(CATALOGUE)


def test_each_wing_raises_only_its_own_codes():
    for subclass in SUBCLASSES + (collect.CollectionError,):
        assert issubclass(subclass, ObserveError)
        assert subclass.codes and set(subclass.codes) <= set(CATALOGUE) - set(CLI_CODES)
        with pytest.raises(ValueError):
            subclass("not-a-code", "x")
    with pytest.raises(ValueError):
        GitHubObservationError("git-timeout", "a git code is not a GitHub error")
    assert set(collect.CollectionError.codes) == set(COLLECTION_CODES)
    error = RegistryError("registry-unreadable", "cannot list /nowhere")
    told = "cannot list /nowhere; next: pass --registry DIR, the Codex automations folder ($CODEX_HOME/automations)"
    assert (error.code, error.message, error.as_dict()) == (
        "registry-unreadable",
        told,
        {"code": "registry-unreadable", "message": told},
    )


def _checkpoint(tmp_path) -> str:
    from tools import samples

    path = tmp_path / "prompt.json"
    path.write_text(json.dumps(samples.prompt_document()))
    return str(path)


def run(capsys, *argv: str) -> tuple[int, dict]:
    status = cli.main(list(argv))
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err
    return status, json.loads(lines[0])["errors"][0]


def test_a_missing_registry_is_named_with_the_setting_that_chose_it(tmp_path, monkeypatch):
    missing = tmp_path / "no-such-registry"
    with pytest.raises(RegistryError) as info:
        collect._owned(str(missing), "github-codex-pr-loop:github.com/octo-org/widgets#7@" + "0" * 32)
    assert info.value.code == "registry-unreadable"
    assert str(missing) in info.value.message and "--registry" in info.value.message

    monkeypatch.setenv("CODEX_HOME", str(tmp_path / "codex-home"))
    with pytest.raises(RegistryError) as info:
        collect._owned(None, "github-codex-pr-loop:github.com/octo-org/widgets#7@" + "0" * 32)
    assert str(tmp_path / "codex-home" / "automations") in info.value.message and "CODEX_HOME" in info.value.message


def test_an_undigestable_evaluator_names_its_install_directory(tmp_path):
    for directory in CODE_DIRECTORIES:  # every code directory there, the entry points missing
        (tmp_path / directory).mkdir()
    (tmp_path / "evaluator" / "__init__.py").write_text("")
    settings = collect.Settings(
        api_url="http://127.0.0.1:9", gh_path=None, observed_at=datetime.now(UTC), project_root=tmp_path
    )
    with pytest.raises(DigestError) as info:
        collect._evaluator_sha256(settings)
    assert info.value.code == "evaluator-digest-failed"
    assert str(tmp_path) in info.value.message and "scripts/evaluate_state.py" in info.value.message


def test_the_cli_reports_an_observe_error_by_its_code(capsys, tmp_path):
    # A checkout that is no repository: the git wing's own code, not an internal error.
    status, error = run(capsys, "boundary", "--checkout", str(tmp_path), "--repository", "octo-org/widgets")
    assert status == 1 and error["code"] == "git-dir-not-found" and str(tmp_path) in error["message"]

    not_json = tmp_path / "broken.json"
    not_json.write_text("{")
    status, error = run(capsys, "recheck-paths", "--checkout", str(tmp_path), "--document", str(not_json))
    assert status == 1 and error["code"] == "document-invalid" and str(not_json) in error["message"]

    status, error = run(
        capsys, "state", "--checkpoint", str(not_json), "--checkout", str(tmp_path), "--wakeup-id", "nothex"
    )
    assert status == 2 and error["code"] == "usage-error" and "--wakeup-id" in error["message"]


def test_every_code_names_its_next_step_and_every_message_carries_it():
    from observe.errors import NEXT_STEPS

    assert set(NEXT_STEPS) == set(CATALOGUE), "each catalogued code has exactly one next step"
    assert all(step.strip() and step == step.strip() for step in NEXT_STEPS.values())
    for code in sorted(set(CATALOGUE) - set(CLI_CODES)):
        error_class = next(
            (cls for cls in (*SUBCLASSES, ObserveError) if code in cls.codes),
            None,
        )
        assert error_class is not None, code
        error = error_class(code, "what was observed")
        assert error.message == f"what was observed; next: {NEXT_STEPS[code]}"
        assert error.as_dict()["message"].endswith(NEXT_STEPS[code])
