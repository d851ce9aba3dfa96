"""Reading Codex's text: the normalised body, the forms, the excerpt (evaluator/codex_text.py)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evaluator import codex_text, policy
from simulator.fakegithub import fixture

REPLIES = fixture("codex/replies.json")["replies"]
HEAD = "1a2b3c4d5e" * 4


def body_for(reply: dict) -> str:
    return reply["body"].replace("{sha10}", HEAD[:10]).replace("{sha40}", HEAD)


@pytest.mark.parametrize("reply", REPLIES, ids=[reply["name"] for reply in REPLIES])
def test_every_fixture_reads_as_the_form_it_names(reply):
    if reply["source"] == "review":
        assert codex_text.read_review(body_for(reply)) == reply["form"]
    else:
        assert codex_text.read_issue_comment(body_for(reply)) == codex_text.Reading(reply["form"], reply["kind"])


def test_links_quotes_and_whitespace_are_normalised():
    raw = (
        "To use Codex here,\n[create an  environment for this repo](https://chatgpt.com/x)."
        "\u00a0Didn\u2019t \u201cit\u201d"
    )
    assert codex_text.normalise(raw) == 'To use Codex here, create an environment for this repo. Didn\'t "it"'
    assert codex_text.normalise("![P1 Badge](https://img.shields.io/badge/P1-orange?style=flat)") == "P1 Badge"


@pytest.mark.parametrize(
    "body",
    [
        "Didn't find any major issues. Swish!",  # no "Codex Review:" opening: not the documented form
        "Codex Review: Looks fine to me.",
        "We think Codex Review: Didn't find any major issues.",
        "Codex usage is fine today.",
        "",
    ],
)
def test_look_alike_wording_is_unrecognised_never_clean(body):
    assert codex_text.read_issue_comment(body).form == "unrecognized"


@pytest.mark.parametrize(
    "body",
    [
        "Codex usage limits have been reached for code reviews. This workspace is deactivated.",
        "Codex Review: Didn't find any major issues. Codex usage limits have been reached for code reviews.",
    ],
)
def test_two_exclusive_readings_are_ambiguous(body):
    with pytest.raises(codex_text.AmbiguousReplyError):
        codex_text.read_issue_comment(body)


def test_a_badge_wins_over_every_other_reading():
    body = "Codex Review: Didn't find any major issues. Codex usage limits have been reached. ![P3 Badge](x) nit"
    assert codex_text.read_issue_comment(body).form == "findings"
    assert codex_text.read_review("Codex usage limits have been reached. ![P0 Badge](x)") == "findings"


_TYPOGRAPHIC = st.sampled_from(["'", "\u2019", "\u2018"])
_SPACE = st.sampled_from([" ", "  ", "\n", "\u00a0", "\t "])


@given(apostrophe=_TYPOGRAPHIC, space=_SPACE, closer=st.sampled_from(["Swish!", "Keep it up!", "Breezy!", "Nice."]))
def test_the_one_line_clean_reads_the_same_however_it_is_typed(apostrophe, space, closer):
    body = f"Codex Review:{space}Didn{apostrophe}t find any major issues.{space}{closer}"
    assert codex_text.read_issue_comment(body) == codex_text.Reading("clean-commitless")
    assert codex_text.read_issue_comment(body.upper()).form == "clean-commitless"


@given(st.text(max_size=300))
def test_normalising_twice_changes_nothing(text):
    once = codex_text.normalise(text)
    assert codex_text.normalise(once) == once


@given(st.text(max_size=400))
def test_every_excerpt_is_one_the_state_rule_accepts(text):
    excerpt = codex_text.excerpt(text)
    assert codex_text.excerpt_problem(excerpt) is None
    assert len(excerpt) <= policy.CODEX_EXCERPT_MAX_CHARS


@given(st.text(alphabet="ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghij0123456789_-", min_size=24, max_size=60))
def test_a_credential_like_run_never_reaches_the_excerpt(secret):
    excerpt = codex_text.excerpt(f"Codex saw {secret} in https://example.invalid/{secret}")
    assert secret not in excerpt and excerpt == "Codex saw [REDACTED] in <link>"


def test_the_clean_verdict_as_a_review_is_clean_only_for_its_own_commit():
    body = fixture("codex/bodies.json")["clean_review"].replace("{sha10}", HEAD[:10])
    assert codex_text.read_review(body, HEAD) == "clean"
    assert codex_text.read_review(body, "0" * 40) == "unrecognized"
    assert codex_text.read_review(body + "\n\nUseful? React with 👍 / 👎.", HEAD) == "unrecognized"


@pytest.mark.parametrize(
    "body",
    [
        "### Codex Review\n\nDidn't find any major issues.",  # the findings heading and the clean text at once
        "**Summary**\n* No major issues found.\n\nUseful? React with 👍 / 👎.",
        "Here are some automated review suggestions for this pull request. Didn't find any major issues.",
    ],
)
def test_prose_findings_beside_clean_words_are_unrecognised(body):
    assert codex_text.read_issue_comment(body).form == "unrecognized"


@pytest.mark.parametrize(
    "body",
    [
        "**Summary**\n* Reviewed the branch.",  # a task summary that says nothing about issues
        "No major issues found.",  # the words without the task summary's heading
        "Summary of changes: Didn't find any major issues yet",  # no heading, only the word
    ],
)
def test_a_task_summary_is_clean_only_with_its_heading_and_the_clean_words(body):
    assert codex_text.read_issue_comment(body).form == "unrecognized"
    assert codex_text.read_issue_comment("### Summary\n- No major issues were found.").form == "clean-commitless"
