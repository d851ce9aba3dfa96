"""Keep a credential out of everything a command prints.

All three command lines (the evaluator's, the collector's and the hands')
pass every line they print through ``redact`` with the tokens they know of
(references/collector.md, "What is never printed"). A
token can reach output in more shapes than one: as itself, URL-encoded (a
query string, a proxy's log line), base64-encoded alone or as the Basic
credential ``x-access-token:TOKEN`` that git and GitHub use, or JSON-escaped
inside a message. ``secret_forms`` lists them all; ``redact`` replaces every
one. This module is pure: it never looks for tokens itself.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable
from urllib.parse import quote, quote_plus

REDACTED = "[REDACTED]"
# Prefixes a token is base64-encoded with: alone, and as git's Basic credential.
_BASE64_PREFIXES = ("", "x-access-token:")


def secret_forms(secret: str) -> set[str]:
    """Every text form of ``secret`` an output could carry (empty for an empty secret)."""
    if not secret:
        return set()
    forms = {
        secret,
        quote(secret, safe=""),
        quote_plus(secret, safe=""),
        json.dumps(secret)[1:-1],
        json.dumps(secret, ensure_ascii=False)[1:-1],
    }
    forms.add(json.dumps(secret)[1:-1].replace("/", "\\/"))  # JSON may escape '/'
    for prefix in _BASE64_PREFIXES:
        data = (prefix + secret).encode("utf-8")
        for encode in (base64.b64encode, base64.urlsafe_b64encode):
            # Padded, and without padding: the same text may end a longer base64 string.
            encoded = encode(data).decode("ascii")
            forms |= {encoded, encoded.rstrip("=")}
    return forms


def _all_forms(secrets: Iterable[str]) -> list[str]:
    forms = set().union(*(secret_forms(secret) for secret in secrets))
    return sorted(forms, key=lambda form: (-len(form), form))  # longest first: no form is cut by a shorter one


def contains_secret(text: str, secrets: Iterable[str]) -> bool:
    return any(form in text for form in _all_forms(secrets))


def redact(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every form of every secret replaced by ``[REDACTED]``."""
    for form in _all_forms(secrets):
        text = text.replace(form, REDACTED)
    return text
