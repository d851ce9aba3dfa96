"""Cross-field rules, one module per document, each returning violations.

Owns every rule a validated model can still break (references/errors.md lists
their codes). A rule never decides an action.

May import: ``evaluator.models``, ``evaluator.policy``, ``evaluator.formats``,
``evaluator.markers``, ``evaluator.canonical``, ``evaluator.errors``,
``evaluator.render``, and each other; never the machine, the decision layer,
the checks or the CLI.
"""
