"""Property: every single mutation of every valid initial document is rejected."""

from __future__ import annotations

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator.checks import run_initial
from tests.helpers import FIXTURES, examples, load, valid_fixtures
from tools.mutations import mutation_recipes, mutations

EXHAUSTIVE = [
    "new-pr-branch-validate-commit-push",
    "reuse-pr-no-branch-no-validate-no-commit-no-push",
    "explicit-risk-acceptance",
    "new-pr-non-ascii-text",
]


@pytest.mark.parametrize("name", EXHAUSTIVE)
def test_every_mutation_of_representative_documents_is_rejected(name):
    document = load(FIXTURES / "initial" / "valid" / f"{name}.json")
    count = 0
    for description, mutated in mutations(document):
        result = run_initial(mutated, approved_hash=None, risk_record=None)
        assert result["ok"] is False, f"accepted after: {description}"
        assert result["errors"], description
        count += 1
    assert count > 300


@functools.cache
def _recipes(path):
    return mutation_recipes(load(path))


@settings(max_examples=examples(3))
@given(st.data())
def test_random_mutation_of_any_valid_document_is_rejected(data):
    path = data.draw(st.sampled_from(valid_fixtures("initial")))
    description, recipe = data.draw(st.sampled_from(_recipes(path)))
    result = run_initial(recipe(), approved_hash=None, risk_record=None)
    assert result["ok"] is False, f"{path.stem}: accepted after {description}"
