"""The pure core of github-codex-pr-loop: no I/O, no subprocess, no network.

Owns every definition the loop's safety rests on: strict JSON and digests
(``canonical``), the policy values (``policy``), every text format
(``formats``) and loop marker (``markers``), the document models
(``models/``), their rules (``rules/``), what a state means (``facts``), the
action table (``machine``), the action registry (``actions``), the state use
case (``decision``), the three checks (``checks``), rendering (``render``,
``report``) and the command line (``cli``).

May import: the standard library and pydantic (the models' validator,
``models/``); nothing else of the project and no other third-party package
(the scripts check the pinned ones before they run it). The observers
(``observe/``) import the core, never the reverse (a test checks it).
"""
