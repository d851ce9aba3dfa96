"""Pieces shared by every write plan: commands, path records, the execution boundary."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from .. import policy
from ..errors import describe
from .common import Digest, RepoPath, Strict


def _argument(value: str) -> str:
    if "\x00" in value:
        raise PydanticCustomError("command-argv-invalid", "argument {observed} contains a NUL byte", {"observed": describe(value)})
    return value


Argument = Annotated[str, AfterValidator(_argument)]
FilterName = Annotated[str, Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")]


class Command(Strict):
    argv: list[Argument]
    definition_sha256: Digest


class PathRecord(Strict):
    inside_worktree: bool
    lstat_chain_sha256: Digest
    outside_git_metadata: bool
    path: RepoPath
    resolved_target_sha256: Digest


class GitBoundary(Strict):
    active_clean_filters: list[FilterName]
    attributes_snapshot_sha256: Digest
    config_snapshot_sha256: Digest
    credential_strategy: Literal["gh-cli-https"]
    external_diff_disabled: bool
    fsmonitor_disabled: bool
    git_metadata_snapshot_sha256: Digest
    hooks_disabled: bool
    invocation_sha256: Digest
    profile: Literal["sanitized-gh-https-v1", "explicit-risk-acceptance-v1"]
    protect_hfs_enabled: bool
    protect_ntfs_enabled: bool
    protocol_restricted: bool
    signing_disabled: bool
    textconv_disabled: bool
    transport_url_sha256: Digest


class ExecutionBoundary(Strict):
    filesystem_read_scope_sha256: Digest
    filesystem_write_scope_sha256: Digest
    git: GitBoundary
    isolation: Literal["no-network-minimal-env-checkout-only", "explicit-risk-acceptance"]
    risk_acceptance_sha256: Digest | None


assert set(policy.GIT_PROTECTIONS) <= set(GitBoundary.model_fields), "policy and model disagree"
