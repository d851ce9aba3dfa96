"""Write the bundled fixtures from tools/samples.py (run: python -m tools.build_fixtures).

Each negative fixture breaks exactly one rule and lists the codes the evaluator
must report; this script refuses to write a case whose codes differ, so a
fixture can never silently start testing something else.
"""

from __future__ import annotations

import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
# The skill's code directories hold no bytecode cache (references/automation-registry.md):
# none is written, but into the tests' cache at the root when they import this module.
sys.dont_write_bytecode = sys.dont_write_bytecode or sys.pycache_prefix != str(ROOT / ".pycache")
sys.path.insert(0, str(ROOT))

from evaluator import markers, policy  # noqa: E402
from evaluator.canonical import text_digest  # noqa: E402
from tools import samples  # noqa: E402
from tools.mutations import Mutation, both, deleter, setter  # noqa: E402

FIXTURES = ROOT / "fixtures"


def dump(value: Any) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


# --- valid initial documents -------------------------------------------------


def valid_initial() -> dict[str, dict[str, Any]]:
    documents: dict[str, dict[str, Any]] = {}
    for reuse in (False, True):
        for create_branch in (True, False):
            for commands in (True, False):
                for commit in (True, False):
                    for push in (True, False):
                        name = "-".join(
                            (
                                "reuse-pr" if reuse else "new-pr",
                                "branch" if create_branch else "no-branch",
                                "validate" if commands else "no-validate",
                                "commit" if commit else "no-commit",
                                "push" if push else "no-push",
                            )
                        )
                        mode = "autonomous" if (commands ^ push) else "approval-gated"
                        documents[name] = samples.initial_document(
                            mode=mode,
                            reuse_pr=reuse,
                            create_branch=create_branch,
                            commands=commands,
                            commit=commit,
                            push=push,
                        )
    snapshot = samples.initial_snapshot(paths=["docs/grüße.md", "src/app.py", "src/日本語.txt"])
    manifest = samples.initial_manifest(
        snapshot, title="Grüße: ünïcödé 日本語 🚀", body="Body with “quotes”, U+2028:\u2028 and emoji 🐙"
    )
    documents["new-pr-non-ascii-text"] = samples.seal_initial(snapshot, manifest)
    documents["explicit-risk-acceptance"], _ = samples.explicit_risk_initial()
    return documents


# --- invalid initial documents -----------------------------------------------


def on_snapshot(change: Mutation) -> Callable[[dict], dict]:
    def apply(document: dict) -> dict:
        snapshot = copy.deepcopy(document["initial_snapshot"])
        change(snapshot)
        return samples.seal_initial(snapshot, document["initial_manifest"])

    return apply


def on_manifest(change: Mutation) -> Callable[[dict], dict]:
    def apply(document: dict) -> dict:
        manifest = copy.deepcopy(document["initial_manifest"])
        change(manifest)
        return samples.seal_initial(document["initial_snapshot"], manifest, rehash_snapshot=False)

    return apply


def on_document(change: Mutation) -> Callable[[dict], dict]:
    def apply(document: dict) -> dict:
        document = copy.deepcopy(document)
        change(document)
        return document

    return apply


def set_template(template: str) -> Mutation:
    return both(
        setter("review_request_body_template", template),
        setter("review_request_body_template_sha256", text_digest(template)),
    )


def set_paths(paths: list[str], records: list[str] | None = None) -> Mutation:
    records = paths if records is None else records
    return both(setter("paths", paths), setter("path_records", [samples.path_record(p) for p in records]))


def set_existing(**values: Any) -> Mutation:
    return both(*(setter("existing_pr_" + key, value) for key, value in values.items()))


MARKER = markers.request_marker(samples.RUN_ID, 0)
OPS = [
    "fetch-base",
    "create-branch",
    "run-validation",
    "stage-files",
    "commit",
    "push",
    "create-pr",
    "request-codex-review",
    "bootstrap-automation",
]
REUSE = dict(
    number=42, base_branch="main", head_branch="codex/fix-greeting", head_sha=samples.sha("head"), same_repository=True
)
ISOLATED_HASH = samples.hexdigest("some-record")
B = ("execution_boundary",)
G = B + ("git",)

