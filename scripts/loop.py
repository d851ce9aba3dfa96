#!/usr/bin/env python3
"""Entry point of the github-codex-pr-loop hands (see act/cli.py)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from act.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
