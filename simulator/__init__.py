"""A simulated GitHub on 127.0.0.1, for the tests and the benchmarks.

Owns the fake REST and GraphQL API (``fakegithub``), the TLS front door for
``github.com`` and ``api.github.com`` (``front``), git smart HTTP
(``git_http``) and a stand-in for the gh CLI (``gh``). It serves recorded
payload shapes from fixtures/github and imports nothing of this project:
the code under test reaches it over the network, never through an import.
"""
