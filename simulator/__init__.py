"""A simulated GitHub, Codex reviewer and Codex automation host on 127.0.0.1, for the tests and the benchmarks.

Owns the world model (``world``, ``clock``, ``gitrepo``), the REST and GraphQL
API served over it (``rest``, ``graphql_api``, ``app``; ``contract/`` holds
the published contract they are checked against), the scripted Codex
reviewer (``codex``) and automation host (``automations``), the observer
tests' one-PR scenario (``fakegithub``), and the HTTPS front door, git smart
HTTP and gh stand-in (``front``, ``git_http``, ``gh``). simulator/README.md is
its manual. It imports nothing of this project: the code under test reaches
it over the network, never through an import (tests/test_import_direction.py).
"""

# How often a serving loop looks up to notice stop(): a server stops within
# this, so the many short-lived servers of a test run do not each cost half a
# second (werkzeug's default poll) when they are torn down.
SERVE_POLL_SECONDS = 0.05
