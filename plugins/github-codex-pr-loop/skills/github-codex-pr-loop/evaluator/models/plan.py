"""Pieces shared by every write plan: commands, path records, the execution boundary."""

from typing import Annotated

from .. import policy
from ..errors import describe
from ..formats import ARGUMENT, FILTER_NAME
from .common import Check, Digest, RepoPath, Strict


def _argument_problem(value: str) -> str | None:
    return None if ARGUMENT.matches(value) else f"argument {describe(value)} contains a NUL byte"


def _filter_name_problem(value: str) -> str | None:
    return None if FILTER_NAME.matches(value) else f"String should match pattern '{FILTER_NAME.json_pattern}'"


Argument = Annotated[str, Check("command-argv-invalid", _argument_problem)]
FilterName = Annotated[str, Check("invalid-value", _filter_name_problem)]


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
if not set(policy.GIT_PROTECTIONS) <= set(GitBoundary.field_names):
    raise ImportError("policy.GIT_PROTECTIONS names a field GitBoundary does not have")
