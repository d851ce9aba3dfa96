"""The git runner: the ``sanitized-gh-https-v1`` profile and the one error of git observation.

Why a module of its own: this is the only place the skill starts a git process
(the observer's reads and the hands' writes, act/edge/gitops.py, alike). It
holds the environment built from nothing, the fixed ``-c`` overrides and
option lists, ``GitRunner`` (timeouts, no shell, redacted messages), and the
pure functions that read an argv back into the spec's protection booleans and
credential strategy. ``GitObservationError`` (its codes are ``GIT_CODES`` in
observe/errors.py) and the two low-level helpers every git module shares
(strict UTF-8 decoding, file content digest) live here because this module
sits at the bottom of the import graph: ``config`` and ``paths``
import from it, it imports from neither. The boundary is
described in references/git-execution-boundary.md.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import signal
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from evaluator import policy
from observe.errors import GIT_CODES, ObserveError
from observe.network import Network

PROFILE = policy.ISOLATED_PROFILE
FIXED_PATH = "/usr/bin:/bin"
DEFAULT_TIMEOUT_SECONDS = 120.0
HOME_PLACEHOLDER = "<empty-directory>"
SECRET_PLACEHOLDER = "<present>"
# Variables the gh credential helper may need on network commands; recorded by name only.
CREDENTIAL_VARIABLES = ("GH_TOKEN", "GITHUB_TOKEN", "GH_CONFIG_DIR")
# The commit identity, given to the commit explicitly (the user's global config is never read by git).
IDENTITY_VARIABLES = ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL")

BASE_ENVIRONMENT = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_ASKPASS": "",
    "GIT_ALLOW_PROTOCOL": "https",
    "GIT_PROTOCOL_FROM_USER": "0",
    "LC_ALL": "C",
    "PATH": FIXED_PATH,
    "GIT_PAGER": "cat",
    "GIT_EDITOR": "false",
    # --no-replace-objects leaves grafts alone: an empty graft file keeps info/grafts from adding parents.
    "GIT_GRAFT_FILE": "/dev/null",
}

# Every program a signature creation or check can start, pinned to a path exec refuses.
SIGNATURE_PROGRAMS = (
    "gpg.program",
    "gpg.openpgp.program",
    "gpg.x509.program",
    "gpg.ssh.program",
    "gpg.ssh.defaultKeyCommand",
)
DISABLED_PROGRAM = "/dev/null"

FIXED_OVERRIDES = (
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.protectHFS=true",
    "core.protectNTFS=true",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "push.gpgSign=false",
    "core.askPass=",
    "core.attributesFile=/dev/null",
    "gc.auto=0",
    "maintenance.auto=false",
    "transfer.fsckObjects=true",
    "fetch.fsckObjects=true",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "push.recurseSubmodules=no",
    # Fixed quoting of non-ASCII paths, so diff bytes do not depend on repository config.
    "core.quotePath=true",
    # A repository commit-graph is trusted for parents: a forged one could invent ancestry.
    "core.commitGraph=false",
    # With alternates, fetch negotiation runs this program through the shell; exec refuses /dev/null.
    f"core.alternateRefsCommand={DISABLED_PROGRAM}",
    # Signature checks run gpg.program: git log runs it when log.showSignature is set.
    "log.showSignature=false",
    *(f"{key}={DISABLED_PROGRAM}" for key in SIGNATURE_PROGRAMS),
    # The empty value drops every helper read so far; only gh answers, only for github.com.
    "credential.helper=",
)
OBSERVATION_OPTIONS = ("--no-optional-locks",)
# Every option that changes diff bytes is pinned, so the digest depends on content only.
DIFF_OPTIONS = (
    "--binary",
    "--full-index",
    "--no-ext-diff",
    "--no-textconv",
    "--no-color",
    "--no-renames",
    "--no-relative",
    "--ignore-submodules=dirty",
    "--submodule=short",
    "--src-prefix=a/",
    "--dst-prefix=b/",
    "--unified=3",
    "--inter-hunk-context=0",
    "--diff-algorithm=myers",
    "--indent-heuristic",
    "-O/dev/null",
)
STATUS_OPTIONS = (
    "--porcelain=v2",
    "-z",
    "--untracked-files=all",
    "--ignored=no",
    "--ignore-submodules=dirty",
    "--no-renames",
)

_DRIVER_COMMANDS = ("clean", "smudge", "process")
# Subcommands that, with the options the observer gives them, never read work-tree content, so
# never start a filter driver. Every other subcommand is bracketed by the config check.
DRIVER_FREE_SUBCOMMANDS = frozenset(
    {
        "check-attr",
        "check-ref-format",
        "config",
        "for-each-ref",
        "merge-base",
        "rev-parse",
        "symbolic-ref",
        "version",
    }
)
CONFIG_LISTING = ("config", "--list", "--show-scope", "--show-origin", "-z", "--no-includes")


class GitObservationError(ObserveError):
    """The one error of git observation: a code from ``GIT_CODES`` and a message without secrets."""

    codes = GIT_CODES


# --- the runner ------------------------------------------------------------


@dataclass(frozen=True)
class GitRunner:
    """Runs git with the sanitized profile. Holds no state besides its fixed inputs."""

    git_path: str
    gh_path: str
    git_dir: str
    worktree: str
    home: str
    filter_drivers: tuple[str, ...] = ()
    credential_env: Mapping[str, str] = field(default_factory=dict, repr=False)  # secrets: never in a repr
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    # SHA-256 of the config listing the runner was built for; once set, every command that
    # could start a filter driver runs only between two listings with exactly this digest.
    config_listing_sha256: str | None = None
    # The route to github.com (proxy, extra CA); its settings join the overrides and the
    # invocation document, so the boundary records the route git uses.
    network: Network = field(default_factory=Network)

    def overrides(self) -> list[str]:
        helper = f"credential.https://github.com.helper=!{self.gh_path} auth git-credential"
        neutralized = [f"filter.{name}.{key}=" for name in self.filter_drivers for key in _DRIVER_COMMANDS]
        return [*FIXED_OVERRIDES, helper, *neutralized, *self.network.git_overrides()]

    def argv_prefix(self) -> list[str]:
        argv = [self.git_path, f"--git-dir={self.git_dir}", f"--work-tree={self.worktree}"]
        # Literal pathspecs: a path is never read as glob or magic. No replace refs:
        # refs/replace/* could otherwise make a diff describe other objects.
        argv += ["--literal-pathspecs", "--no-replace-objects"]
        for item in self.overrides():
            argv += ["-c", item]
        return argv

    def environment(
        self, *, network: bool = False, index_file: str | None = None, identity: Mapping[str, str] | None = None
    ) -> dict[str, str]:
        env = dict(BASE_ENVIRONMENT, HOME=self.home)
        if index_file is not None:
            env["GIT_INDEX_FILE"] = index_file
        if network:
            env.update(self.credential_env)
        if identity:
            if not set(identity) <= set(IDENTITY_VARIABLES):
                raise ValueError(f"identity variables must be among {IDENTITY_VARIABLES}")  # a bug, never input
            env.update(identity)
        return env

    def invocation_document(self, git_version: str) -> dict:
        """What invocation_sha256 binds: argv, environment (secrets by name), tools."""
        return {
            "argv_prefix": self.argv_prefix(),
            "credential_environment": {name: SECRET_PLACEHOLDER for name in sorted(self.credential_env)},
            "diff_options": list(DIFF_OPTIONS),
            "environment": dict(BASE_ENVIRONMENT, HOME=HOME_PLACEHOLDER),
            "gh": {"path": self.gh_path, "sha256": _file_sha256(self.gh_path)},
            "git": {"path": self.git_path, "sha256": _file_sha256(self.git_path), "version": git_version},
            "network": self.network.document(),
            "observation_options": list(OBSERVATION_OPTIONS),
            "profile": PROFILE,
            "status_options": list(STATUS_OPTIONS),
            "timeout_milliseconds": math.ceil(self.timeout * 1000),  # an integer: canonical JSON has no floats
        }

    def run(
        self,
        args: Sequence[str],
        *,
        stdin: bytes = b"",
        ok_codes: Iterable[int] = (0,),
        network: bool = False,
        index_file: str | None = None,
        identity: Mapping[str, str] | None = None,
    ) -> tuple[int, bytes]:
        guarded = self.config_listing_sha256 is not None and _subcommand(args) not in DRIVER_FREE_SUBCOMMANDS
        if guarded:
            self._require_unchanged_config("before")
        result = self._run(
            args, stdin=stdin, ok_codes=ok_codes, network=network, index_file=index_file, identity=identity
        )
        if guarded:
            self._require_unchanged_config("after")
        return result

    def config_listing(self) -> bytes:
        """``git config --list`` with scopes and origins: reads files, starts no repository program."""
        return self._run(CONFIG_LISTING)[1]

    def _require_unchanged_config(self, when: str) -> None:
        if hashlib.sha256(self.config_listing()).hexdigest() != self.config_listing_sha256:
            message = f"the repository config changed {when} a command that could start a filter driver"
            raise GitObservationError("git-config-changed", message)

    def _run(
        self,
        args: Sequence[str],
        *,
        stdin: bytes = b"",
        ok_codes: Iterable[int] = (0,),
        network: bool = False,
        index_file: str | None = None,
        identity: Mapping[str, str] | None = None,
    ) -> tuple[int, bytes]:
        try:
            home_entries = os.listdir(self.home)
        except OSError:
            home_entries = None
        if home_entries != []:
            raise GitObservationError("git-home-not-empty", f"HOME {self.home} is missing or no longer empty")
        options = () if network else OBSERVATION_OPTIONS
        argv = [*self.argv_prefix(), *options, *args]
        try:
            process = subprocess.Popen(
                argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env=self.environment(network=network, index_file=index_file, identity=identity),
                cwd=self.worktree,
                start_new_session=True,  # so a timeout can end git and anything it started
            )
        except OSError as error:
            raise GitObservationError("git-not-executable", f"cannot run {self.git_path}: {error.strerror}") from error
        try:
            stdout, stderr = process.communicate(stdin, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.communicate()
            message = f"git {_describe(args)} ran longer than {self.timeout} s"
            raise GitObservationError("git-timeout", message) from None
        if process.returncode not in tuple(ok_codes):
            detail = redact_credentials(self._redact(stderr.decode("utf-8", "replace").strip()))[:400]
            raise GitObservationError(
                "git-command-failed", f"git {_describe(args)} exited {process.returncode}: {detail}"
            )
        return process.returncode, stdout

    def _redact(self, text: str) -> str:
        for value in self.credential_env.values():
            if value:
                text = text.replace(value, "<redacted>")
        return text


def _subcommand(args: Sequence[str]) -> str | None:
    """The first word after leading ``-c key=value`` pairs; None (so guarded) for anything else."""
    index = 0
    while index + 1 < len(args) and args[index] == "-c":
        index += 2
    if index < len(args) and not args[index].startswith("-"):
        return args[index]
    return None


# User info in a URL (``scheme://user:token@``) or in an scp-like or bare address (``user:token@host``).
_USERINFO = re.compile(r"(://)?[^\s/@'\"]+@")
_QUERY = re.compile(r"\?[^\s'\"]*")


def redact_credentials(text: str) -> str:
    """Text safe for a message: user info and query strings of any URL-like part replaced.

    Used on everything that may quote configuration or a URL (a CI checkout often
    carries ``https://x-access-token:<token>@github.com/``); it over-redacts rather
    than risk a token, so an e-mail address loses its local part too.
    """
    text = _USERINFO.sub(lambda m: f"{m.group(1) or ''}<redacted>@", text)
    return _QUERY.sub("?<redacted>", text)


def _describe(args: Sequence[str]) -> str:
    """The subcommand and options only: user values after --end-of-options stay out of messages."""
    shown = []
    for arg in args:
        if arg == "--end-of-options":
            break
        shown.append(arg)
    return " ".join(shown)[:120]


def protections(argv_prefix: Sequence[str], diff_options: Sequence[str], environment: Mapping[str, str]) -> dict:
    """The eight protection booleans, derived from what the runner actually passes."""
    last: dict[str, str] = {}
    for index, arg in enumerate(argv_prefix[:-1]):
        if arg == "-c":
            key, _, value = argv_prefix[index + 1].partition("=")
            last[_normalize_key(key)] = value

    def is_set(key: str, value: str) -> bool:
        return last.get(_normalize_key(key)) == value

    return {
        "external_diff_disabled": "--no-ext-diff" in diff_options and "GIT_EXTERNAL_DIFF" not in environment,
        "fsmonitor_disabled": is_set("core.fsmonitor", "false"),
        "hooks_disabled": is_set("core.hooksPath", "/dev/null"),
        "protect_hfs_enabled": is_set("core.protectHFS", "true"),
        "protect_ntfs_enabled": is_set("core.protectNTFS", "true"),
        "protocol_restricted": environment.get("GIT_ALLOW_PROTOCOL") == "https"
        and environment.get("GIT_PROTOCOL_FROM_USER") == "0",
        # No signing, no signature display, and every signing program pinned to what exec refuses.
        "signing_disabled": all(is_set(f"{s}.gpgSign", "false") for s in ("commit", "tag", "push"))
        and is_set("log.showSignature", "false")
        and all(is_set(key, DISABLED_PROGRAM) for key in SIGNATURE_PROGRAMS),
        "textconv_disabled": "--no-textconv" in diff_options,
    }


def credential_strategy(argv_prefix: Sequence[str], gh_path: str) -> str:
    """``gh-cli-https`` when the helper list is reset and then holds only gh for github.com."""
    helpers = [argv_prefix[i + 1] for i, arg in enumerate(argv_prefix[:-1]) if arg == "-c"]
    helpers = [item for item in helpers if re.match(r"(?i)credential\.(.*\.)?helper=", item)]
    expected = ["credential.helper=", f"credential.https://github.com.helper=!{gh_path} auth git-credential"]
    return policy.CREDENTIAL_STRATEGY if helpers == expected else "unverified"


def _normalize_key(key: str) -> str:
    # Section and variable names are case-insensitive; a subsection is not.
    section, _, rest = key.partition(".")
    subsection, dot, name = rest.rpartition(".")
    return f"{section.lower()}.{subsection}{dot}{name.lower()}"


# --- helpers shared by every git module -----------------------------------


def _file_sha256(path: str) -> str:
    stream = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            stream.update(chunk)
    return stream.hexdigest()


def _utf8(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise GitObservationError("git-output-not-utf8", f"{what} is not UTF-8 at byte {error.start}") from error
