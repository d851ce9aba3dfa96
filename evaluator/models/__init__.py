"""Exact-key, strict-type models, one module per document family.

Owns the shape of every document (references/schemas/ is generated from
these). ``common`` holds the checker every model uses and binds each format of
``evaluator.formats`` to its stable error code.

May import: ``evaluator.policy``, ``evaluator.formats``, ``evaluator.errors``;
never the rules, the machine or the checks.

These modules do not use ``from __future__ import annotations``: the checker
reads each annotation as the type it names when the class is defined.
"""
