"""What a command needs from the machine, checked before it does anything else (references/prerequisites.md).

Codex runs every shell command in a sandbox, and its settings decide what the
loop may do: write a temporary directory, its state directory, the checkout's
``.git``, reach github.com. A command that writes checks what it will need
first, cheapest first, so a refusal comes in milliseconds and names its fix,
instead of an ``OSError`` halfway through or a network preflight that times
out:

1. a writable temporary directory (git's empty HOME, validation's scratch);
2. the state directory: for ``init`` the state root (made for the probe when
   missing, then removed: a refused ``init`` leaves nothing behind); for
   later commands the loop's own directory;
3. the checkout's git directories, for the commands that write git;
4. the network, when Codex's sandbox says it is off
   (``CODEX_SANDBOX_NETWORK_DISABLED=1``); where it is on, the preflight's
   ``git ls-remote`` tries the route itself.

Inside Codex (any of ``CODEX_MARKERS`` set) every refusal is one
``codex-sandbox-refused`` error: each need the sandbox refuses, and the
settings that grant them all (``sandbox_mode``,
``sandbox_workspace_write.network_access``, the exact ``writable_roots``, the
``mkdir -p`` that must come first because Codex leaves a writable root that
does not exist read-only) as ``config.toml`` lines and as ``codex exec``
flags. Outside Codex the refusal keeps its own code (``temp-dir-unusable``,
``state-dir-unusable``, ``git-dir-unwritable``) and says what the operating
system answered; no Codex advice.

Each write check is a real write: a file created and removed at once
(``access(2)`` does not see every sandbox's rules).
"""

from __future__ import annotations

import errno
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from act.core import statedir
from act.core.codex import NETWORK_DISABLED, in_codex
from act.core.errors import ActError
from act.core.options import Options

# What each command needs beyond reading. ``list`` and ``status`` only read; every other command writes
# its state directory, but ``report``, which has none and reads GitHub only. Git and the network, where named.
_STATE_ONLY = frozenset(
    {
        "approve",
        "record-claim",
        "record-executed",
        "end-wakeup",
        "automation-create",
        "automation-delete",
        "verify-automation",
        "forget",
    }
)
_NETWORK = frozenset(
    {
        "init",
        "next",
        "execute",
        "claim",
        "wakeup",
        "plan-remediation",
        "plan-finalization",
        "automation-prompt",
        "report",
    }
)
_GIT = frozenset({"init", "next", "execute"})


@dataclass(frozen=True)
class Refusal:
    need: str  # "temporary directory", "state directory", "git directory", "network"
    path: str  # the directory refused ("" for the network)
    reason: str  # the operating system's word for it


@dataclass
class Needs:
    """What one run of a command will need; ``missing_roots`` are writable roots that do not exist yet."""

    state: Path | None = None
    state_is_root: bool = False  # init: the root under which the new loop's directory will be made
    git_dirs: tuple[str, ...] = ()
    network: bool = False
    missing_roots: list[str] = field(default_factory=list)


def check_command(name: str, options: Options, environ: Mapping[str, str] = os.environ) -> None:
    """Refuse, before anything else, a command the machine (or Codex's sandbox) will not let finish."""
    if name not in _STATE_ONLY | _NETWORK:
        return
    needs = needs_of(name, options, environ)
    refusals = check(needs, environ)
    if refusals:
        raise refusal_error(refusals, needs, environ)


def needs_of(name: str, options: Options, environ: Mapping[str, str] = os.environ) -> Needs:
    needs = Needs(network=name in _NETWORK)
    checkout: str | None = None
    if name == "init":
        given = options.state_dir
        needs.state = Path(os.path.abspath(given)).parent if given else statedir.default_root(environ)
        needs.state_is_root = True
        checkout = options.checkout
    else:
        needs.state = _loop_directory(options, environ)
        if needs.state is not None and name in _GIT:
            checkout = _recorded_checkout(needs.state)
    if checkout is not None and name in _GIT:
        needs.git_dirs = _git_dirs(checkout)
    return needs


