"""A whole approval-gated loop, run locally against the simulated GitHub, Codex and automation host.

``python -m demo`` (``--help`` lists the scenarios). The demo plays the person
(approving by the exact hash printed), Codex (scripted reviews), other actors
(a push by someone else, a closed pull request) and the agent's one free act
(an in-place edit of a planned file); every other step is the real command an
agent runs (``scripts/loop``), run as a subprocess. See demo/README.md.
"""