INVALID_INITIAL: list[tuple[str, list[str], Callable[[dict], dict]]] = [
    ("missing-key--snapshot-diff-sha256", ["missing-key"], on_snapshot(deleter("diff_sha256"))),
    ("missing-key--manifest-run-id", ["missing-key"], on_manifest(deleter("run_id"))),
    ("missing-key--initial-plan-hash", ["missing-key"], on_document(deleter("initial_plan_hash"))),
    ("missing-key--path-record-field", ["missing-key"], on_snapshot(deleter("path_records", 0, "lstat_chain_sha256"))),
    ("missing-key--existing-pr-field-omitted", ["missing-key"], on_snapshot(deleter("existing_pr_number"))),
    ("unknown-key--snapshot-extra", ["unknown-key"], on_snapshot(setter("note", "hello"))),
    (
        "unknown-key--manifest-key-in-other-case",
        ["missing-key", "unknown-key"],
        on_manifest(both(deleter("mode"), setter("Mode", "autonomous"))),
    ),
    ("unknown-key--git-boundary-extra", ["unknown-key"], on_snapshot(setter(*G, "lfs_disabled", True))),
    ("unknown-key--command-extra", ["unknown-key"], on_snapshot(setter("commands", 0, "cwd", "/tmp"))),
    ("unknown-key--outer-extra", ["unknown-key"], on_document(setter("approved", True))),
    ("wrong-type--user-id-string", ["wrong-type"], on_snapshot(setter("authenticated_user_id", "583231"))),
    ("wrong-type--commit-required-integer", ["wrong-type"], on_snapshot(setter("commit_required", 1))),
    ("wrong-type--version-string", ["wrong-type"], on_manifest(setter("version", "1"))),
    ("wrong-type--paths-string", ["wrong-type"], on_snapshot(setter("paths", "src/app.py"))),
    ("wrong-type--policy-version-boolean", ["wrong-type"], on_snapshot(setter("policy_schema_version", True))),
    ("wrong-type--title-digest-null", ["wrong-type"], on_manifest(setter("pr_title_sha256", None))),
    (
        "wrong-type--same-repository-string",
        ["wrong-type"],
        on_snapshot(set_existing(**{**REUSE, "same_repository": "true"})),
    ),
    ("wrong-type--snapshot-array", ["wrong-type"], on_document(setter("initial_snapshot", []))),
    ("version-unsupported--two", ["version-unsupported"], on_manifest(setter("version", 2))),
    (
        "policy-schema-version-unsupported--two",
        ["policy-schema-version-unsupported"],
        on_snapshot(setter("policy_schema_version", 2)),
    ),
    ("not-positive--user-id-zero", ["not-positive"], on_snapshot(setter("authenticated_user_id", 0))),
    (
        "not-positive--existing-pr-number-negative",
        ["not-positive"],
        on_snapshot(set_existing(**{**REUSE, "number": -42})),
    ),
    ("invalid-sha--uppercase-base", ["invalid-sha"], on_snapshot(setter("base_sha", samples.sha("base").upper()))),
    ("invalid-sha--short-head", ["invalid-sha"], on_snapshot(setter("current_head_sha", samples.sha("head")[:12]))),
    (
        "invalid-digest--uppercase-diff",
        ["invalid-digest"],
        on_snapshot(setter("diff_sha256", samples.hexdigest("diff").upper())),
    ),
    (
        "invalid-digest--one-uppercase-digit-body",
        ["invalid-digest"],
        on_manifest(setter("pr_body_sha256", "A" + text_digest("Fixes the greeting.")[1:])),
    ),
    (
        "invalid-digest--prefixed-scope",
        ["invalid-digest"],
        on_snapshot(setter(*B, "filesystem_read_scope_sha256", "sha256:" + samples.hexdigest("x"))),
    ),
    ("invalid-run-id--31-digits", ["invalid-run-id"], on_manifest(setter("run_id", samples.RUN_ID[:31]))),
    ("invalid-branch-name--leading-dash", ["invalid-branch-name"], on_snapshot(setter("head_branch", "-evil"))),
    ("invalid-branch-name--double-dot", ["invalid-branch-name"], on_snapshot(setter("head_branch", "feature..x"))),
    ("invalid-branch-name--lock-suffix", ["invalid-branch-name"], on_snapshot(setter("head_branch", "feature/x.lock"))),
    ("invalid-branch-name--space", ["invalid-branch-name"], on_snapshot(setter("base_branch", "main branch"))),
    ("invalid-branch-name--at-brace", ["invalid-branch-name"], on_snapshot(setter("head_branch", "x@{1}"))),
    ("invalid-remote-name--slash", ["invalid-remote-name"], on_snapshot(setter("remote_name", "origin/evil"))),
    ("invalid-remote-name--option", ["invalid-remote-name"], on_snapshot(setter("remote_name", "-cfoo"))),
    (
        "invalid-repository--uppercase",
        ["invalid-repository"],
        on_snapshot(setter("repository", "Octo-Org/Hello-World")),
    ),
    ("invalid-repository--no-owner", ["invalid-repository"], on_snapshot(setter("repository", "hello-world"))),
    ("invalid-path--dot-dot", ["invalid-path"], on_snapshot(set_paths(["../etc/passwd"]))),
    ("invalid-path--git-dir", ["invalid-path"], on_snapshot(set_paths([".git/config"]))),
    ("invalid-path--git-dir-uppercase", ["invalid-path"], on_snapshot(set_paths([".GIT/hooks/pre-commit"]))),
    ("invalid-path--ntfs-short-name", ["invalid-path"], on_snapshot(set_paths(["git~1/config"]))),
    ("invalid-path--ntfs-trailing-dot", ["invalid-path"], on_snapshot(set_paths(["src/.git./config"]))),
    ("invalid-path--hfs-ignorable", ["invalid-path"], on_snapshot(set_paths([".g\u200cit/config"]))),
    ("invalid-path--absolute", ["invalid-path"], on_snapshot(set_paths(["/etc/passwd"]))),
    ("invalid-path--backslash", ["invalid-path"], on_snapshot(set_paths(["src\\app.py"]))),
    ("invalid-path--empty-component", ["invalid-path"], on_snapshot(set_paths(["src//app.py"]))),
    ("invalid-path--control-character", ["invalid-path"], on_snapshot(set_paths(["src/app\n.py"]))),
    ("invalid-path--gitattributes", ["invalid-path"], on_snapshot(set_paths(["src/.gitattributes"]))),
    ("invalid-path--gitmodules-ntfs-dot", ["invalid-path"], on_snapshot(set_paths([".gitmodules."]))),
    (
        "paths-not-sorted--reversed",
        ["path-records-not-sorted", "paths-not-sorted"],
        on_snapshot(set_paths(["tests/test_app.py", "src/app.py"])),
    ),
    (
        "paths-not-unique--duplicate",
        ["path-records-mismatch", "paths-not-unique"],
        on_snapshot(set_paths(["src/app.py", "src/app.py"])),
    ),
    (
        "path-records-not-sorted--records-only",
        ["path-records-not-sorted"],
        on_snapshot(set_paths(["src/app.py", "tests/test_app.py"], ["tests/test_app.py", "src/app.py"])),
    ),
    (
        "path-records-mismatch--other-path",
        ["path-records-mismatch"],
        on_snapshot(set_paths(["src/app.py", "tests/test_app.py"], ["src/app.py", "tests/test_other.py"])),
    ),
    (
        "path-records-mismatch--missing-record",
        ["path-records-mismatch"],
        on_snapshot(set_paths(["src/app.py", "tests/test_app.py"], ["src/app.py"])),
    ),
    (
        "path-record-outside-worktree--symlink-escape",
        ["path-record-outside-worktree"],
        on_snapshot(setter("path_records", 0, "inside_worktree", False)),
    ),
    (
        "path-record-in-git-metadata--symlink-into-git",
        ["path-record-in-git-metadata"],
        on_snapshot(setter("path_records", 1, "outside_git_metadata", False)),
    ),
    ("paths-empty--commit-without-paths", ["paths-empty"], on_snapshot(set_paths([]))),
    ("command-argv-empty--no-executable", ["command-argv-empty"], on_snapshot(setter("commands", 0, "argv", []))),
    (
        "command-argv-not-absolute--bare-name",
        ["command-argv-not-absolute"],
        on_snapshot(setter("commands", 0, "argv", ["python3", "-m", "pytest"])),
    ),
    (
        "command-argv-not-absolute--dot-dot",
        ["command-argv-not-absolute"],
        on_snapshot(setter("commands", 1, "argv", ["/usr/../bin/sh", "-c", "true"])),
    ),
    (
        "command-argv-not-absolute--double-slash",
        ["command-argv-not-absolute"],
        on_snapshot(setter("commands", 0, "argv", ["//usr/bin/python3", "-V"])),
    ),
    (
        "command-argv-not-absolute--trailing-slash",
        ["command-argv-not-absolute"],
        on_snapshot(setter("commands", 0, "argv", ["/usr/bin/", "-V"])),
    ),
    (
        "command-argv-not-absolute--root",
        ["command-argv-not-absolute"],
        on_snapshot(setter("commands", 0, "argv", ["/"])),
    ),
    (
        "command-argv-invalid--nul-byte",
        ["command-argv-invalid"],
        on_snapshot(setter("commands", 0, "argv", ["/usr/bin/python3", "-c\x00x"])),
    ),
    (
        "heartbeat-rrule-not-policy--every-minute",
        ["heartbeat-rrule-not-policy"],
        on_snapshot(setter("heartbeat_rrule", "FREQ=MINUTELY;INTERVAL=1")),
    ),
    ("host-not-policy--enterprise", ["host-not-policy"], on_snapshot(setter("host", "github.example.com"))),
    ("head-branch-equals-base--main", ["head-branch-equals-base"], on_snapshot(setter("head_branch", "main"))),
    (
        "existing-pr-partial--number-only",
        ["existing-pr-partial", "operations-mismatch"],
        on_snapshot(setter("existing_pr_number", 42)),
    ),
    (
        "existing-pr-cross-repository--fork",
        ["existing-pr-cross-repository", "operations-mismatch"],
        on_snapshot(set_existing(**{**REUSE, "same_repository": False})),
    ),
    (
        "existing-pr-base-branch-mismatch--develop",
        ["existing-pr-base-branch-mismatch", "operations-mismatch"],
        on_snapshot(set_existing(**{**REUSE, "base_branch": "develop"})),
    ),
    (
        "existing-pr-head-branch-mismatch--other",
        ["existing-pr-head-branch-mismatch", "operations-mismatch"],
        on_snapshot(set_existing(**{**REUSE, "head_branch": "codex/other"})),
    ),
    (
        "existing-pr-head-sha-mismatch--moved",
        ["existing-pr-head-sha-mismatch", "operations-mismatch"],
        on_snapshot(set_existing(**{**REUSE, "head_sha": samples.sha("elsewhere")})),
    ),
    ("mode-invalid--unknown", ["mode-invalid"], on_manifest(setter("mode", "yolo"))),
    ("mode-invalid--case", ["mode-invalid"], on_manifest(setter("mode", "Autonomous"))),
    (
        "mode-report-only-has-no-plan--report-only",
        ["mode-report-only-has-no-plan"],
        on_manifest(setter("mode", "report-only")),
    ),
    ("invalid-value--kind-remediation", ["invalid-value"], on_manifest(setter("kind", "remediation"))),
    ("invalid-value--isolation-none", ["invalid-value"], on_snapshot(setter(*B, "isolation", "none"))),
    ("invalid-value--credential-ssh", ["invalid-value"], on_snapshot(setter(*G, "credential_strategy", "ssh-agent"))),
    (
        "operations-mismatch--push-missing",
        ["operations-mismatch"],
        on_manifest(setter("operations", [op for op in OPS if op != "push"])),
    ),
    (
        "operations-mismatch--commit-before-stage",
        ["operations-mismatch"],
        on_manifest(setter("operations", OPS[:3] + ["commit", "stage-files"] + OPS[5:])),
    ),
    (
        "operations-mismatch--create-branch-not-required",
        ["operations-mismatch"],
        on_snapshot(setter("create_branch_required", False)),
    ),
    ("operations-mismatch--validation-without-commands", ["operations-mismatch"], on_snapshot(setter("commands", []))),
    ("operations-mismatch--push-not-required", ["operations-mismatch"], on_snapshot(setter("push_required", False))),
    ("operations-mismatch--create-pr-while-reusing", ["operations-mismatch"], on_snapshot(set_existing(**REUSE))),
    (
        "operations-mismatch--both-pr-operations",
        ["operations-mismatch"],
        on_manifest(setter("operations", OPS[:7] + ["reuse-pr"] + OPS[7:])),
    ),
    (
        "operations-mismatch--bootstrap-first",
        ["operations-mismatch"],
        on_manifest(setter("operations", OPS[-1:] + OPS[:-1])),
    ),
    (
        "review-template-missing-mention--no-codex",
        ["review-template-missing-mention"],
        on_manifest(set_template("please review\n" + MARKER)),
    ),
    (
        "review-template-missing-mention--longer-handle",
        ["review-template-missing-mention"],
        on_manifest(set_template("@codexbot review\n" + MARKER)),
    ),
    (
        "review-template-marker-count--claim-marker-inside",
        ["review-template-marker-count"],
        on_manifest(
            set_template(
                "@codex review\n"
                + MARKER
                + "\n"
                + markers.claim_marker(samples.RUN_ID, "remediation", "0" * 64, "1:" + "0" * 40, "0" * 32)
            )
        ),
    ),
    (
        "review-template-placeholder-count--two",
        ["review-template-marker-missing", "review-template-placeholder-count"],
        on_manifest(set_template("@codex review {{FINAL_HEAD_SHA}} {{FINAL_HEAD_SHA}}")),
    ),
    (
        "review-template-placeholder-count--twice-with-marker",
        ["review-template-placeholder-count"],
        on_manifest(set_template("@codex review {{FINAL_HEAD_SHA}}\n" + MARKER)),
    ),
    (
        "review-template-unknown-placeholder--base-sha",
        ["review-template-unknown-placeholder"],
        on_manifest(set_template("@codex review against {{BASE_SHA}}\n" + MARKER)),
    ),
    (
        "review-template-stray-braces--open",
        ["review-template-stray-braces"],
        on_manifest(set_template("@codex review {{ now\n" + MARKER)),
    ),
    (
        "review-template-marker-missing--none",
        ["review-template-marker-missing"],
        on_manifest(set_template("@codex review sha={{FINAL_HEAD_SHA}}")),
    ),
    (
        "review-template-marker-mismatch--round-one",
        ["review-template-marker-mismatch"],
        on_manifest(set_template("@codex review\n" + markers.request_marker(samples.RUN_ID, 1))),
    ),
    (
        "review-template-marker-mismatch--other-run",
        ["review-template-marker-mismatch"],
        on_manifest(set_template("@codex review\n" + markers.request_marker("0" * 32, 0))),
    ),
    (
        "review-template-marker-count--two-markers",
        ["review-template-marker-count"],
        on_manifest(set_template("@codex review\n" + MARKER + "\n<!-- github-codex-pr-loop-request run=x -->")),
    ),
    (
        "review-template-sha256-mismatch--stale",
        ["review-template-sha256-mismatch"],
        on_manifest(setter("review_request_body_template", "@codex review now\n" + MARKER)),
    ),
    (
        "prompt-template-not-v1--trailing-newline",
        ["prompt-template-not-v1"],
        on_manifest(
            both(
                setter("automation_prompt_template", policy.AUTOMATION_PROMPT_TEMPLATE_V1 + "\n"),
                setter("automation_prompt_template_sha256", text_digest(policy.AUTOMATION_PROMPT_TEMPLATE_V1 + "\n")),
            )
        ),
    ),
    (
        "prompt-template-not-v1--crlf",
        ["prompt-template-not-v1"],
        on_manifest(
            both(
                setter("automation_prompt_template", policy.AUTOMATION_PROMPT_TEMPLATE_V1.replace("\n", "\r\n")),
                setter(
                    "automation_prompt_template_sha256",
                    text_digest(policy.AUTOMATION_PROMPT_TEMPLATE_V1.replace("\n", "\r\n")),
                ),
            )
        ),
    ),
    (
        "prompt-template-sha256-mismatch--other-digest",
        ["prompt-template-sha256-mismatch"],
        on_manifest(setter("automation_prompt_template_sha256", samples.hexdigest("prompt"))),
    ),
    (
        "snapshot-sha256-mismatch--snapshot-edited-after",
        ["snapshot-sha256-mismatch"],
        on_document(setter("initial_snapshot", "diff_sha256", samples.hexdigest("other-diff"))),
    ),
    (
        "initial-plan-hash-mismatch--manifest-edited-after",
        ["initial-plan-hash-mismatch"],
        on_document(setter("initial_manifest", "pr_title_sha256", text_digest("Another title"))),
    ),
    (
        "initial-plan-hash-mismatch--snapshot-digest-given",
        ["initial-plan-hash-mismatch"],
        on_document(lambda d: d.__setitem__("initial_plan_hash", d["initial_manifest"]["snapshot_sha256"])),
    ),
    (
        "risk-acceptance-not-null--isolated-with-digest",
        ["risk-acceptance-not-null"],
        on_snapshot(setter(*B, "risk_acceptance_sha256", ISOLATED_HASH)),
    ),
    (
        "boundary-profile-mismatch--isolated-explicit-profile",
        ["boundary-profile-mismatch"],
        on_snapshot(setter(*G, "profile", policy.EXPLICIT_RISK_PROFILE)),
    ),
    (
        "boundary-protection-disabled--hooks",
        ["boundary-protection-disabled"],
        on_snapshot(setter(*G, "hooks_disabled", False)),
    ),
    (
        "boundary-protection-disabled--protect-ntfs",
        ["boundary-protection-disabled"],
        on_snapshot(setter(*G, "protect_ntfs_enabled", False)),
    ),
    (
        "boundary-clean-filters-active--lfs",
        ["boundary-clean-filters-active"],
        on_snapshot(setter(*G, "active_clean_filters", ["lfs"])),
    ),
    (
        "risk-acceptance-missing--explicit-null",
        ["risk-acceptance-missing"],
        on_snapshot(
            both(setter(*B, "isolation", policy.EXPLICIT_RISK), setter(*G, "profile", policy.EXPLICIT_RISK_PROFILE))
        ),
    ),
    (
        "boundary-profile-mismatch--explicit-sanitized-profile",
        ["boundary-profile-mismatch"],
        on_snapshot(
            both(setter(*B, "isolation", policy.EXPLICIT_RISK), setter(*B, "risk_acceptance_sha256", ISOLATED_HASH))
        ),
    ),
    (
        "clean-filters-not-sorted--explicit",
        ["clean-filters-not-sorted"],
        on_snapshot(
            both(
                setter(*B, "isolation", policy.EXPLICIT_RISK),
                setter(*B, "risk_acceptance_sha256", ISOLATED_HASH),
                setter(*G, "profile", policy.EXPLICIT_RISK_PROFILE),
                setter(*G, "active_clean_filters", ["lfs", "crypt"]),
            )
        ),
    ),
]