def check(needs: Needs, environ: Mapping[str, str] = os.environ) -> list[Refusal]:
    """Every need the machine refuses, cheapest first; the probes leave nothing behind."""
    refusals: list[Refusal] = []
    temporary = _temporary_refusal()
    if temporary is not None:
        refusals.append(temporary)
    if needs.state is not None:
        state = _state_refusal(needs)
        if state is not None:
            refusals.append(state)
    for directory in needs.git_dirs:
        reason = _write_probe(Path(directory))
        if reason is not None:
            refusals.append(Refusal("git directory", directory, reason))
    if needs.network and environ.get(NETWORK_DISABLED) == "1":
        refusals.append(Refusal("network", "", f"{NETWORK_DISABLED}=1"))
    return refusals


def refusal_error(refusals: list[Refusal], needs: Needs, environ: Mapping[str, str] = os.environ) -> ActError:
    if in_codex(environ):
        return codex_error(refusals, needs)
    first = refusals[0]
    said = f"cannot write the {first.need} {first.path} ({first.reason})"
    if first.need == "temporary directory":
        return ActError("temp-dir-unusable", f"{said}; set TMPDIR to a directory you can write", path="/tmp")
    if first.need == "state directory":
        return ActError(
            "state-dir-unusable", f"{said}; make it writable or pass another --state-dir", path="/state_dir"
        )
    return ActError("git-dir-unwritable", f"{said}; run the loop as a user who can write it", path="/checkout")


def codex_error(refusals: list[Refusal], needs: Needs) -> ActError:
    """One error naming every refused need and the Codex settings that grant them all."""
    roots = writable_roots(needs)
    read_only = any(refusal.need == "temporary directory" for refusal in refusals)
    config = codex_config(roots)
    refused = "; ".join(
        f"the {r.need} {r.path} ({r.reason})" if r.path else f"the {r.need} ({r.reason})" for r in refusals
    )
    mkdir = f"mkdir -p {' '.join(needs.missing_roots)}" if needs.missing_roots else ""
    flags = " ".join(
        ["-s workspace-write", "-c sandbox_workspace_write.network_access=true", *(f"--add-dir {r}" for r in roots)]
    )
    steps = (
        "first run `" + mkdir + "` outside the sandbox (Codex leaves a writable root that does not exist "
        "read-only), then "
        if mkdir
        else ""
    )
    steps += (
        f'start Codex with {flags} (or sandbox_mode = "danger-full-access"), and put the same settings in '
        "config.toml, which `codex exec resume` and the heartbeat's thread read (they take no -s or --add-dir): "
        + config.replace("\n", " ").strip()
        + ' (references/prerequisites.md, "Codex\'s sandbox")'
    )
    if read_only:
        steps = "The session runs read-only (sandbox_mode); " + steps
    message = f"Codex's sandbox refuses what the loop needs: {refused}. {steps[0].upper()}{steps[1:]}"
    return ActError(
        "codex-sandbox-refused",
        message,
        path="/sandbox",
        details={
            "refused": [{"need": r.need, "path": r.path, "reason": r.reason} for r in refusals],
            "config_toml": config,
            "codex_flags": flags,
            "mkdir_first": mkdir or None,
        },
    )


def writable_roots(needs: Needs) -> list[str]:
    """The exact roots the loop writes outside the workspace: its state root and the checkout's git directories."""
    roots: list[str] = []
    if needs.state is not None:
        roots.append(str(needs.state if needs.state_is_root else needs.state.parent))
    for directory in needs.git_dirs:  # a worktree's git dir inside the common dir needs no root of its own
        if not any(directory == root or directory.startswith(root.rstrip("/") + "/") for root in roots):
            roots.append(directory)
    return roots


def codex_config(roots: list[str]) -> str:
    quoted = ", ".join(f'"{root}"' for root in roots)
    return (
        'sandbox_mode = "workspace-write"\n'
        "[sandbox_workspace_write]\n"
        "network_access = true\n"
        f"writable_roots = [{quoted}]\n"
    )


