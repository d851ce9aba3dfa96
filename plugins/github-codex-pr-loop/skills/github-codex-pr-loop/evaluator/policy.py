"""Every policy value of github-codex-pr-loop, in one place.

A reviewer finds the schedule, the timeout, the round limit, the trusted bot,
the modes, the execution boundary forms, the templates and the input limits
here and nowhere else (references/actions.md#policy-decisions). The models
take their ``Literal`` types from here. Changing a value is a change of policy
and of the evaluator digest that every wakeup pins. Imports nothing of the
project.
"""

from __future__ import annotations

import re
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

# Live loops (automations that can still wake) a machine may hold before init
# refuses another without the person's word: with more than four heartbeat
# automations targeting threads the Codex desktop app has been reported to
# loop resuming them, so a fifth is started only with --allow-many-loops.
MAX_LIVE_LOOPS = 4

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

# --- What Codex writes on a pull request ----------------------------------------
#
# Every Codex text pattern, as data (references/github-observations.md, "Codex
# replies", lists each form with an example). The patterns are matched on a
# normalised body (evaluator/codex_text.py): markdown images and links reduced
# to their text, typographic quotes and apostrophes folded to ASCII, every run
# of whitespace collapsed to one space. Codex's wording drifts, so phrases are
# matched without regard to case; hex digits never are (a sha is lowercase).
# Formats drift: anything a trusted Codex reply says that matches none of
# these is an unrecognised reply, and the loop stops on it.

# Typographic characters GitHub stores as typed, folded before matching.
CODEX_TEXT_FOLDS: dict[str, str] = {
    **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'"),
    **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"'),
}

# The in-place summary comment: its first line, the table's header cells (a
# fourth, trigger column may follow), the status words, and the review kinds
# (only a code review answers "@codex review"; a security review row is read
# and deliberately left out).
CODEX_SUMMARY_MARKER = "<!-- codex-pull-request-review-summary -->"
CODEX_SUMMARY_HEADER = ("Review", "Status", "Commit")
CODEX_SUMMARY_STATUSES: dict[str, str] = {"Running": "running", "Completed": "completed", "Failed": "failed"}
CODEX_SUMMARY_REVIEW_KINDS: dict[str, bool] = {"Code Review": True, "Security Review": False}
CODEX_SUMMARY_REVIEW_CELL = re.compile(
    r"(?:\S{1,4}\s+)?(?:\*\*(?P<bold>[A-Za-z ]{1,40})\*\*|(?P<bare>[A-Za-z ]{1,40}))"
)
CODEX_SUMMARY_STATUS_CELL = re.compile(
    r"(?:\S{1,4}\s+)?\*\*(?P<status>[A-Za-z ]{1,40})\*\*(?:\s+since)?"
    r'(?:\s+(?:<relative-time datetime="[0-9TZ:.+-]{1,40}">[^<>|]{0,60}</relative-time>|[0-9TZ:.+-]{10,40}))?'
)
CODEX_SUMMARY_COMMIT_CELL = re.compile(r"`(?P<sha>[0-9a-f]{7,40})`")
CODEX_TABLE_SEPARATOR_CELL = re.compile(r":?-{1,}:?")

