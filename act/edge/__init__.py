"""The hands' edges: every contact with the world outside the state directory.

Observations through the collector's own code (sources), GitHub writes
(ghops), git writes (gitops, diff), the evaluator run as a separate process
(judge), validation commands inside the execution boundary (validation),
the machine's and Codex's sandbox checks (sandbox, preflight), what ``init``
infers from a checkout (inference) and progress lines on standard error.
Each imports only the core (act/core/) and the collector and evaluator.
"""
