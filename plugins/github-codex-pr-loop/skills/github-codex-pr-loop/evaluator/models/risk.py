"""The canonical risk acceptance record that ``risk_acceptance_sha256`` binds.

The boundary binds "the canonical acceptance record" by digest; this model
defines it (references/manifest-schema.md, "Risk acceptance record", explains each field).
"""

from typing import Literal

from .. import policy
from .common import Digest, PositiveInt, RunId, Strict, Timestamp
from .plan import Command, GitBoundary


class AcceptedBoundary(Strict):
    """The execution boundary the user accepted, without the digest that binds this record."""

    filesystem_read_scope_sha256: Digest
    filesystem_write_scope_sha256: Digest
    git: GitBoundary
    isolation: policy.ExplicitRiskForm


class RiskAcceptance(Strict):
    accepted_at: Timestamp
    accepted_by_user_id: PositiveInt
    commands: list[Command]
    execution_boundary: AcceptedBoundary
    kind: policy.ExplicitRiskForm
    run_id: RunId
    unavailable_guarantees: list[str]
    version: Literal[1]
