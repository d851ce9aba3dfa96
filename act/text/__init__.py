"""What the hands tell people: the approval summary, what changed since a plan, refusals.

Refusals never give away a pending hash. Pure functions of documents already built and judged; they import only the
core (act/core/) and the evaluator's policy and canonical forms.
"""
