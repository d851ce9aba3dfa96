"""What to do after each refusal of the hands: one sentence per code, appended to its message.

A refusal permits no write; this says how to go on, so that no reader is left
with a dead end. Every code of the hands' catalogue (references/errors.md,
section 11) has one; a test holds the two equal. Where the next step is the
person's, it says so: the agent never approves, deletes or repairs on their
behalf.
"""

from __future__ import annotations

from collections.abc import Mapping

_TELL = "tell the person, with this message; no write is permitted"
_RERUN = "run the same command again (each write looks for its own evidence first, so it is never made twice)"
_NEW_LOOP = "this plan is spent: let the loop go on (the next wakeup plans again), or start over with `loop.py init`"
_STATE = "restore the file as the hands wrote it, or start a new loop with `loop.py init`; never edit it by hand"

NEXT_STEPS: Mapping[str, str] = {
    "evaluator-rejected": "the plan cannot run as built: " + _TELL,
    "evaluator-failed": "reinstall the skill (python install.py) if it persists; " + _RERUN,
    "intent-pr-mismatch": "rerun `loop.py init` with the --reuse-pr or --head the message names",
    "pull-request-texts-unreadable": "give the pull request a title on GitHub, then rerun `loop.py init`",
    "github-permission-missing": "tell the person which permission the message names and how to grant it; once "
    "granted, run `loop.py init` again (nothing was written)",
    "plan-changed": "undo the change, or start over with `loop.py init` and have the new plan approved",
    "approval-missing": "show the person the approval summary and wait for their reply with the full hash",
    "approval-no-pending-plan": "nothing awaits approval: follow the last command's `next`",
    "approval-not-needed": "run the plan's next command (`loop.py execute` or the wakeup's row)",
    "approval-hash-malformed": "ask the person to reply with the full hash from the approval summary",
    "approval-hash-stale": "show the person the pending plan's summary and ask for its full hash",
    "approval-hash-mismatch": "ask the person to reply with the full hash from the approval summary",
    "action-not-plan-remediation": "obey the action in `evaluation` (the single commands' table, references/hands.md)",
    "action-not-plan-finalization": "obey the action in `evaluation` (the single commands' table, references/hands.md)",
    "plan-not-accepted": "obey the action in `evaluation` (the single commands' table, references/hands.md)",
    "pending-plan-missing": "choose the paths with `loop.py plan-remediation --path P...`",
    "prompt-not-rendered": "pass the automation's prompt byte for byte (`--automation-key KEY` reads it itself)",
    "automation-not-unique": _TELL,
    "automation-prompt-unreadable": _TELL,
    "run-id-mismatch": "pass the --state-dir of the prompt's run (`loop.py list` shows each loop's)",
    "wakeup-claim-open": "continue it with `loop.py wakeup --continue`, or end it with `loop.py end-wakeup`",
    "loop-busy": "another command of this loop is still running: let it finish (never end or undo what it does), "
    "then run this command again; a process that died has let go already",
    "wakeup-not-open": "start a wakeup with `loop.py wakeup`",
    "wakeup-id-mismatch": "start a wakeup with `loop.py wakeup`; the claim belongs to another wakeup",
    "automation-not-started": "create it with `loop.py automation-create` (after the initial plan ran)",
    "automation-already-requested": "go on with `loop.py verify-automation` (it prints any payload still pending)",
    "automation-stage-mismatch": "run `loop.py next`: it prints the payload still pending, if any (`loop.py status` "
    "shows the recorded stage)",
    "automation-id-not-ours": "pass the automationId the tool answered for this loop's create call",
    "automation-drift": "do not activate or continue: " + _TELL,
    "automation-not-deleted": "pass the delete payload to automation_update again, then `loop.py verify-automation`",
    "automation-delete-not-permitted": "the loop is still running: follow the last wakeup's `next`",
    "prompt-rejected": "delete the PAUSED stub with `loop.py automation-delete`, then tell the person the errors",
    "repository-not-inferred": "rerun `loop.py init` with --repository OWNER/REPO (and --base BRANCH)",
    "base-not-inferred": "rerun `loop.py init` with --base BRANCH (the branch the pull request merges into)",
    "head-not-inferred": "switch the checkout to the change's branch, or rerun `loop.py init` with --head BRANCH",
    "too-many-live-loops": "tell the person which loops are live; finish or stop one first, or rerun `loop.py init` "
    "with --allow-many-loops only if they say so",
    "state-dir-exists": "name a new --state-dir, or continue the existing loop with its own commands",
    "state-dir-inside-checkout": "name a --state-dir outside the checkout (or none: the default is outside)",
    "state-dir-missing": "pass the state_dir that `loop.py init` printed (`loop.py list` shows them)",
    "loop-still-scheduled": "delete the automation first (a stop's `loop.py automation-delete`, or the person)",
    "state-dir-unsafe": "make it a plain directory of yours with mode 0700 (chmod 700), then run again",
    "state-dir-unusable": "check the directory's permissions and free space, then run again",
    "codex-sandbox-refused": "tell the person the settings the message names (they change Codex's configuration, "
    "not you), then run the same command again in a session started with them",
    "temp-dir-unusable": "set TMPDIR to a directory you can write, then run again",
    "git-dir-unwritable": "run the loop as a user who can write the checkout's .git, then run again",
    "filesystem-refused": "make the file the message names writable (or tell the person the sandbox setting it "
    "names), then run the same command again",
    "state-file-missing": _STATE,
    "state-file-unsafe": "make the file a plain 0600 file of yours (chmod 600), then run again",
    "state-file-invalid": _STATE,
    "commit-identity-missing": "set the identity as the message says, then rerun `loop.py init`",
    "gh-login-missing": "log in with `gh auth login --hostname github.com` (or set GH_TOKEN), then run again",
    "push-route-unreachable": "fix what the message names (network, proxy, CA, the login's access), then run again",
    "route-changed": "run without that flag: the loop keeps the route it was started with (its setup.json)",
    "claim-plan-not-pending": "pass the pending plan's hash (`loop.py status`, `pending_plan`)",
    "no-plan": "build a plan first (`loop.py init`, or the wakeup's row)",
    "operation-not-next": "run `loop.py execute` without --operation: it takes the plan's next operation",
    "plan-not-claimed": "post the claim with `loop.py claim`, then `loop.py wakeup --continue`",
    "action-not-execute": "obey the last wakeup's action (`loop.py wakeup --continue` collects again)",
    "action-not-claim": "obey the last wakeup's action (`loop.py wakeup --continue` collects again)",
    "claim-body-invalid": _TELL,
    "plan-drifted": "end the wakeup (`loop.py end-wakeup`); the next wakeup judges the new state",
    "isolation-unavailable": "run where network namespaces can be made (`unshare -rn true` must work), or ask the "
    "person whether they accept the losses the message names (only their word allows the `--accept-risk` it names)",
    "risk-acceptance-not-needed": "run `loop.py init` again without --accept-risk",
    "risk-acceptance-mismatch": "ask the person about exactly the losses the message names; only their word allows "
    "the `--accept-risk` it names",
    "risk-acceptance-exceeded": _TELL,
    "risk-record-not-kept": _TELL,
    "risk-record-changed": _TELL,
    "validation-failed": "read the output in the state directory, fix the change, then have a new plan built",
    "base-moved": _NEW_LOOP,
    "head-moved": "restore HEAD to the plan's head, or " + _NEW_LOOP,
    "branch-exists": "choose another --head, or reuse the branch's PR with --reuse-pr, and rerun `loop.py init`",
    "worktree-outside-plan": "name each file with --path, or commit, stash or remove the others, then run again",
    "commit-not-verified": _TELL,
    "commit-diff-mismatch": _TELL,
    "remote-head-moved": "someone else pushed the branch: " + _TELL,
    "remote-tip-ambiguous": _TELL,
    "push-not-verified": _RERUN,
    "pr-text-mismatch": _STATE,
    "pull-request-mismatch": "the pull request changed on GitHub: " + _TELL,
    "review-template-mismatch": _STATE,
    "head-not-verified": _RERUN,
    "marker-repeated": _TELL,
    "marker-body-mismatch": _TELL,
    "thread-root-not-found": "the thread is gone from GitHub: end the wakeup; the next one judges the new state",
    "thread-not-found": "the thread is gone from GitHub: end the wakeup; the next one judges the new state",
    "write-not-verified": _RERUN,
    "edit-not-in-place": "tell the person which files were replaced and that this plan cannot run (the change stays "
    "in the checkout); end the wakeup with `loop.py end-wakeup`; the loop stops at a later wakeup, and a new loop "
    "(`loop.py init`) carries the change",
    "path-records-changed": "restore the file (edit in place, see `edit_safely`), or let the next wakeup plan anew",
    "github-write-failed": "check the network route to github.com, then " + _RERUN,
    "github-write-refused": "give the token the permission the message names (see SKILL.md), then " + _RERUN,
    "github-write-uncertain": _RERUN,
    "github-ambiguous-pull-request": "close the extra pull requests from this head branch, then run again",
    "github-unexpected-shape": _TELL,
}
