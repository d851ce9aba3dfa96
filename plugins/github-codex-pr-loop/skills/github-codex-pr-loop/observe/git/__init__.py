"""The git wing: every git invocation, through one hardened runner.

Owns the sanitized runner and ``GitObservationError`` (``runner``), the
configuration and attributes checks (``config``), path records (``paths``)
and the snapshot digests and execution boundary of a checkout
(``observer``). May import ``evaluator``, ``observe.errors`` and
``observe.network``, and nothing else of this project
(references/git-execution-boundary.md, references/digests.md).
"""
