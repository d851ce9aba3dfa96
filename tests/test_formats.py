"""One definition per format: formatters round-trip, patterns agree with the code, observers agree with models."""

from __future__ import annotations

import hashlib
import re
from datetime import UTC, datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from evaluator import formats, markers, policy
from evaluator.canonical import tree_digest
from evaluator.models import common
from tests.helpers import model_checker_accepts

HEX = "0123456789abcdef"
run_ids = st.text(HEX, min_size=32, max_size=32)
shas = st.text(HEX, min_size=40, max_size=40)
digests = st.text(HEX, min_size=64, max_size=64)
rounds = st.integers(min_value=0, max_value=999_999_999)
comment_ids = st.integers(min_value=1, max_value=10**16 - 1)
owners = st.from_regex(r"[a-z0-9](?:[a-z0-9]|-[a-z0-9]){0,18}", fullmatch=True)
repos = st.from_regex(r"[a-z0-9_-][a-z0-9._-]{0,30}", fullmatch=True).filter(
    lambda name: formats.REPOSITORY.matches(f"o/{name}")
)
repositories = st.builds(lambda owner, repo: f"{owner}/{repo}", owners, repos)


# --- formatters round-trip ---------------------------------------------------------


@given(run_ids, rounds, shas)
def test_request_marker_round_trips(run_id, round_number, sha):
    text = markers.request_marker(run_id, round_number, sha)
    assert markers.parse_request_marker(text) == markers.RequestMarker(run_id, round_number, sha)
    classified = markers.classify_issue_comment(f"@codex review\n{text}", run_id)
    assert (classified.kind, classified.marker) == ("request", (run_id, round_number, sha))


@given(run_ids, st.sampled_from(["remediation", "finalization", "cleanup"]), digests, comment_ids, shas, run_ids)
def test_claim_marker_round_trips(run_id, kind, plan_hash, comment_id, sha, wakeup_id):
    key = formats.request_key(comment_id, sha)
    text = markers.claim_marker(run_id, kind, plan_hash, key, wakeup_id)
    expected = markers.ClaimMarker(run_id, kind, plan_hash, key, wakeup_id)
    assert markers.parse_claim_marker(text) == expected
    assert markers.classify_issue_comment(text, run_id) == ("claim", expected)


@given(run_ids, rounds)
def test_reply_marker_round_trips(run_id, round_number):
    text = markers.reply_marker(run_id, round_number)
    assert markers.parse_reply_marker(text) == markers.ReplyMarker(run_id, round_number)
    assert markers.reply_round(f"Fixed.\n{text}", run_id) == round_number


@given(repositories, st.integers(min_value=1, max_value=10**9), run_ids)
def test_automation_key_round_trips(repository, pr_number, run_id):
    key = markers.automation_key(policy.HOST, repository, pr_number, run_id)
    assert markers.parse_automation_key(key) == markers.AutomationKey(policy.HOST, repository, pr_number, run_id)


@given(comment_ids, shas)
def test_request_key_round_trips(comment_id, sha):
    key = formats.request_key(comment_id, sha)
    assert formats.REQUEST_KEY.matches(key)
    assert formats.parse_request_key(key) == (comment_id, sha)


@given(
    st.datetimes(min_value=datetime(1, 1, 3), max_value=datetime(9999, 12, 29)),
    st.sampled_from([UTC, timezone(timedelta(hours=5, minutes=30)), timezone(timedelta(hours=-11))]),
)
def test_timestamps_round_trip(moment, zone):
    aware = moment.replace(tzinfo=zone)
    text = aware.isoformat()
    assert formats.TIMESTAMP.matches(text), text
    assert formats.parse_timestamp(text) == aware
    if zone is UTC:
        assert formats.parse_timestamp(text.replace("+00:00", "Z")) == aware


def test_default_review_template_carries_the_round_marker():
    template = markers.default_review_template("a" * 32, 4)
    assert markers.template_markers(template) == [markers.request_marker("a" * 32, 4)]
    assert markers.parse_request_marker(markers.request_marker("a" * 32, 4, "b" * 40)) == ("a" * 32, 4, "b" * 40)


def test_malformed_markers_and_keys_do_not_parse():
    run, sha = "a" * 32, "b" * 40
    good = markers.request_marker(run, 1, sha)
    for bad in (good.upper(), good.replace(" -->", "  -->"), good.replace("round=1", "round=01"), good + " "):
        assert markers.parse_request_marker(bad) is None
    key = markers.automation_key(policy.HOST, "octo/repo", 7, run)
    for bad in (
        key.replace("octo/repo", "Octo/repo"),
        key.replace("#7", "#07"),
        key + "0",
        key.replace("octo/repo", "octo/x.git"),
    ):
        assert markers.parse_automation_key(bad) is None
    assert markers.classify_issue_comment(good + good, run).kind == "anomaly"
    assert markers.classify_issue_comment("no markers here", run).kind == "none"


# --- each grammar's published pattern agrees with its code --------------------------------

GRAMMARS = {
    "SHA": (formats.SHA, common.Sha),
    "DIGEST": (formats.DIGEST, common.Digest),
    "RUN_ID": (formats.RUN_ID, common.RunId),
    "DECIMAL_ID": (formats.DECIMAL_ID, common.DecimalId),
    "NODE_ID": (formats.NODE_ID, common.NodeId),
    "REMOTE_NAME": (formats.REMOTE_NAME, common.RemoteName),
    "REPOSITORY": (formats.REPOSITORY, common.Repository),
    "TIMESTAMP": (formats.TIMESTAMP, common.Timestamp),
    "REQUEST_KEY": (formats.REQUEST_KEY, None),
    "FILTER_NAME": (formats.FILTER_NAME, None),
    "ARGUMENT": (formats.ARGUMENT, None),
}


