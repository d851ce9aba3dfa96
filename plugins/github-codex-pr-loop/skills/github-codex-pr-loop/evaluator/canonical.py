"""Strict JSON parsing, canonical bytes and SHA-256 digests.

Parsing accepts a deliberately small domain: one UTF-8 JSON object with no BOM,
no duplicate keys, no NaN or Infinity, no fractional or exponent numbers, no
integer beyond +/-(2**53 - 1), no lone surrogate, and bounded size and depth.
On that domain ``canonical_bytes`` equals RFC 8785 (JCS) output, because every
integer is exactly representable and every key our schemas admit is ASCII
(see references/canonical-json.md).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from typing import Any

from . import policy
from .errors import Rejected, Violation, pointer

_BOM = b"\xef\xbb\xbf"


def canonical_bytes(value: Any) -> bytes:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def canonical_text(value: Any) -> str:
    return canonical_bytes(value).decode("utf-8")


def digest(value: Any) -> str:
    """Lowercase hex SHA-256 of a JSON value's canonical bytes."""
    return hashlib.sha256(canonical_bytes(value)).hexdigest()


def text_digest(text: str) -> str:
    """Lowercase hex SHA-256 of a string's exact UTF-8 bytes (no normalization)."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tree_digest(entries: Iterable[tuple[str, bytes]]) -> str:
    """The directory digest of (relative path, raw 32-byte SHA-256 of the file) pairs.

    For each entry in path order (code point order, which is UTF-8 byte order):
    the path's UTF-8 bytes, a NUL, the raw file digest; the result is the hex
    SHA-256 of that concatenation (references/digests.md). A path never holds
    a NUL and each file digest is 32 bytes, so the concatenation is unambiguous.
    A file name that is not UTF-8 arrives surrogate-escaped (as ``os`` gives it)
    and contributes its original bytes. Walking the directory is the caller's.
    """
    items = sorted(entries)
    stream = hashlib.sha256()
    for index, (path, file_sha256) in enumerate(items):
        if "\0" in path or len(file_sha256) != 32:
            raise ValueError(f"entry {path!r} is not a (path without NUL, 32-byte digest) pair")
        if index and items[index - 1][0] == path:
            raise ValueError(f"path {path!r} appears more than once")
        stream.update(path.encode("utf-8", "surrogateescape") + b"\0" + file_sha256)
    return stream.hexdigest()


class DuplicateKey(ValueError):
    """A JSON object names a key twice: no reader may pick one of the values."""

    def __init__(self, key: str):
        super().__init__(f"object key {key!r} appears more than once")
        self.key = key


def unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """The ``object_pairs_hook`` of every JSON reader of the project: a repeated key is an error."""
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise DuplicateKey(key)
        result[key] = value
    return result


class _Reject(Exception):
    """Internal: carries one violation out of a json hook."""

    def __init__(self, code: str, message: str):
        self.violation = Violation(code, "", message)


def _reject_constant(name: str) -> Any:
    raise _Reject("json-non-finite-number", f"{name} is not a JSON number this evaluator accepts")


def _reject_fraction(text: str) -> Any:
    raise _Reject(
        "json-fractional-number", f"number {text[:40]} has a fraction or exponent; only integers are accepted"
    )


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > 16:
        raise _Reject("json-integer-out-of-range", f"integer {text[:40]}... is outside +/-(2**53 - 1)")
    value = int(text)
    if abs(value) > policy.MAX_SAFE_INTEGER:
        raise _Reject("json-integer-out-of-range", f"integer {value} is outside +/-(2**53 - 1)")
    return value


def _has_lone_surrogate(text: str) -> bool:
    # json.loads turns an escaped lone surrogate into a str code point 0xD800-0xDFFF;
    # a valid pair has already been combined into one astral code point.
    return any(0xD800 <= ord(ch) <= 0xDFFF for ch in text) if not text.isascii() else False


def _check_tree(value: Any) -> None:
    """Depth and lone-surrogate checks, iteratively (no recursion limit to hit)."""
    stack: list[tuple[Any, tuple[object, ...]]] = [(value, ())]
    while stack:
        node, path = stack.pop()
        if len(path) > policy.MAX_DEPTH:
            raise Rejected([Violation("json-too-deep", "", f"nesting deeper than {policy.MAX_DEPTH} levels")])
        if isinstance(node, str):
            if _has_lone_surrogate(node):
                raise Rejected(
                    [Violation("json-lone-surrogate", pointer(*path), "string contains a lone UTF-16 surrogate")]
                )
        elif isinstance(node, dict):
            for key, child in node.items():
                if _has_lone_surrogate(key):
                    raise Rejected(
                        [
                            Violation(
                                "json-lone-surrogate", pointer(*path), "object key contains a lone UTF-16 surrogate"
                            )
                        ]
                    )
                stack.append((child, path + (key,)))
        elif isinstance(node, list):
            stack.extend((child, path + (index,)) for index, child in enumerate(node))


def parse_document(raw: bytes) -> dict[str, Any]:
    """Parse one strict JSON object, or raise ``Rejected`` with exactly one violation."""
    if len(raw) > policy.MAX_DOCUMENT_BYTES:
        raise Rejected(
            [Violation("json-too-large", "", f"document exceeds the limit of {policy.MAX_DOCUMENT_BYTES} bytes")]
        )
    if raw.startswith(_BOM):
        raise Rejected([Violation("json-bom", "", "document starts with a UTF-8 byte order mark")])
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise Rejected([Violation("json-invalid-utf8", "", f"invalid UTF-8 at byte {error.start}")]) from error
    if not text.strip():
        raise Rejected([Violation("json-empty", "", "document is empty")])
    try:
        value = json.loads(
            text,
            object_pairs_hook=unique_pairs,
            parse_constant=_reject_constant,
            parse_float=_reject_fraction,
            parse_int=_bounded_int,
        )
    except _Reject as error:
        raise Rejected([error.violation]) from None
    except DuplicateKey as error:
        raise Rejected([Violation("json-duplicate-key", "", str(error))]) from None
    except RecursionError:
        raise Rejected([Violation("json-too-deep", "", f"nesting deeper than {policy.MAX_DEPTH} levels")]) from None
    except json.JSONDecodeError as error:
        raise Rejected([Violation("json-syntax", "", _syntax_message(error))]) from None
    if not isinstance(value, dict):
        raise Rejected(
            [Violation("json-not-object", "", f"top-level value is a {type(value).__name__}, not an object")]
        )
    _check_tree(value)
    return value


def _syntax_message(error: json.JSONDecodeError) -> str:
    """Where the syntax error is, in words: "Unterminated string starting at line 1 column 9"."""
    # Some of json's messages already end in "at" ("... starting at"): never "at at".
    joiner = " " if error.msg.endswith(" at") else " at "
    return f"{error.msg}{joiner}line {error.lineno} column {error.colno}"
