"""Everything that talks to GitHub, git or the automation registry.

The evaluator core is pure; this package fetches external state and hands it
over as plain, normalized documents (see references/github-observations.md).
"""