def _near_misses(grammar: formats.Grammar) -> st.SearchStrategy[str]:
    """Strings of the grammar, and the same strings cut, extended or with one character changed."""
    members = st.from_regex(grammar.regex, fullmatch=True)
    edits = st.tuples(
        members, st.integers(0, 200), st.sampled_from(["", "A", "a", "0", ".", "-", "/", ":", " ", "é", "\x00", "git"])
    )
    return st.one_of(
        members,
        edits.map(lambda e: e[0][: e[1]] + e[2] + e[0][e[1] + 1 :]),
        edits.map(lambda e: e[0][: e[1]] + e[2] + e[0][e[1] :]),
        st.text(max_size=80),
    )


@pytest.mark.parametrize("name", sorted(GRAMMARS))
def test_published_pattern_agrees_with_the_code(name):
    grammar, field_type = GRAMMARS[name]
    schema = Draft202012Validator({"type": "string", **grammar.json_schema()})

    @given(_near_misses(grammar))
    def check(text: str) -> None:
        # Python's re.search lets `$` match before a final newline; JSON Schema's
        # ECMA-262 `$` does not. The code (fullmatch) follows ECMA-262.
        if text.endswith("\n"):
            return
        in_pattern = schema.is_valid(text)
        assert in_pattern == grammar.matches(text), text
        assert in_pattern == (re.fullmatch(grammar.regex, text) is not None)
        if field_type is None:
            return
        accepted = model_checker_accepts(field_type, text)
        if grammar is formats.TIMESTAMP:
            # The calendar is tier two: the code accepts a subset of the pattern.
            assert accepted == (in_pattern and formats.is_timestamp(text)), text
        else:
            assert accepted == in_pattern, text

    check()


# --- the observers use the same definitions --------------------------------------


@given(_near_misses(formats.TIMESTAMP))
def test_the_collector_passes_on_exactly_the_timestamps_the_models_accept(text):
    from observe.github.errors import GitHubObservationError
    from observe.github.fields import timestamp

    try:
        timestamp(text, "probe")
        observed = True
    except GitHubObservationError:
        observed = False
    assert observed == formats.is_timestamp(text)


def test_seven_or_more_fraction_digits_are_refused_on_both_sides():
    from observe.github.errors import GitHubObservationError
    from observe.github.fields import timestamp

    assert formats.is_timestamp("2026-11-29T10:00:00.123456Z")
    assert not formats.is_timestamp("2026-11-29T10:00:00.1234567Z")
    with pytest.raises(GitHubObservationError):
        timestamp("2026-11-29T10:00:00.1234567Z", "probe")


@given(
    st.sampled_from([".git", "git~1", ".GIT", "Git~1", ".gitattributes"]),
    st.sampled_from(["", ".", " ", ". .", ":stream", "\u200c", "\ufeff"]),
)
def test_git_metadata_names_agree_with_the_path_rule(name, suffix):
    from observe.git import paths

    assert paths.names_git_metadata is formats.names_git_metadata  # one definition, used by both
    component = name[:1] + suffix + name[1:] if suffix in ("\u200c", "\ufeff") else name + suffix
    assert formats.names_git_metadata(component) == (name.lower() != ".gitattributes")
    assert formats.path_problem(f"src/{component}") is not None


def test_remote_names_the_models_reject_are_refused_by_the_observer():
    assert not formats.REMOTE_NAME.matches("up.stream")
    assert not formats.REMOTE_NAME.matches("a" * 64)
    assert formats.REMOTE_NAME.matches("origin")


def test_repository_grammar_is_the_url_grammar():
    from observe.git.config import canonical_github_url, parse_github_https_url
    from observe.git.runner import GitObservationError

    assert parse_github_https_url("https://github.com/octo/repo.git") == "octo/repo"
    assert canonical_github_url("octo/repo") == "https://github.com/octo/repo.git"
    for bad in ("octo/repo.git", "Octo/repo", "octo/..", "-octo/repo"):
        assert not formats.REPOSITORY.matches(bad)
        with pytest.raises(GitObservationError):
            parse_github_https_url(f"https://github.com/{bad}.git")
        with pytest.raises(GitObservationError):
            canonical_github_url(bad)


# --- the directory digest ------------------------------------------------------------


def test_tree_digest_is_the_documented_concatenation(tmp_path):
    from observe.evaluator_digest import directory_digest
    from observe.git.paths import directory_sha256

    files = {"b/c.py": b"print(1)\n", "a.txt": b"", "b/\u00e9.txt": b"x"}
    for name, content in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_bytes(content)
    stream = b"".join(name.encode() + b"\0" + hashlib.sha256(files[name]).digest() for name in sorted(files))
    expected = hashlib.sha256(stream).hexdigest()
    assert tree_digest((name, hashlib.sha256(content).digest()) for name, content in files.items()) == expected
    assert directory_digest(tmp_path) == expected
    assert directory_sha256(str(tmp_path)) == expected
    with pytest.raises(ValueError):
        tree_digest([("a", b"x" * 32), ("a", b"y" * 32)])
    with pytest.raises(ValueError):
        tree_digest([("a", b"short")])
