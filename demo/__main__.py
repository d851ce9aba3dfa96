"""``python -m demo``: see demo/cli.py."""

import sys

from demo.cli import main

sys.exit(main())
