"""The evaluator's vocabularies, written once: its checks, its actions, its plans' operations.

``ActionName`` types the keys of the action registry
(``evaluator.actions.ACTIONS``) and ``CleanupStopName`` its cleanup stops that
carry no payload of their own; ``OperationName`` types the operations the
plan rules require (``expected_operations`` in evaluator/rules/initial.py,
``expected_remediation_operations`` and ``expected_finalization_operations``
in evaluator/rules/manifests.py). The hands import these same names
(act/), so an action or operation the evaluator does not know is a type
error there; tests/test_verdicts.py holds the registry's keys and the
rules' operations equal to them. Imports nothing.
"""

from typing import Literal

CheckName = Literal["initial", "prompt", "state"]

ActionName = Literal[
    "wait",
    "plan-remediation",
    "plan-finalization",
    "await-approval",
    "claim-plan",
    "execute-remediation",
    "execute-finalization",
    "finish-finalization",
    "done",
    "stop-pr-closed",
    "request-timeout",
    "stop-max-rounds",
    "stop-recurring-finding",
    "stop-reviewer-unavailable",
    "state-inconsistency",
    "report",
]
CleanupStopName = Literal["stop-pr-closed", "request-timeout", "stop-max-rounds", "stop-recurring-finding"]

OperationName = Literal[
    # the initial plan
    "fetch-base",
    "create-branch",
    "run-validation",
    "stage-files",
    "commit",
    "push",
    "reuse-pr",
    "create-pr",
    "request-codex-review",
    "bootstrap-automation",
    # a remediation plan (with run-validation, commit, push, request-codex-review)
    "edit-files",
    "reply-to-codex-threads",
    "update-automation",
    # a finalization plan
    "mark-draft-ready",
    "resolve-codex-threads",
    "delete-owned-automation",
]
