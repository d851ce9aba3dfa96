"""The loop's state directory: what the hands remember between commands and wakeups.

One directory per loop (per run id), outside the checkout, readable by its
owner alone (0700, files 0600). Default:
``$XDG_STATE_HOME/github-codex-pr-loop/<run_id>/`` (``XDG_STATE_HOME``
defaults to ``~/.local/state``). It holds only what the loop built or was
told: the intent, the documents, the pending plan, the approval, the current
wakeup, the automation's progress, and the executor's ledger and validation
output. Never a token: nothing that reaches
this module is read from a credential. Layout: references/hands.md.

Every write is atomic (a fresh 0600 file renamed over the old one), so a
crash leaves the old or the new file, never half of one. Every read is the
evaluator's strict JSON parser, and the hands' own files are read through
their typed models (act/core/state_models.py): a file edited into something
ambiguous or into the wrong shape is an error naming the file and the JSON
Pointer, not a guess.
"""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from act.core.codex import in_codex
from act.core.errors import ActError
from act.core.jsonedge import Document
from evaluator.canonical import parse_document
from evaluator.errors import Rejected
from evaluator.models.common import Strict, validate

Model = TypeVar("Model", bound=Strict)

APP = "github-codex-pr-loop"

# The files, by role (references/hands.md, "The state directory").
INTENT = "intent.json"
INITIAL = "initial.json"
INITIAL_TEXTS = "initial-texts.json"
INITIAL_RESULT = "initial-result.json"
STATE = "state.json"
LAST_RESULT = "last-result.json"
PENDING = "pending.json"
APPROVAL = "approval.json"
WAKEUP = "wakeup.json"
AUTOMATION = "automation.json"
PROMPT = "prompt.json"
PLANS = "plans"
NOTES = "notes.json"
SETUP = "setup.json"


def now_text() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def default_root(environ: Mapping[str, str] = os.environ) -> Path:
    """``$XDG_STATE_HOME/github-codex-pr-loop`` (XDG_STATE_HOME defaults to ``~/.local/state``)."""
    base = environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / APP


def default_path(run_id: str, environ: Mapping[str, str] = os.environ) -> Path:
    return default_root(environ) / run_id


