"""Pieces shared by every write plan: commands, path records, the execution boundary."""

from typing import Annotated

from pydantic import AfterValidator, Field
from pydantic_core import PydanticCustomError

from .. import policy
from ..errors import describe
from ..formats import ARGUMENT, FILTER_NAME
from .common import Digest, RepoPath, Strict


def _argument(value: str) -> str:
    if not ARGUMENT.matches(value):
        message = "argument {observed} contains a NUL byte"
        raise PydanticCustomError("command-argv-invalid", message, {"observed": describe(value)})
    return value


Argument = Annotated[str, AfterValidator(_argument)]
FilterName = Annotated[str, Field(pattern=FILTER_NAME.json_pattern)]


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
    credential_strategy: policy.CredentialStrategy
    external_diff_disabled: bool
    fsmonitor_disabled: bool
    git_metadata_snapshot_sha256: Digest
    hooks_disabled: bool
    invocation_sha256: Digest
    profile: policy.GitProfile
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
    isolation: policy.Isolation
    risk_acceptance_sha256: Digest | None


# Each protection policy names is a boolean field of the boundary, checked at
# import (a real check: it must hold under ``python -O`` too).
if not set(policy.GIT_PROTECTIONS) <= set(GitBoundary.model_fields):
    raise ImportError("policy.GIT_PROTECTIONS names a field GitBoundary does not have")
