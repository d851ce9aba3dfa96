"""The pure core of github-codex-pr-loop: no I/O, no subprocess, no network."""
