"""The skill's version: the one place it is written.

Every script's ``--version`` prints it, pyproject.toml reads it
(``[tool.setuptools.dynamic]``) and install.py reads it from this file's
source without importing the skill; a distribution manifest that carries a
version must carry this one.
"""

VERSION = "0.1.0"
