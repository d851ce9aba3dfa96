"""Pure builders: observations and the person's choices in, exact-key documents out.

No I/O and no judgement: a builder arranges what it is given into the shape
references/manifest-schema.md and references/recurring-state.md describe,
computing every digest with the evaluator's canonical functions. Whether the
result may be acted on is for the evaluator to say (act/edge/judge.py); the
evaluator never imports or trusts these builders.
"""
