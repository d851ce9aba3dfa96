"""The GitHub wing: every read of GitHub, through ghapi's operations and transport.

Owns the guarded channel every request to GitHub goes through (``channel``:
ghapi's GhApi and transport within the deadline and the size cap; the hands'
writes use it too, from act/edge/ghops.py), the fail-closed reader (``client``,
ghapi's GET operations only), the one client factory (``connect``), its ETag
cache (``cache``) and token lookup (``token``), the field checks (``fields``), the normalization of a pull
request's comments, reviews, threads and gates into one typed observation
(``pull_request``, ``observation``), and the open pull requests of the
initial snapshot (``pulls``). Its error is ``GitHubObservationError``
(``errors``). May import ``evaluator`` (policy, digests, the loop-marker
grammar), ``observe.errors`` and ``observe.network``, and nothing else of
this project (references/github-observations.md).
"""
