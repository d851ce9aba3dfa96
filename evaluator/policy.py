"""Every policy value of github-codex-pr-loop, in one place.

A reviewer finds the schedule, the timeout, the round limit, the trusted bot,
the modes, the execution boundary forms, the templates and the input limits
here and nowhere else (references/actions.md#policy-decisions). The models
take their ``Literal`` types from here. Changing a value is a change of policy
and of the evaluator digest that every wakeup pins. Imports nothing of the
project.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Literal, get_args

# Document versions.
MANIFEST_VERSION = 1
POLICY_SCHEMA_VERSION = 1

# GitHub.
HOST = "github.com"
TRUSTED_CODEX_BOT_ID = 199175422  # chatgpt-codex-connector[bot]; trusted by numeric id only
TrustedBotType = Literal["Bot"]
TRUSTED_CODEX_BOT_TYPE: str = get_args(TrustedBotType)[0]

# Automation schedule: the heartbeat every wakeup runs on.
HEARTBEAT_RRULE = "FREQ=MINUTELY;INTERVAL=2"

# How long one review request may stay unanswered. Reviews usually land within
# 1-10 minutes; 30 minutes is where other loops give up. A timeout is never a
# clean signal.
REQUEST_TIMEOUT = timedelta(minutes=30)

# A request that timed out is never posted again (the action table has no
# such row): the canonical marker carries only run and round, so a second post
# of the same round would make the request checkpoint ambiguous, and a new
# round would count a fix that never happened. The loop stops; the user decides.

# Rounds of remediation before the loop stops. Loops that never converge are
# the most common failure seen (18-27 rounds); five fixes without a clean
# review means a person should look.
MAX_FIX_ROUNDS = 5

# A claim older than this without its plan's effects observed is abandoned:
# the loop stops instead of waiting forever or executing the plan again.
CLAIM_TIMEOUT = timedelta(minutes=20)

# One collection (a run of the collector) talks to GitHub for at most this
# long, reads, retries and waits included, then fails closed: well inside the
# two-minute heartbeat, so wakeups never pile up behind a slow server.
COLLECTION_DEADLINE_SECONDS = 60
# The largest GitHub answer read, counted after decompression (a 100-item
# page of long comments is a few MB; a gzip bomb is refused at this size).
MAX_GITHUB_RESPONSE_BYTES = 32 * 1024 * 1024

# Strict JSON input limits (an oversized input is a clean rejection).
MAX_DOCUMENT_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 32
MAX_SAFE_INTEGER = 2**53 - 1

# Modes: two that may write, one that only reports.
WriteMode = Literal["autonomous", "approval-gated"]
Mode = Literal[WriteMode, "report-only"]
WRITE_MODES: tuple[str, ...] = get_args(WriteMode)

# The locks a claim takes: a remediation, phase one of a finalization, and
# phase two (the cleanup), which has a lock of its own.
ClaimKind = Literal["remediation", "finalization", "cleanup"]

# Execution boundary forms.
IsolatedForm = Literal["no-network-minimal-env-checkout-only"]
ExplicitRiskForm = Literal["explicit-risk-acceptance"]
Isolation = Literal[IsolatedForm, ExplicitRiskForm]
ISOLATED: str = get_args(IsolatedForm)[0]
EXPLICIT_RISK: str = get_args(ExplicitRiskForm)[0]
GitProfile = Literal["sanitized-gh-https-v1", "explicit-risk-acceptance-v1"]
ISOLATED_PROFILE, EXPLICIT_RISK_PROFILE = get_args(GitProfile)
CredentialStrategy = Literal["gh-cli-https"]
CREDENTIAL_STRATEGY: str = get_args(CredentialStrategy)[0]
GIT_PROTECTIONS = (
    "external_diff_disabled",
    "fsmonitor_disabled",
    "hooks_disabled",
    "protect_hfs_enabled",
    "protect_ntfs_enabled",
    "protocol_restricted",
    "signing_disabled",
    "textconv_disabled",
)
# Guarantees a risk acceptance record may name as unavailable.
RISK_GUARANTEES = (
    ("network-isolation", "minimal-environment", "checkout-only-filesystem")
    + tuple(name.replace("_", "-") for name in GIT_PROTECTIONS)
    + ("no-active-clean-filters",)
)

# Templates.
FINAL_HEAD_PLACEHOLDER = "{{FINAL_HEAD_SHA}}"
AUTOMATION_KEY_PLACEHOLDER = "{{AUTOMATION_KEY}}"
CHECKPOINT_PLACEHOLDER = "{{BOOTSTRAP_CHECKPOINT_JSON}}"

AUTOMATION_PROMPT_TEMPLATE_V1 = "\n".join(
    (
        "Continue $github-codex-pr-loop from the exact checkpoint below."
        " Re-fetch all external state and follow only the installed evaluator's emitted action.",
        "Loop key: " + AUTOMATION_KEY_PLACEHOLDER,
        "Bootstrap checkpoint JSON: " + CHECKPOINT_PLACEHOLDER,
    )
)
