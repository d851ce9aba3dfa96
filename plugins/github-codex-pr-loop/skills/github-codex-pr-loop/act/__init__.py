"""The hands of github-codex-pr-loop: build the documents, keep the loop's state, manage its automation.

observe reads the world, the evaluator decides, act acts. Nothing here
decides whether a write is permitted: every document the hands build is
judged by the installed evaluator, run as a separate process
(``act/edge/judge.py``), and the hands do only what its emitted action says.
Nothing imports act. Commands, the state directory and the approval
protocol: references/hands.md.
"""
