"""Exact-key, strict-type models, one module per document family.

Owns the shape of every document (references/schemas/ is generated from
these). Every model is a pydantic model derived from ``common.Strict``
(strict, extra keys forbidden, frozen); ``common`` binds each format of
``evaluator.formats`` to its stable error code and words pydantic's errors as
violations.

May import: ``evaluator.policy``, ``evaluator.formats``, ``evaluator.errors``,
``evaluator.vocabulary`` (the names of checks, actions and operations, which
imports nothing) and pydantic; never the rules, the machine or the checks.

These modules do not use ``from __future__ import annotations``: ``Strict``
reads each annotation as the type it names when the class is defined.
"""
