"""Strict parsing and canonical bytes (references/canonical-json.md)."""

from __future__ import annotations

import json

import pytest
import rfc8785
from hypothesis import given, settings
from hypothesis import strategies as st

from evaluator import policy
from evaluator.canonical import canonical_bytes, digest, parse_document, text_digest
from evaluator.errors import Rejected
from tests.helpers import examples

# The accepted domain: integers within +/-(2**53-1), no floats, no lone surrogates,
# ASCII object keys (every key a schema admits is ASCII; see canonical-json.md).
_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=20)
_keys = st.text(st.characters(min_codepoint=0, max_codepoint=0x7F), max_size=12)
_scalars = st.none() | st.booleans() | st.integers(-policy.MAX_SAFE_INTEGER, policy.MAX_SAFE_INTEGER) | _text
_values = st.recursive(
    _scalars, lambda inner: st.lists(inner, max_size=5) | st.dictionaries(_keys, inner, max_size=5), max_leaves=30
)


@settings(max_examples=examples(4))
@given(_values)
def test_canonical_bytes_equal_rfc8785(value):
    assert canonical_bytes(value) == rfc8785.dumps(value)


@settings(max_examples=examples(2))
@given(st.dictionaries(_keys, _values, max_size=6))
def test_parse_of_canonical_bytes_round_trips(value):
    assert parse_document(canonical_bytes(value)) == value


def test_digest_is_sha256_of_canonical_bytes():
    import hashlib

    value = {"b": [1, "é"], "a": None}
    assert canonical_bytes(value) == '{"a":null,"b":[1,"é"]}'.encode()
    assert digest(value) == hashlib.sha256(canonical_bytes(value)).hexdigest()
    assert text_digest("é\n") == hashlib.sha256("é\n".encode()).hexdigest()


@pytest.mark.parametrize(
    "raw, code",
    [
        (b"\xef\xbb\xbf{}", "json-bom"),
        (b'{"a": "\xff"}', "json-invalid-utf8"),
        (b"", "json-empty"),
        (b"  \n", "json-empty"),
        (b'{"a": 1, "a": 1}', "json-duplicate-key"),
        (b'{"a": {"b": [{"c": 1, "c": 2}]}}', "json-duplicate-key"),
        (b'{"a": NaN}', "json-non-finite-number"),
        (b'{"a": -Infinity}', "json-non-finite-number"),
        (b'{"a": 1.0}', "json-fractional-number"),
        (b'{"a": 1e3}', "json-fractional-number"),
        (b'{"a": 9007199254740992}', "json-integer-out-of-range"),
        (b'{"a": -9007199254740992}', "json-integer-out-of-range"),
        (b'{"a": 1' + b"0" * 5000 + b"}", "json-integer-out-of-range"),
        (b'{"a": "\\ud800"}', "json-lone-surrogate"),
        (b'{"\\udfff": 1}', "json-lone-surrogate"),
        (b"[]", "json-not-object"),
        (b'"text"', "json-not-object"),
        (b"42", "json-not-object"),
        (b"null", "json-not-object"),
        (b"{", "json-syntax"),
        (b'{"a": 1} {}', "json-syntax"),
        (b"{'a': 1}", "json-syntax"),
        (b"[" * 100_000, "json-too-deep"),
        (b'{"a":' * 40 + b"1" + b"}" * 40, "json-too-deep"),
    ],
)
def test_rejects_outside_the_domain(raw, code):
    with pytest.raises(Rejected) as caught:
        parse_document(raw)
    assert [v.code for v in caught.value.violations] == [code]


def test_accepts_boundary_integers_and_valid_pairs():
    value = parse_document(b'{"max": 9007199254740991, "min": -9007199254740991, "pair": "\\ud83d\\ude80"}')
    assert value == {"max": policy.MAX_SAFE_INTEGER, "min": -policy.MAX_SAFE_INTEGER, "pair": "🚀"}


def test_oversized_document_is_rejected_before_parsing():
    raw = b'{"a": "' + b"x" * policy.MAX_DOCUMENT_BYTES + b'"}'
    with pytest.raises(Rejected) as caught:
        parse_document(raw)
    assert caught.value.violations[0].code == "json-too-large"


def test_canonical_text_matches_design_expression():
    value = {"z": "\u2028\x7f\x01", "a": [True, False]}
    expected = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    assert canonical_bytes(value) == expected