def write_suite(
    folder: Path,
    valid: dict[str, dict],
    invalid: list[tuple[str, list[str], Callable]],
    check: Callable[[dict], dict],
    base: dict,
) -> None:
    for sub in ("valid", "invalid"):
        target = folder / sub
        target.mkdir(parents=True, exist_ok=True)
        for stale in target.glob("*.json"):
            stale.unlink()
    for name, document in valid.items():
        result = check(document)
        if not result["ok"]:
            raise SystemExit(f"valid fixture {name} is rejected: {result['errors']}")
        (folder / "valid" / f"{name}.json").write_text(dump(document), encoding="utf-8")
    expected: dict[str, list[str]] = {}
    for name, codes, mutate in invalid:
        if name in expected:
            raise SystemExit(f"duplicate fixture name {name}")
        document = mutate(base)
        result = check(document)
        observed = sorted({error["code"] for error in result.get("errors", [])})
        if result["ok"] or observed != sorted(codes):
            raise SystemExit(f"invalid fixture {name}: expected {sorted(codes)}, evaluator says {observed}")
        (folder / "invalid" / f"{name}.json").write_text(dump(document), encoding="utf-8")
        expected[name] = sorted(codes)
    (folder / "invalid" / "expected.json").write_text(dump(expected), encoding="utf-8")


