"""GitHub's own merge verdicts for a pull request, as GraphQL reports them.

``MERGE_STATE_FIELDS`` is selected on ``pullRequest`` in the first page of the
review-threads query (``observe/github/threads.py``), so it costs no request
and no point of its own. ``read_merge_state`` checks the answer's shape and
returns it in one plain object; what each value means for a gate is
``observe/github/gates.py``'s business. Enum values are kept as given: an
undocumented value is not a shape error, it maps to ``unknown`` in the gates.
references/github-observations.md documents the fields and their mapping.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from observe.github.fields import sha40, shape_error

# The commit status and check-run fields of one context; isRequired asks GitHub
# whether this very context (name and source) must pass before this PR merges.
_CONTEXT_FIELDS = """
              __typename
              ... on CheckRun { name status conclusion isRequired(pullRequestNumber: $number) }
              ... on StatusContext { context state isRequired(pullRequestNumber: $number) }"""

MERGE_STATE_FIELDS = """
      ... @include(if: $firstPage) {
        headRefOid
        isDraft
        mergeable
        mergeStateStatus
        reviewDecision
        isMergeQueueEnabled
        isInMergeQueue
        statusCheckRollup {
          id
          state
          contexts(first: 100) {
            totalCount
            pageInfo { hasNextPage endCursor }
            nodes {{context_fields}
            }
          }
        }
      }""".replace("{context_fields}", _CONTEXT_FIELDS)

# More than 100 contexts continue through the rollup node (rare; one request per 100).
ROLLUP_CONTEXTS_QUERY = """
query($id: ID!, $cursor: String, $number: Int!) {
  rateLimit { cost remaining }
  node(id: $id) {
    ... on StatusCheckRollup {
      contexts(first: 100, after: $cursor) {
        totalCount
        pageInfo { hasNextPage endCursor }
        nodes {{context_fields}
        }
      }
    }
  }
}
""".replace("{context_fields}", _CONTEXT_FIELDS)


@dataclass(frozen=True)
class RollupContext:
    """One check run or commit status of the head commit."""

    kind: str  # "CheckRun" | "StatusContext" | another __typename (mapped to unknown)
    name: str
    status: str | None  # CheckRun status (CheckStatusState)
    conclusion: str | None  # CheckRun conclusion (CheckConclusionState), null until completed
    state: str | None  # StatusContext state (StatusState)
    is_required: bool


@dataclass(frozen=True)
class MergeState:
    head_sha: str
    is_draft: bool
    mergeable: str  # MergeableState
    merge_state_status: str  # MergeStateStatus
    review_decision: str | None  # PullRequestReviewDecision, null when no review is required
    merge_queue_enabled: bool
    in_merge_queue: bool
    rollup_state: str | None  # StatusState of the whole rollup; None when there is no rollup
    contexts: tuple[RollupContext, ...]


def _typed(obj: dict[str, Any], key: str, kinds: tuple[type, ...], where: str, nullable: bool = False) -> Any:
    value = obj.get(key)
    if value is None and nullable:
        return None
    if not isinstance(value, kinds) or (bool not in kinds and isinstance(value, bool)):
        raise shape_error(f"{where}: {key} is {type(value).__name__}, expected {'/'.join(k.__name__ for k in kinds)}")
    return value


def read_context(node: Any) -> RollupContext:
    where = "statusCheckRollup context"
    if not isinstance(node, dict):
        raise shape_error(f"{where}: a node is a {type(node).__name__}, not an object")
    kind = _typed(node, "__typename", (str,), where)
    is_required = _typed(node, "isRequired", (bool,), where)
    if kind == "CheckRun":
        return RollupContext(
            kind,
            _typed(node, "name", (str,), where),
            _typed(node, "status", (str,), where),
            _typed(node, "conclusion", (str,), where, nullable=True),
            None,
            is_required,
        )
    if kind == "StatusContext":
        context, state = _typed(node, "context", (str,), where), _typed(node, "state", (str,), where)
        return RollupContext(kind, context, None, None, state, is_required)
    return RollupContext(kind, "", None, None, None, is_required)


def read_merge_state(pull: Any, contexts: list[Any]) -> MergeState:
    """The checked merge-state fields; ``contexts`` are every node of the rollup's contexts."""
    where = "pull request merge state"
    if not isinstance(pull, dict):
        raise shape_error(f"{where}: the first review-threads page has no pull request fields")
    rollup = _typed(pull, "statusCheckRollup", (dict,), where, nullable=True)
    rollup_state = None if rollup is None else _typed(rollup, "state", (str,), f"{where} statusCheckRollup")
    if rollup is None and contexts:
        raise shape_error(f"{where}: contexts without a statusCheckRollup")
    return MergeState(
        head_sha=sha40(pull.get("headRefOid"), f"{where} headRefOid"),
        is_draft=_typed(pull, "isDraft", (bool,), where),
        mergeable=_typed(pull, "mergeable", (str,), where),
        merge_state_status=_typed(pull, "mergeStateStatus", (str,), where),
        review_decision=_typed(pull, "reviewDecision", (str,), where, nullable=True),
        merge_queue_enabled=_typed(pull, "isMergeQueueEnabled", (bool,), where),
        in_merge_queue=_typed(pull, "isInMergeQueue", (bool,), where),
        rollup_state=rollup_state,
        contexts=tuple(read_context(node) for node in contexts),
    )
