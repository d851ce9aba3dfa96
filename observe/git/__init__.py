"""The git wing: every git invocation, through one hardened runner.

Owns the sanitized runner (``runner``), the configuration and attributes
checks (``config``), path records (``paths``) and the snapshot digests and
execution boundary of a checkout (``observer``). May import ``evaluator`` and
nothing else of this project.
"""