def isolation_advice(environ: Mapping[str, str] = os.environ) -> str:
    """For ``isolation-unavailable`` inside Codex: its sandboxes refuse every namespace but full access's."""
    if not in_codex(environ):
        return ""
    return (
        ' Inside Codex only sandbox_mode = "danger-full-access" lets a network namespace be made (its '
        "workspace-write and read-only sandboxes refuse unshare, bubblewrap and a nested `codex sandbox` alike; "
        'references/prerequisites.md, "Validation inside Codex")'
    )


def os_error(error: OSError, environ: Mapping[str, str] = os.environ) -> ActError:
    """An ``OSError`` that escaped a command: the file it names and why, never an internal error."""
    where = error.filename if isinstance(error.filename, str) else ""
    reason = error.strerror or type(error).__name__
    refused = error.errno in (errno.EROFS, errno.EACCES, errno.EPERM)
    message = f"the file system refused {where or 'a file the command needs'} ({reason}); no write is permitted"
    if refused and in_codex(environ):
        message += (
            "; Codex's sandbox may not let this path be written: add it (or its directory, created first with "
            "mkdir -p) to [sandbox_workspace_write] writable_roots in config.toml, or use "
            'sandbox_mode = "danger-full-access" (references/prerequisites.md, "Codex\'s sandbox")'
        )
    return ActError("filesystem-refused", message, path="", details={"file": where} if where else None)


def _temporary_refusal() -> Refusal | None:
    try:
        scratch = tempfile.mkdtemp(prefix="loop-probe-")
    except OSError as error:
        where = tempfile.tempdir or os.environ.get("TMPDIR") or "/tmp"
        return Refusal("temporary directory", where, error.strerror or "no usable temporary directory")
    os.rmdir(scratch)
    return None


def _state_refusal(needs: Needs) -> Refusal | None:
    assert needs.state is not None
    directory = needs.state
    made: list[Path] = []  # init leaves nothing behind when it refuses: what the probe made goes again
    if needs.state_is_root and not os.path.isdir(directory):
        made = [parent for parent in (directory, *directory.parents) if not os.path.lexists(parent)][::-1]
        try:
            directory.mkdir(mode=0o700, parents=True)
        except OSError as error:
            needs.missing_roots.append(str(directory))
            _remove(made)
            return Refusal("state directory", str(directory), error.strerror or type(error).__name__)
    reason = _write_probe(directory)
    _remove(made)
    return Refusal("state directory", str(directory), reason) if reason is not None else None


def _remove(made: list[Path]) -> None:
    for directory in reversed(made):
        try:
            os.rmdir(directory)
        except OSError:
            return


def _write_probe(directory: Path) -> str | None:
    """None when a file can be made (and is removed) in ``directory``; else the operating system's reason."""
    probe = directory / f".loop-write-probe-{os.getpid()}"
    try:
        descriptor = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as error:
        return error.strerror or type(error).__name__
    os.close(descriptor)
    try:
        os.unlink(probe)
    except OSError as error:
        return error.strerror or type(error).__name__
    return None


def _loop_directory(options: Options, environ: Mapping[str, str]) -> Path | None:
    """The loop's existing directory, or None (the command itself then says what is missing)."""
    if options.state_dir:
        path = Path(os.path.abspath(options.state_dir))
    elif options.run_id:
        path = statedir.default_path(options.run_id, environ)
    else:
        return None
    return path if os.path.isdir(path) and not os.path.islink(path) else None


def _recorded_checkout(directory: Path) -> str | None:
    """The checkout ``init`` recorded; None when it cannot be read (the command refuses that itself)."""
    try:
        intent = statedir.StateDir(directory).read(statedir.INTENT)
    except ActError:
        return None
    checkout = intent.get("checkout")
    return checkout if isinstance(checkout, str) else None


def _git_dirs(checkout: str) -> tuple[str, ...]:
    from observe.errors import ObserveError
    from observe.git.paths import resolve_git_dirs

    try:
        git_dir, common_dir = resolve_git_dirs(os.path.realpath(checkout))
    except (ObserveError, OSError):
        return ()  # no .git to probe: the observer refuses it with its own code
    return tuple(dict.fromkeys((common_dir, git_dir)))
