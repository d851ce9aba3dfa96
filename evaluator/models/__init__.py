"""Exact-key, strict-type pydantic models, one module per document family.

Owns the shape of every document (references/schemas/ is generated from
these). ``common`` binds each format of ``evaluator.formats`` to its stable
error code and bridges pydantic errors to violations.

May import: pydantic, ``evaluator.policy``, ``evaluator.formats``,
``evaluator.errors``; never the rules, the machine or the checks.

These modules do not use ``from __future__ import annotations``: with it every
field annotation is a string that pydantic compiles and evaluates again when
it builds the model, a few milliseconds of every CLI start-up
(bench/README.md).
"""
