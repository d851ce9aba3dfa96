"""The committed document fixtures are exactly what tools/build_fixtures.py builds."""

from __future__ import annotations

from tests.helpers import FIXTURES
from tools import build_fixtures

SUITES = ("initial", "state", "remediation", "finalization", "prompt")


def test_committed_fixtures_equal_a_fresh_build(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(build_fixtures, "FIXTURES", tmp_path)
    build_fixtures.main()
    built = {path.relative_to(tmp_path): path.read_bytes() for path in tmp_path.rglob("*.json")}
    committed = {
        path.relative_to(FIXTURES): path.read_bytes() for suite in SUITES for path in (FIXTURES / suite).rglob("*.json")
    }
    assert sorted(built) == sorted(committed), "run: python -m tools.build_fixtures"
    changed = [str(name) for name in built if built[name] != committed[name]]
    assert not changed, f"stale fixtures (run: python -m tools.build_fixtures): {changed[:5]}"