class StateDir:
    """One loop's directory; every method checks it is still private before touching it."""

    def __init__(self, path: Path):
        self.path = Path(os.path.abspath(path))

    @classmethod
    def create(cls, path: Path, checkout: str | None = None) -> StateDir:
        """A new, empty, private directory; an existing one is refused (one loop, one directory)."""
        path = Path(os.path.abspath(path))
        if checkout is not None and _inside(path, Path(os.path.realpath(checkout))):
            raise ActError(
                "state-dir-inside-checkout",
                f"{path} is inside the checkout; the loop's state lives outside it",
                path="/state_dir",
            )
        try:
            path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.mkdir(path, 0o700)
        except FileExistsError:
            raise ActError(
                "state-dir-exists", f"{path} already exists; a new loop needs a new state directory", path="/state_dir"
            ) from None
        except OSError as error:
            raise unusable(f"cannot create {path}", error) from None
        os.chmod(path, 0o700)  # the umask may have narrowed mkdir's mode, never widened it; be exact
        state_dir = cls(path)
        state_dir.check()
        return state_dir

    def check(self) -> None:
        """A real directory (not a symlink), owned by this user, with no group or other permission."""
        try:
            info = os.lstat(self.path)
        except FileNotFoundError:
            raise ActError(
                "state-dir-missing",
                f"{self.path} does not exist. Pass the `state_dir` that `loop.py init` printed for this loop (every "
                "command of one loop takes the same --state-dir; `loop.py list` shows them); only to start a new loop "
                "run `loop.py init`",
                path="/state_dir",
            ) from None
        except OSError as error:
            raise unusable(f"cannot examine {self.path}", error) from None
        if not stat.S_ISDIR(info.st_mode):
            raise ActError("state-dir-unsafe", f"{self.path} is not a plain directory", path="/state_dir")
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            raise ActError(
                "state-dir-unsafe",
                f"{self.path} must be owned by this user with mode 0700 (is {oct(info.st_mode & 0o777)})",
                path="/state_dir",
            )

    def file(self, name: str) -> Path:
        return self.path / name

    def exists(self, name: str) -> bool:
        return os.path.lexists(self.file(name))

    def read(self, name: str) -> Document:
        self.check()
        path = self.file(name)
        try:
            with open(path, "rb", opener=_no_follow) as handle:
                info = os.fstat(handle.fileno())
                if not stat.S_ISREG(info.st_mode) or info.st_mode & 0o077:
                    raise ActError(
                        "state-file-unsafe", f"{path} must be a regular file with mode 0600", path="/state_dir"
                    )
                raw = handle.read()
        except FileNotFoundError:
            raise ActError("state-file-missing", f"{path} does not exist", path="/state_dir") from None
        except OSError as error:
            raise ActError("state-file-unsafe", f"cannot read {path}: {error.strerror}", path="/state_dir") from None
        try:
            return parse_document(raw)
        except Rejected as error:
            raise ActError("state-file-invalid", f"{path}: {error}", path="/state_dir") from None

    def read_optional(self, name: str) -> Document | None:
        return self.read(name) if self.exists(name) else None

    def read_model(self, name: str, model: type[Model] | dict[str, type[Model]]) -> Model:
        """The file checked against its model; several models are chosen between by the file's ``kind``."""
        value = self.read(name)
        if isinstance(model, dict):
            kind = value.get("kind")
            chosen = model.get(kind) if isinstance(kind, str) else None
            if chosen is None:
                raise self.invalid(
                    name, [("invalid-value", "/kind", f"kind must be one of {', '.join(model)}; observed {kind!r}")]
                )
            model = chosen
        instance, violations = validate(model, value)
        if violations:
            raise self.invalid(name, [(v.code, v.path, v.message) for v in violations])
        checked: Model = instance
        return checked

    def read_model_optional(self, name: str, model: type[Model] | dict[str, type[Model]]) -> Model | None:
        return self.read_model(name, model) if self.exists(name) else None

    def invalid(self, name: str, violations: list[tuple[str, str, str]]) -> ActError:
        """``state-file-invalid`` at the first violation's pointer inside the file; every violation in details."""
        code, where, message = violations[0]
        more = f" (and {len(violations) - 1} more, in violations)" if len(violations) > 1 else ""
        return ActError(
            "state-file-invalid",
            f"{self.file(name)} at {where or '/'}: {message} ({code}){more}; the state directory was edited or "
            "is from another version: nothing is written",
            path=where,
            details={
                "state_file": name,
                "violations": [{"code": c, "path": p, "message": m} for c, p, m in violations],
            },
        )

    def write_model(self, name: str, value: Strict) -> Path:
        return self.write(name, value.as_dict())

    def write(self, name: str, value: Mapping[str, object]) -> Path:
        self.check()
        target = self.file(name)
        temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
        data = (json.dumps(value, ensure_ascii=False, indent=1, sort_keys=False) + "\n").encode("utf-8")
        try:
            target.parent.mkdir(mode=0o700, exist_ok=True)
            descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        except OSError as error:  # a read-only sandbox (a resumed Codex session) refuses the first byte
            raise unusable(f"cannot write {target}", error) from None
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temporary, target)
        except BaseException:
            try:
                os.unlink(temporary)
            except FileNotFoundError:
                pass
            raise
        return target

    def remove(self, name: str) -> None:
        try:
            os.unlink(self.file(name))
        except FileNotFoundError:
            pass


def unusable(what: str, error: OSError) -> ActError:
    """``state-dir-unusable``: what failed and why; inside Codex, the sandbox setting that grants it."""
    message = f"{what}: {error.strerror or type(error).__name__}"
    if in_codex():
        message += (
            "; Codex's sandbox does not let it be written: add the state root to [sandbox_workspace_write] "
            "writable_roots in config.toml (mkdir -p it first: a root that does not exist stays read-only), "
            "which `codex exec resume` and the heartbeat's thread read too (references/prerequisites.md)"
        )
    return ActError("state-dir-unusable", message, path="/state_dir")


def _no_follow(path: str, flags: int) -> int:
    return os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK)


def _inside(path: Path, root: Path) -> bool:
    resolved = Path(os.path.realpath(path))
    return resolved == root or root in resolved.parents