# "**Reviewed commit:** `<first 7-40 hex of the sha>`" in review bodies and comments.
CODEX_REVIEWED_COMMIT = re.compile(r"(?i:\*\*reviewed commit:\*\*) `([0-9a-f]{7,40})`")
# A blob permalink to a file and line, as a finding posted as a plain comment
# carries it: the sha is the commit the finding was written against.
CODEX_BLOB_PERMALINK = re.compile(r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/blob/([0-9a-f]{40})/")
# The same permalink with its path and line range, for a person's report of a finding.
CODEX_BLOB_PERMALINK_LINES = re.compile(
    r"https://github\.com/[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+/blob/(?P<sha>[0-9a-f]{40})/(?P<path>[^\s#?)]+)"
    r"(?:#L(?P<start>[0-9]{1,9})(?:-L(?P<end>[0-9]{1,9}))?)?"
)
# A finding's priority, as its badge names it ("P1 Badge" in the normalised text).
CODEX_PRIORITY = re.compile(r"\b(P[0-3]) Badge\b", re.IGNORECASE)
# A priority badge: an image whose text is "P0 Badge" .. "P3 Badge" (the
# normalised form of ![P1 Badge](https://img.shields.io/badge/P1-orange?style=flat)).
# Any trusted reply that carries one is findings, whatever else it says.
CODEX_PRIORITY_BADGE = re.compile(r"\bP[0-3] Badge\b", re.IGNORECASE)
# The heading a Codex review with findings opens with ("### 💡 Codex Review").
CODEX_REVIEW_HEADING = re.compile(r"^#{1,6} (?:\S{1,2} )?Codex Review\b", re.IGNORECASE)
# The clean text. A clean comment begins with it; with a Reviewed commit line
# it names its head, without one it is the 2025 one-line form ("Codex Review:
# Didn't find any major issues. Swish!"), which binds to a head only the way
# the +1 reaction does (references/github-observations.md, "Clean forms").
CODEX_CLEAN_OPENING = re.compile(r"^Codex Review: Didn't find any major issues\b", re.IGNORECASE)
CODEX_CLEAN_TEXT = re.compile(r"\bDidn't find any major issues\b", re.IGNORECASE)
# The clean answer worded as a task summary, as Codex writes it when the
# request carried text after "@codex review" (it answers as a task): the reply
# opens with a "Summary" heading and says in so many words that no major issue
# was found. Either part alone is no clean answer.
CODEX_TASK_SUMMARY_OPENING = re.compile(r"^(?:#{1,6} Summary\b|\*\*Summary:?\*\*)", re.IGNORECASE)
CODEX_TASK_SUMMARY_CLEAN = re.compile(
    r"\b(?:Didn't find any major issues|No major issues (?:were )?found)\b", re.IGNORECASE
)
# Findings in prose, without a priority badge: an issue comment that opens
# with Codex's review heading, or carries the line its reviews with findings
# carry, or ends a finding with the feedback line every Codex finding ends
# with. A reply that reads as findings this way and says the clean text too is
# no safe reading: it is unrecognised.
CODEX_FINDINGS_PROSE = re.compile(r"\bHere are some automated review suggestions\b", re.IGNORECASE)
CODEX_FINDING_FEEDBACK = re.compile(r"\bUseful\? React with \S{1,2} / \S{1,2}", re.IGNORECASE)
# What a review request looks like, whoever posts it: a line that begins
# "@codex review". A Codex reply about a commit the loop never asked about,
# posted after such a request by someone else, answers that request.
CODEX_REVIEW_TRIGGER = re.compile(r"(?m)^@codex review\b")

# Replies that mean no review will come for the request: neither findings nor
# clean. Each is (kind, variant, pattern); the kind is what the stop reports.
ReplyUnavailableKind = Literal["usage-limit", "setup", "error"]
UNAVAILABLE_KINDS: tuple[str, ...] = get_args(ReplyUnavailableKind)
# Not a reply: the collector's observation that Codex never picked the
# request up (below), carried as an entry of ``unavailable_replies`` whose id
# is the request comment's and whose time is the observation's.
UnacknowledgedKind = Literal["unacknowledged"]
UNACKNOWLEDGED: str = get_args(UnacknowledgedKind)[0]
UnavailableKind = Literal[ReplyUnavailableKind, UnacknowledgedKind]
CODEX_UNAVAILABLE_FORMS: tuple[tuple[str, str, re.Pattern[str]], ...] = (
    ("usage-limit", "reached-your-limits", re.compile(r"\bYou have reached your Codex usage limits\b", re.IGNORECASE)),
    ("usage-limit", "limits-have-been-reached", re.compile(r"\bCodex usage limits have been reached\b", re.IGNORECASE)),
    ("setup", "create-environment", re.compile(r"\bTo use Codex here, create an environment\b", re.IGNORECASE)),
    (
        "setup",
        "create-account",
        re.compile(r"\bTo use Codex here, create a Codex account and connect to GitHub\b", re.IGNORECASE),
    ),
    ("setup", "workspace-deactivated", re.compile(r"\bThis workspace is deactivated\b", re.IGNORECASE)),
    ("error", "something-went-wrong", re.compile(r"^Codex Review: Something went wrong\b", re.IGNORECASE)),
    ("error", "could-not-complete", re.compile(r"^Codex couldn't complete this request\b", re.IGNORECASE)),
)

# Codex acknowledges a review request by reacting 👀 ("eyes") on the request
# comment when it picks it up, usually within seconds and under load within a
# minute or two, long before its answer (1-10 minutes). A request that, this
# long after it was posted, carries no 👀 by the trusted account and has no
# Codex answer of any kind (no reply, review, summary row or +1) was never
# picked up: dropped, or the quota silently exhausted. The loop then stops as
# the reviewer not responding instead of spending the rest of REQUEST_TIMEOUT
# (ten more heartbeats, each a model turn) on a review that will not come.
# Ten minutes is five heartbeats: several times the slowest pick-up seen, and
# within the one to fifteen minutes other loops allow for it.
REQUEST_ACKNOWLEDGEMENT_TIMEOUT = timedelta(minutes=10)
CODEX_ACKNOWLEDGEMENT_REACTION = "eyes"

# A summary comment's Completed row is not an answer until it has stood for
# one heartbeat: GitHub may show the row before the review it stands for is
# served, and a finding must never lose that race.
SUMMARY_COMPLETED_SETTLE = timedelta(minutes=2)

# What the stop on an unrecognised reply shows of it: the normalised text, at
# most this many characters, links and anything that looks like a credential
# replaced, so a person sees what Codex said without the stop echoing a secret.
CODEX_EXCERPT_MAX_CHARS = 80
CODEX_EXCERPT_LINK = re.compile(r"https?://\S+")
CODEX_EXCERPT_SECRET = re.compile(r"[A-Za-z0-9_+/=-]{24,}")
