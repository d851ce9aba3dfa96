"""Rules shared by every write plan: paths, path records, commands, the boundary."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Sequence
from typing import Any

from .. import policy
from ..errors import Violation, pointer
from ..models.plan import Command, ExecutionBoundary, PathRecord


def fixed_value_violations(document: Any, at: Callable[[str], str]) -> list[Violation]:
    """The policy values a document carries, whichever of them its schema has."""
    checks = (
        ("version", policy.MANIFEST_VERSION, "version-unsupported"),
        ("policy_schema_version", policy.POLICY_SCHEMA_VERSION, "policy-schema-version-unsupported"),
        ("host", policy.HOST, "host-not-policy"),
    )
    found = []
    for field, expected, code in checks:
        if field in type(document).field_names and getattr(document, field) != expected:
            found.append(Violation(code, at(field), f"observed {getattr(document, field)!r}, policy {expected!r}"))
    return found


def path_violations(paths: Sequence[str], records: Sequence[PathRecord], base: tuple[object, ...]) -> list[Violation]:
    found: list[Violation] = []
    if list(paths) != sorted(paths):
        found.append(Violation("paths-not-sorted", pointer(*base, "paths"), "paths must be sorted by code point"))
    if len(set(paths)) != len(paths):
        found.append(Violation("paths-not-unique", pointer(*base, "paths"), "paths must be unique"))
    record_paths = [record.path for record in records]
    if record_paths != sorted(record_paths):
        found.append(
            Violation("path-records-not-sorted", pointer(*base, "path_records"), "path_records must be sorted by path")
        )
    if sorted(record_paths) != sorted(paths) or len(set(record_paths)) != len(record_paths):
        found.append(
            Violation(
                "path-records-mismatch",
                pointer(*base, "path_records"),
                "path_records must name exactly the paths, one record each",
            )
        )
    for index, record in enumerate(records):
        if not record.inside_worktree:
            found.append(
                Violation(
                    "path-record-outside-worktree",
                    pointer(*base, "path_records", index, "inside_worktree"),
                    f"{record.path!r} resolves outside the worktree",
                )
            )
        if not record.outside_git_metadata:
            found.append(
                Violation(
                    "path-record-in-git-metadata",
                    pointer(*base, "path_records", index, "outside_git_metadata"),
                    f"{record.path!r} resolves into git metadata",
                )
            )
    return found


def _normalized_absolute(executable: str) -> bool:
    """An absolute path to a file, written the one normal way (no //, ., .. or trailing /)."""
    return (
        executable.startswith("/")
        and executable != "/"
        and posixpath.normpath(executable) == executable
        and not executable.startswith("//")
    )


def command_violations(commands: Sequence[Command], base: tuple[object, ...]) -> list[Violation]:
    found: list[Violation] = []
    for index, command in enumerate(commands):
        where = pointer(*base, "commands", index, "argv")
        if not command.argv:
            found.append(Violation("command-argv-empty", where, "argv must name at least the executable"))
        elif not _normalized_absolute(command.argv[0]):
            found.append(
                Violation(
                    "command-argv-not-absolute",
                    pointer(*base, "commands", index, "argv", 0),
                    f"executable {command.argv[0]!r} is not a normalized absolute path",
                )
            )
    return found


def boundary_violations(boundary: ExecutionBoundary, base: tuple[object, ...]) -> list[Violation]:
    """The two allowed forms of the execution boundary."""
    found: list[Violation] = []
    git = boundary.git
    if boundary.isolation == policy.ISOLATED:
        if boundary.risk_acceptance_sha256 is not None:
            found.append(
                Violation(
                    "risk-acceptance-not-null",
                    pointer(*base, "risk_acceptance_sha256"),
                    "the isolated form requires a null risk acceptance digest",
                )
            )
        if git.profile != policy.ISOLATED_PROFILE:
            found.append(
                Violation(
                    "boundary-profile-mismatch",
                    pointer(*base, "git", "profile"),
                    f"isolation {policy.ISOLATED!r} requires profile {policy.ISOLATED_PROFILE!r},"
                    f" observed {git.profile!r}",
                )
            )
        for name in policy.GIT_PROTECTIONS:
            if getattr(git, name) is not True:
                found.append(
                    Violation(
                        "boundary-protection-disabled",
                        pointer(*base, "git", name),
                        f"the isolated profile requires {name} true",
                    )
                )
        if git.active_clean_filters:
            found.append(
                Violation(
                    "boundary-clean-filters-active",
                    pointer(*base, "git", "active_clean_filters"),
                    f"the isolated profile requires no active clean filters, observed {git.active_clean_filters}",
                )
            )
    else:
        if boundary.risk_acceptance_sha256 is None:
            found.append(
                Violation(
                    "risk-acceptance-missing",
                    pointer(*base, "risk_acceptance_sha256"),
                    "explicit risk acceptance requires the acceptance record's digest",
                )
            )
        if git.profile != policy.EXPLICIT_RISK_PROFILE:
            found.append(
                Violation(
                    "boundary-profile-mismatch",
                    pointer(*base, "git", "profile"),
                    f"isolation {policy.EXPLICIT_RISK!r} requires profile {policy.EXPLICIT_RISK_PROFILE!r},"
                    f" observed {git.profile!r}",
                )
            )
    filters = git.active_clean_filters
    if filters != sorted(set(filters)):
        found.append(
            Violation(
                "clean-filters-not-sorted",
                pointer(*base, "git", "active_clean_filters"),
                "active_clean_filters must be sorted and unique",
            )
        )
    return found
