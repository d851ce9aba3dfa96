"""Everything that reads the world: GitHub, git, the automation registry, the installed evaluator.

The evaluator core is pure; this package observes external state and hands it
over as plain, exact-key documents (references/collector.md,
references/github-observations.md). Its rooms:

- ``github/``: every read of GitHub, through ghapi (the client, its ETag
  cache and token lookup, the normalization of one pull request);
- ``git/``: every git invocation, through one hardened runner;
- ``registry``: the Codex automation registry (TOML files);
- ``evaluator_digest``: the digest that pins the installed skill code and its packages;
- ``errors``: the one error base, ``ObserveError``, and the catalogue of its codes;
- ``network``: the one route to github.com (proxy, extra CA) the GitHub client
  and git share;
- ``collect``: one function per collector subcommand, observing and assembling;
- ``cli``: the collector's command line (scripts/collect_state.py).

Imports point at the core: this package may import ``evaluator``, never
``simulator``, ``tools``, ``bench`` or ``tests``; ``evaluator`` never imports
it. Within it, ``github/``, ``git/``, ``registry`` and ``evaluator_digest``
import only ``evaluator``, ``observe.errors`` and (the two wings)
``observe.network``, never each other; only ``collect`` brings them
together, and ``cli`` imports only ``collect``, ``errors`` and ``network``
(with ``evaluator``) (tests/test_import_direction.py checks all of this).
"""
