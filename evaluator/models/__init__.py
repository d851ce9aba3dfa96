"""Exact-key, strict-type pydantic models, one module per document family.

Owns the shape of every document (references/schemas/ is generated from
these). ``common`` binds each format of ``evaluator.formats`` to its stable
error code and bridges pydantic errors to violations.

May import: pydantic, ``evaluator.policy``, ``evaluator.formats``,
``evaluator.errors``; never the rules, the machine or the checks.
"""
