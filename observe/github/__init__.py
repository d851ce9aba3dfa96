"""The GitHub wing: every read of GitHub, through ghapi's transport.

Owns the fail-closed client (``client``), its ETag cache and token lookup,
and the normalization of a pull request's comments, reviews, threads and
gates into one observation (``pull_request``). May import ``evaluator`` (for
policy, digests and the loop-marker grammar) and nothing else of this project.
"""