def _fresh(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.json"):
        stale.unlink()
    return folder


def cli_args(options: dict[str, str]) -> list[str]:
    args = []
    if "approved_hash" in options:
        args += ["--approved-hash", options["approved_hash"]]
    if "now" in options:
        args += ["--now", options["now"]]
    return args


def write_state_suites() -> int:
    from evaluator.checks import run_state
    from tools import plan_fixtures
    from tools.state_scenarios import scenarios

    count = 0
    folder = _fresh(FIXTURES / "state" / "scenarios")
    expected: dict[str, dict] = {}
    for name, state, options, action, reasons in scenarios():
        result = run_state(state, approved_hash=options.get("approved_hash"), now=options.get("now"))
        if not result["ok"] or (result["action"], result["reasons"]) != (action, reasons):
            raise SystemExit(f"scenario {name}: expected {action} {reasons}, evaluator says {result}")
        (folder / f"{name}.json").write_text(dump(state), encoding="utf-8")
        expected[name] = {"action": action, "args": cli_args(options), "reasons": reasons}
    (folder / "expected.json").write_text(dump(expected), encoding="utf-8")
    count += len(expected)

    for suite, cases in (
        ("state/invalid", plan_fixtures.STATE_INVALID),
        ("remediation/invalid", plan_fixtures.REMEDIATION_INVALID),
        ("finalization/invalid", plan_fixtures.FINALIZATION_INVALID),
    ):
        folder, codes_by_name = _fresh(FIXTURES / suite), {}
        for name, codes, build in cases:
            document = build()
            result = run_state(document, approved_hash=None, now=None)
            observed = sorted({error["code"] for error in result.get("errors", [])})
            if result["ok"] or observed != sorted(codes):
                raise SystemExit(f"{suite}/{name}: expected {sorted(codes)}, evaluator says {observed or result}")
            (folder / f"{name}.json").write_text(dump(document), encoding="utf-8")
            codes_by_name[name] = sorted(codes)
        (folder / "expected.json").write_text(dump(codes_by_name), encoding="utf-8")
        count += len(codes_by_name)

    for suite, cases in (
        ("remediation/stale", plan_fixtures.REMEDIATION_STALE),
        ("finalization/stale", plan_fixtures.FINALIZATION_STALE),
    ):
        folder, paths_by_name = _fresh(FIXTURES / suite), {}
        for name, paths, build in cases:
            document = build()
            result = run_state(document, approved_hash=None, now=None)
            observed = sorted({v["path"] for v in result.get("plan_violations", [])})
            if not result["ok"] or result["action"] != "state-inconsistency" or observed != sorted(paths):
                raise SystemExit(
                    f"{suite}/{name}: expected drift at {sorted(paths)}, evaluator says {observed or result}"
                )
            (folder / f"{name}.json").write_text(dump(document), encoding="utf-8")
            paths_by_name[name] = {"reasons": result["reasons"], "paths": sorted(paths)}
        (folder / "expected.json").write_text(dump(paths_by_name), encoding="utf-8")
        count += len(paths_by_name)
    return count


def write_prompt_suite() -> int:
    from evaluator.checks import run_prompt
    from tools import prompt_fixtures

    def check(document: dict) -> dict:
        return run_prompt(document)

    cases = [
        (name, codes, lambda _base, build=build: build()) for name, codes, build in prompt_fixtures.INVALID_PROMPTS
    ]
    write_suite(FIXTURES / "prompt", prompt_fixtures.valid_prompts(), cases, check, {})
    return len(cases)


def main() -> None:
    from evaluator.checks import run_initial

    def check_initial(document: dict) -> dict:
        return run_initial(document, approved_hash=None, risk_record=None)

    write_suite(FIXTURES / "initial", valid_initial(), INVALID_INITIAL, check_initial, samples.initial_document())
    _, record = samples.explicit_risk_initial()
    (FIXTURES / "initial" / "risk-acceptance-record.json").write_text(dump(record), encoding="utf-8")
    print(f"wrote {len(INVALID_INITIAL)} invalid initial fixtures")
    print(f"wrote {write_state_suites()} recurring state fixtures")
    print(f"wrote {write_prompt_suite()} invalid prompt fixtures")


if __name__ == "__main__":
    main()
