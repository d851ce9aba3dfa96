"""A stand-in for the ``gh`` CLI, limited to what the loop asks of it.

The loop uses ``gh`` twice: ``gh auth token --hostname github.com`` (the
token the GitHub client sends) and ``gh auth git-credential get`` (the git
credential helper the hardened runner installs for ``https://github.com``).
``install_gh(directory, token)`` writes a POSIX shell script answering
exactly those, from ``GH_TOKEN``/``GITHUB_TOKEN`` like the real CLI, else
from a token file beside it (the real CLI's stored login). Anything else
exits 1, so an unexpected use shows up as a failure, not as silence. Each
call appends what was asked to ``gh-calls`` beside it (``gh_calls`` reads
them), so a test can count token lookups.
"""

from __future__ import annotations

import os
from pathlib import Path

_SCRIPT = r"""#!/bin/sh
# gh, simulated: `auth token` and `auth git-credential` for the simulated github.com only.
here=$(dirname "$0")
printf '%s %s\n' "$1" "$2" >> "$here/gh-calls"  # what was asked, for tests and benchmarks to count
token="${GH_TOKEN:-${GITHUB_TOKEN:-$(cat "$here/gh-token")}}"
case "$1 $2" in
  "auth token")
    [ "$3 $4" = "--hostname github.com" ] || [ -z "$3" ] || exit 1
    printf '%s\n' "$token" ;;
  "auth git-credential")
    [ "$3" = get ] || exit 0
    host=""
    while IFS= read -r line && [ -n "$line" ]; do
      case "$line" in host=*) host="${line#host=}" ;; esac
    done
    [ "$host" = github.com ] || exit 1
    printf 'protocol=https\nhost=github.com\nusername=x-access-token\npassword=%s\n' "$token" ;;
  *)
    echo "gh (simulated) does not support: $1 $2" >&2
    exit 1 ;;
esac
"""


def install_gh(directory: Path, token: str) -> Path:
    """Write the ``gh`` stand-in and its stored token into ``directory``; return the executable's path."""
    directory.mkdir(parents=True, exist_ok=True)
    token_file = directory / "gh-token"
    token_file.write_text(token + "\n", encoding="ascii")
    token_file.chmod(0o600)
    executable = directory / "gh"
    executable.write_text(_SCRIPT, encoding="ascii")
    executable.chmod(0o755)
    return Path(os.path.abspath(executable))


def gh_calls(executable: Path) -> list[str]:
    """What the stand-in beside ``executable`` was asked so far, in order (``auth token``, ``auth git-credential``)."""
    log = Path(executable).parent / "gh-calls"
    return log.read_text(encoding="ascii").splitlines() if log.exists() else []
