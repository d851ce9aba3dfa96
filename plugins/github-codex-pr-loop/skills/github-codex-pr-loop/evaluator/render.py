"""Templates: review-request template rules, rendering, the automation prompt."""

from __future__ import annotations

import re
from typing import Any

from . import markers as loop_markers
from . import policy
from .canonical import canonical_text
from .errors import Violation
from .formats import SHA

_PLACEHOLDER = re.compile(r"\{\{[^{}]*\}\}")
# The mention itself, not a longer handle that starts with it (@codexbot).
_MENTION = re.compile(r"(?<![\w@])@codex(?![\w-])")


def review_template_violations(template: str, run_id: str, round_number: int, path: str) -> list[Violation]:
    """The one-placeholder rules for a review-request template (references/manifest-schema.md)."""
    found: list[Violation] = []
    if not _MENTION.search(template):
        found.append(Violation("review-template-missing-mention", path, "template does not contain @codex"))
    placeholders = _PLACEHOLDER.findall(template)
    count = placeholders.count(policy.FINAL_HEAD_PLACEHOLDER)
    if count != 1:
        found.append(
            Violation(
                "review-template-placeholder-count",
                path,
                f"{policy.FINAL_HEAD_PLACEHOLDER} appears {count} times; expected exactly 1",
            )
        )
    unknown = sorted(set(placeholders) - {policy.FINAL_HEAD_PLACEHOLDER})
    if unknown:
        found.append(
            Violation(
                "review-template-unknown-placeholder",
                path,
                f"unsupported placeholders {unknown}; only {policy.FINAL_HEAD_PLACEHOLDER} is allowed",
            )
        )
    stripped = _PLACEHOLDER.sub("", template)
    if "{{" in stripped or "}}" in stripped:
        found.append(
            Violation("review-template-stray-braces", path, "template has a '{{' or '}}' outside a placeholder")
        )
    expected = loop_markers.request_marker(run_id, round_number)
    markers = loop_markers.template_markers(template)
    if not markers:
        found.append(
            Violation("review-template-marker-missing", path, f"template has no request marker; expected {expected!r}")
        )
    elif len(markers) > 1:
        found.append(
            Violation(
                "review-template-marker-count",
                path,
                f"template has {len(markers)} loop markers; expected exactly the one request marker",
            )
        )
    elif markers[0] != expected:
        found.append(
            Violation(
                "review-template-marker-mismatch", path, f"marker {markers[0]!r} is not the canonical {expected!r}"
            )
        )
    return found


def render_review_body(template: str, final_head_sha: str) -> str:
    """Replace only the one placeholder with a verified 40-hex SHA."""
    if not SHA.matches(final_head_sha):
        raise ValueError("final head SHA must be 40 lowercase hex digits")
    if template.count(policy.FINAL_HEAD_PLACEHOLDER) != 1:
        raise ValueError("template must hold exactly one final-head placeholder")
    return template.replace(policy.FINAL_HEAD_PLACEHOLDER, final_head_sha)


def render_prompt(automation_key: str, bootstrap_snapshot: dict[str, Any]) -> str:
    """The evaluator-owned v1 prompt with its two placeholders filled, once each."""
    head, rest = policy.AUTOMATION_PROMPT_TEMPLATE_V1.split(policy.AUTOMATION_KEY_PLACEHOLDER)
    middle, tail = rest.split(policy.CHECKPOINT_PLACEHOLDER)
    # Splitting rather than str.replace keeps a placeholder-like string inside
    # the checkpoint JSON from being substituted a second time.
    return head + automation_key + middle + canonical_text(bootstrap_snapshot) + tail
