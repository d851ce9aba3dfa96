"""The hands' core: what the loop remembers and the one description of a wakeup.

Errors and their next steps, the state directory and its inter-process
lock, the typed models of every file the loop keeps (the journal: the
ledger of each plan's operations, the wakeup, the hand-offs pending), the
evaluator's verdicts read back, and the steps table that ``loop.py next``
executes (act/core/steps.py). It imports nothing of the hands beyond
itself: the edges (act/edge/), the texts (act/text/) and the commands
(act/*.py) build on it, never the other way round.
"""
