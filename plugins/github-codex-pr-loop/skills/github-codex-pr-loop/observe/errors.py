"""The one error base of observation, and the catalogue of every code it carries.

An observation either completes or raises an ``ObserveError``: a partial
document is never returned. ``code`` is a stable kebab-case name from
``CATALOGUE``; ``message`` is for people, names the path or setting
concerned, and is built only from values this project controls (status
codes, paths, counts, header numbers), never from response text or a token.

Each wing raises its own subclass, limited to its own codes:
``GitHubObservationError`` (observe/github/errors.py), ``GitObservationError``
(observe/git/runner.py), ``RegistryError`` (observe/registry.py),
``DigestError`` (observe/evaluator_digest.py) and ``CollectionError`` (the
collector's own checks, observe/collect.py). The collector CLI catches this
base alone, so every failure it knows leaves with its code.

references/errors.md ("Collector") lists the same codes for people;
tests/test_observe_errors.py keeps the three (this catalogue, the codes the
source raises, the reference) equal. This module imports nothing of the
project, so every wing can import it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar

GITHUB_CODES: Mapping[str, str] = {
    "github-token-missing": "no explicit token, no GH_TOKEN/GITHUB_TOKEN, and no token from the --gh CLI",
    "github-unauthorized": "HTTP 401",
    "github-forbidden": "HTTP 403 that is not a rate limit, where the endpoint has no meaning for it",
    "github-not-found": "HTTP 404 for something that must exist (the PR, the base branch)",
    "github-unexpected-status": "any other non-2xx, a redirect, or a 304 never asked for",
    "github-server-error": "HTTP 5xx after every retry",
    "github-rate-limited": "403 primary limit, 403/429 secondary limit, after retries or beyond the wait cap",
    "github-timeout": "connect/read/write timeout after every retry",
    "github-connection-failed": "other transport failure after every retry",
    "github-malformed-json": "a body that is not strict UTF-8 JSON (truncated, garbage, wrong content type)",
    "github-unexpected-shape": "valid JSON without the fields and types the observer relies on",
    "github-graphql-errors": "GraphQL answered HTTP 200 with an `errors` member",
    "github-incomplete-pagination": "a page missing, a loop, a count that does not add up",
    "github-unrecognised-codex-summary": "a Codex summary comment or table row that cannot be read exactly",
    "github-ambiguous-codex-comment": "a trusted Codex comment that matches two classifications",
    "github-ambiguous-short-sha": "a short sha that expands to two different requested heads",
    "github-ambiguous-pull-request": "more than one open same-repository pull request has the head branch",
    "github-credential-echoed": "an answer (header, body or parsed JSON text) repeats the token; nothing of it is used",
    "github-deadline-exceeded": "the collection deadline passed: a slow answer, or a retry wait that would reach it",
    "github-response-too-large": "an answer larger than the cap once decompressed (a gzip bomb included)",
}

GIT_CODES: Mapping[str, str] = {
    "git-not-executable": "git is not given as an absolute path, or cannot be run",
    "git-credential-helper-unsafe": "gh is not a trusted executable at a plain absolute path",
    "git-identity-unreadable": "a git config file with the commit identity cannot be read, or its value is unusable",
    "gh-not-found": "no gh on PATH and no --gh, or the gh named cannot be found",
    "gh-config-dir-invalid": "GH_CONFIG_DIR (or HOME, where gh's configuration is looked for) is not absolute",
    "git-credential-env-invalid": "the credential environment cannot be built safely",
    "git-home-not-empty": "the private HOME of the runner is missing or no longer empty",
    "git-temp-dir-unusable": "no temporary directory can be made for git's empty HOME",
    "git-timeout": "a git command ran past its time limit",
    "git-command-failed": "a git command exited with a status it may not",
    "git-output-not-utf8": "git printed something that is not UTF-8",
    "git-output-unexpected": "git printed something of an unexpected form (a config listing not in NUL triples)",
    "git-repository-invalid": "the repository is not lowercase owner/repo",
    "git-dir-not-found": "the checkout has no readable .git directory or gitfile",
    "git-config-changed": "the repository configuration changed while the observer ran",
    "git-config-hook-present": "a hook.* key: a hook defined in config ignores core.hooksPath",
    "git-grafts-present": "info/grafts exists: it could rewrite ancestry",
    "git-repository-not-owned": "the work tree, .git, the git dir or the common dir belongs to another user",
    "git-include-present": "the configuration includes other files",
    "git-insteadof-present": "a url.*.insteadOf rewrite is configured",
    "git-http-config-present": "an http.* setting is configured (refused, not enumerated)",
    "git-http-url-config-present": "a URL-scoped http.<url>.* setting is configured (it beats -c)",
    "git-url-named-remote-present": "a remote is named like a URL",
    "git-filter-driver-unneutralizable": "a filter driver whose name cannot go in -c, so it cannot be switched off",
    "git-remote-not-found": "no remote points at the repository on github.com",
    "git-remote-ambiguous": "several remotes have the canonical GitHub URL",
    "git-remote-name-invalid": "a remote name that is not a plain name",
    "git-remote-url-not-canonical": "the remote URL is not exactly https://github.com/<owner>/<repo>.git",
    "git-base-ref-missing": "the base branch's remote-tracking ref does not name a commit",
    "git-head-unborn": "HEAD does not name a commit",
    "git-branch-invalid": "a branch name git refuses",
    "git-sha-invalid": "a value that is not a 40-hex commit id",
    "git-path-not-canonical": "a path that is not a canonical repository-relative path",
    "git-path-duplicate": "a path given more than once",
    "git-path-unobservable": "a path whose file-system facts cannot be read",
    "git-path-hard-linked": "a planned path is a regular file with more than one hard link",
    "git-path-not-regular-file": "a planned path is neither a regular file nor absent (a directory, FIFO, loop)",
    "git-path-record-invalid": "a path record to recheck is not an object with a string path",
    "git-risk-acceptance-invalid": "a risk acceptance digest that is not 64 lowercase hex",
    "git-isolation-unavailable": (
        "the isolated profile's protections are not all on, a clean filter is active, or credentials are not gh's"
    ),
    "command-executable-not-absolute": "a validation command whose executable is not an absolute path",
    "command-executable-unreadable": "a validation command whose executable cannot be read",
    "filesystem-scope-invalid": "a file-system read scope that is not a non-empty list of absolute paths",
}

REGISTRY_CODES: Mapping[str, str] = {
    "registry-unreadable": "the automation registry directory is missing or cannot be listed",
}

DIGEST_CODES: Mapping[str, str] = {
    "evaluator-digest-failed": "the installed skill code cannot be digested faithfully",
    "evaluator-compiled-code-present": (
        "a __pycache__, bytecode file or extension module in evaluator/, observe/ or scripts/"
    ),
    "environment-distribution-missing": "a distribution the runtime lock names is not found at its version",
    "environment-record-invalid": "a locked distribution has no RECORD, or one that cannot be read exactly",
    "environment-file-missing": "a file a locked distribution's RECORD lists is missing or not a regular file",
    "environment-file-modified": "a file of a locked distribution differs from the hash its RECORD gives",
    "environment-file-unlisted": "a file in the skill's private environment that no locked distribution's RECORD lists",
}

COLLECTION_CODES: Mapping[str, str] = {
    "document-invalid": "an input document is not strict canonical JSON",
    "checkpoint-invalid": "the checkpoint is not a prompt document that --prompt accepted",
    "request-body-mismatch": "the round-0 request on GitHub is not the approved template rendered with the final head",
    "path-records-missing": "the document to recheck holds no path_records",
    "path-records-changed": "a path record differs from the plan",
}

# Outcomes of the collector CLI itself, never raised as an ObserveError.
CLI_CODES: Mapping[str, str] = {
    "usage-error": "bad arguments or an unreadable input file (exit 2)",
    "collector-credential-in-output": "the document would carry a form of the token; nothing is printed",
    "collector-internal-error": "a failure the collector does not know (a bug); names only the exception's type",
}

CATALOGUE: Mapping[str, str] = {
    **GITHUB_CODES,
    **GIT_CODES,
    **REGISTRY_CODES,
    **DIGEST_CODES,
    **COLLECTION_CODES,
    **CLI_CODES,
}


# What the person (or the agent, where it is theirs to do) does next, for every code: appended to
# each message, so that no refusal leaves its reader without a way forward.
_CHECK_GITHUB = (
    "check GitHub's status and the network route (--https-proxy, --ca-file), then run the same command again"
)
_FIX_CONFIG = "remove that setting from the repository's git configuration (git config --unset ...), then run again"
_REINSTALL = "reinstall the skill (python install.py --upgrade from its repository, or the plugin): restores the code"
# The private environment is shared by every copy of the skill: rebuilt by the builder each copy carries.
_REBUILD = (
    "once no loop is live, rebuild the skill's private environment: python3 <skill>/scripts/environment.py --rebuild"
)
NEXT_STEPS: Mapping[str, str] = {
    "github-token-missing": (
        "log in with `gh auth login` (then pass gh's absolute path with --gh PATH if it is not /usr/bin/gh), or set "
        "GH_TOKEN for this command"
    ),
    "github-unauthorized": "the token is not valid for github.com: run `gh auth login` again or set a fresh GH_TOKEN",
    "github-forbidden": "give the token read (and for writes, write) access to this repository, then run again",
    "github-not-found": "check the repository, pull request and branch names, and that the token can see them",
    "github-unexpected-status": _CHECK_GITHUB,
    "github-server-error": "GitHub is failing: wait a few minutes, then run the same command again",
    "github-rate-limited": "wait until the rate limit resets (a few minutes), then run the same command again",
    "github-timeout": _CHECK_GITHUB,
    "github-connection-failed": _CHECK_GITHUB,
    "github-malformed-json": _CHECK_GITHUB + " (a proxy may be rewriting answers)",
    "github-unexpected-shape": "GitHub answered in a form this skill does not know: report it; no write is made",
    "github-graphql-errors": "run the same command again; if it persists, check the token's access to the repository",
    "github-incomplete-pagination": "the lists changed while they were read: run the same command again",
    "github-unrecognised-codex-summary": "Codex's summary comment has a form this skill does not read: report it",
    "github-ambiguous-codex-comment": "a Codex reply reads two ways: tell the person, who reads it on GitHub",
    "github-ambiguous-short-sha": "tell the person: two requested heads share the short sha Codex named",
    "github-ambiguous-pull-request": "close the extra pull requests from this head branch, or choose another branch",
    "github-credential-echoed": "an answer repeated the token: revoke it (`gh auth refresh` or a new token) and report",
    "github-deadline-exceeded": "GitHub or the route is slow: run the same command again",
    "github-response-too-large": "an answer was too large to read safely: report it; no write is made",
    "git-not-executable": "install git and make sure it runs (`git --version`)",
    "git-credential-helper-unsafe": (
        "use a gh owned by root or you and writable by no one else (`chmod go-w` it and its directories), at an "
        "absolute path of letters, digits and / . _ + - (pass it with --gh PATH)"
    ),
    "git-identity-unreadable": "fix the file the message names (`git config --global --edit`), then run again",
    "gh-not-found": "install the GitHub CLI (https://cli.github.com) and run `gh auth login`, or pass --gh PATH",
    "gh-config-dir-invalid": "set GH_CONFIG_DIR to the absolute path of gh's configuration directory",
    "git-credential-env-invalid": "run without unusual credential variables (only GH_TOKEN, GITHUB_TOKEN, GH_HOST ...)",
    "git-home-not-empty": "run the same command again (a private temporary HOME was disturbed)",
    "git-temp-dir-unusable": (
        "set TMPDIR to a directory you can write; inside Codex, a sandbox other than read-only "
        '(sandbox_mode = "workspace-write"; references/prerequisites.md)'
    ),
    "git-timeout": "check the network route to github.com and the repository's size, then run again",
    "git-command-failed": "read git's message, fix what it names in the checkout, then run the same command again",
    "git-output-not-utf8": "rename the files whose names are not UTF-8, then run again",
    "git-output-unexpected": "report it: git printed something this skill does not read",
    "git-repository-invalid": "name the repository as owner/repo in lowercase, as on github.com",
    "git-dir-not-found": "pass --checkout the root of a git clone of the repository",
    "git-config-changed": "something changed the git configuration while it was read: run the same command again",
    "git-config-hook-present": _FIX_CONFIG,
    "git-grafts-present": "remove .git/info/grafts (use `git replace` if needed, or nothing), then run again",
    "git-repository-not-owned": "run as the user who owns the checkout, or clone it anew as yourself",
    "git-include-present": _FIX_CONFIG,
    "git-insteadof-present": _FIX_CONFIG,
    "git-http-config-present": _FIX_CONFIG + " (a proxy or CA goes to --https-proxy and --ca-file)",
    "git-http-url-config-present": _FIX_CONFIG,
    "git-url-named-remote-present": "rename the remote to a plain name (git remote rename), then run again",
    "git-filter-driver-unneutralizable": "rename or remove that filter driver in the git configuration",
    "git-remote-not-found": "add a remote: git remote add origin https://github.com/OWNER/REPO",
    "git-remote-ambiguous": "keep one remote pointing at the repository (git remote remove the others)",
    "git-remote-name-invalid": "rename the remote to a plain name (git remote rename)",
    "git-remote-url-not-canonical": "set the remote URL to https://github.com/OWNER/REPO (git remote set-url)",
    "git-base-ref-missing": "fetch the base branch (git fetch REMOTE BASE), then run again",
    "git-head-unborn": "make a first commit on the checkout, then run again",
    "git-branch-invalid": "choose a branch name git accepts (git check-ref-format --branch NAME)",
    "git-sha-invalid": "report it: a commit id was not 40 hex digits",
    "git-path-not-canonical": (
        "give each --path relative to the checkout's root, with / separators and no ./, .. or trailing slash"
    ),
    "git-path-duplicate": "give each --path once",
    "git-path-unobservable": "check that the path and its directories can be read, then run again",
    "git-path-hard-linked": "break the extra hard link (copy the file over itself), then run again",
    "git-path-not-regular-file": "give --path a regular file (or a file to create), not a directory or special file",
    "git-path-record-invalid": "rebuild the plan: the document's path records are malformed",
    "git-risk-acceptance-invalid": "pass the risk acceptance record's 64-hex SHA-256",
    "git-isolation-unavailable": "run the validation where the isolated profile's protections are available",
    "command-executable-not-absolute": "give each --command's argv[0] as an absolute path (`command -v NAME`)",
    "command-executable-unreadable": "give each --command an executable that exists and can be read",
    "filesystem-scope-invalid": "give the read scope as absolute paths",
    "registry-unreadable": "pass --registry DIR, the Codex automations folder ($CODEX_HOME/automations)",
    "evaluator-digest-failed": _REINSTALL,
    "evaluator-compiled-code-present": "remove the __pycache__ folders and compiled files from the skill's code, or "
    + _REINSTALL,
    "environment-distribution-missing": _REBUILD,
    "environment-record-invalid": _REBUILD,
    "environment-file-missing": _REBUILD,
    "environment-file-modified": _REBUILD,
    "environment-file-unlisted": (
        "remove the named file from the skill's private environment (never `pip install` into it), or " + _REBUILD
    ),
    "document-invalid": "pass the document exactly as the skill wrote it",
    "checkpoint-invalid": "pass the prompt document that --prompt accepted (the state directory's prompt.json)",
    "request-body-mismatch": "tell the person: the review request on GitHub is not the approved one",
    "path-records-missing": "pass a document that holds path records (a plan with paths)",
    "path-records-changed": "restore the planned files, or have a new plan built",
    "usage-error": "see --help for the command's arguments",
    "collector-credential-in-output": "revoke the token and report it; nothing was printed",
    "collector-internal-error": "report it with the command that failed; no write is made",
}


class ObserveError(Exception):
    """An observation that could not be made completely and exactly."""

    codes: ClassVar[Mapping[str, str]] = {code: meaning for code, meaning in CATALOGUE.items() if code not in CLI_CODES}

    def __init__(self, code: str, message: str):
        if code not in self.codes:
            raise ValueError(f"{type(self).__name__} has no error code {code!r}")
        message = f"{message}; next: {NEXT_STEPS[code]}" if code in NEXT_STEPS else message
        super().__init__(f"{code}: {message}")
        self.code = code
        self.message = message

    def as_dict(self) -> dict[str, str]:
        return {"code": self.code, "message": self.message}


class CollectionError(ObserveError):
    """A check of the collector's own: the inputs it reads and what it assembles from them."""

    codes = COLLECTION_CODES


class UsageError(Exception):
    """The collector was called wrongly (exit 2); not an observation."""
