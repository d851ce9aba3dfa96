"""Whether this process runs inside Codex: the environment markers its sandbox and launchers set.

The state directory names Codex's setting when Codex's sandbox refuses it
(act/core/statedir.py), and the sandbox check answers every refusal inside
Codex with the settings that grant it (act/edge/sandbox.py).
"""

import os
from collections.abc import Mapping

# Variables Codex sets in the commands it runs: the sandbox's network switch, macOS's seatbelt, the thread,
# and the npm launcher's (inherited by everything the CLI starts).
NETWORK_DISABLED = "CODEX_SANDBOX_NETWORK_DISABLED"
CODEX_MARKERS = (NETWORK_DISABLED, "CODEX_SANDBOX", "CODEX_THREAD_ID", "CODEX_MANAGED_BY_NPM")


def in_codex(environ: Mapping[str, str] = os.environ) -> bool:
    return any(environ.get(name) for name in CODEX_MARKERS)
