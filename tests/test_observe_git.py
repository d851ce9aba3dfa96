"""The git observer against real repositories built in tmp_path (no network).

Each hostile setting is first shown to run under plain git (the sanity check),
so a "sentinel never appears" assertion cannot pass merely because the trap
was broken.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest

from evaluator import policy
from evaluator.canonical import canonical_text
from observe.git.observer import (
    DIFF_OPTIONS,
    GitObservationError,
    GitObserver,
    command_definition_sha256,
    parse_github_https_url,
    path_records,
    protections,
    recheck_path_records,
    transport_url_sha256,
)

URL = "https://github.com/octo/demo.git"
GIT_KEYS = {
    "active_clean_filters",
    "attributes_snapshot_sha256",
    "config_snapshot_sha256",
    "credential_strategy",
    "external_diff_disabled",
    "fsmonitor_disabled",
    "git_metadata_snapshot_sha256",
    "hooks_disabled",
    "invocation_sha256",
    "profile",
    "protect_hfs_enabled",
    "protect_ntfs_enabled",
    "protocol_restricted",
    "signing_disabled",
    "textconv_disabled",
    "transport_url_sha256",
}


def plain_git(repo: Path, *args: str) -> str:
    """Ordinary git for building fixtures, kept away from the machine's own config."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(repo.parent),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    result = subprocess.run(["git", "-C", str(repo), *args], env=env, capture_output=True, text=True, timeout=30)
    assert result.returncode == 0, result.stderr
    return result.stdout


def trap(tmp_path: Path, name: str) -> tuple[Path, Path]:
    """An executable that leaves a sentinel file when anything runs it."""
    sentinel = tmp_path / f"{name}.ran"
    script = tmp_path / "bin" / name
    script.parent.mkdir(exist_ok=True)
    script.write_text(f"#!/bin/sh\ntouch {sentinel}\ncat\n")
    script.chmod(0o755)
    return script, sentinel


@pytest.fixture
def gh(tmp_path: Path) -> tuple[Path, Path]:
    return trap(tmp_path, "gh")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def make_repo(tmp_path: Path) -> Path:
    """A one-commit checkout with origin at the canonical URL and origin/main at HEAD."""
    root = tmp_path / "demo"
    root.mkdir()
    plain_git(root, "init", "-q", "-b", "main")
    (root / "README.md").write_text("demo\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    plain_git(root, "add", ".")
    plain_git(root, "commit", "-q", "-m", "init")
    plain_git(root, "remote", "add", "origin", URL)
    plain_git(root, "update-ref", "refs/remotes/origin/main", "HEAD")
    return root


def observe(repo: Path, gh, **kwargs) -> dict:
    with GitObserver(str(repo), gh_path=str(gh[0]), **kwargs) as observer:
        return observer.initial_snapshot_fields("octo/demo", "main", ["README.md", "src/app.py"])


def run_every_observation(repo: Path, gh) -> None:
    """Every git command the observer has, with no isolation gate that could stop early."""
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        base = observer.base_sha("origin", "main")
        observer.diff_sha256(base)
        observer.tree_diff_sha256(base, observer.current_head_sha())
        observer.worktree_status_sha256()
        observer.remote_refs_sha256("origin")
        observer.git_object("octo/demo", isolated=False)


def test_snapshot_fields_have_the_spec_shape_and_values(repo, gh):
    fields = observe(repo, gh)
    head = plain_git(repo, "rev-parse", "HEAD").strip()
    assert fields["base_sha"] == head == fields["current_head_sha"]
    assert fields["remote_name"] == "origin"
    boundary = fields["execution_boundary"]
    assert set(boundary) == {
        "filesystem_read_scope_sha256",
        "filesystem_write_scope_sha256",
        "git",
        "isolation",
        "risk_acceptance_sha256",
    }
    assert set(boundary["git"]) == GIT_KEYS
    assert boundary["isolation"] == policy.ISOLATED and boundary["risk_acceptance_sha256"] is None
    git = boundary["git"]
    assert git["profile"] == policy.ISOLATED_PROFILE and git["credential_strategy"] == policy.CREDENTIAL_STRATEGY
    assert all(git[name] is True for name in policy.GIT_PROTECTIONS) and git["active_clean_filters"] == []
    assert git["transport_url_sha256"] == transport_url_sha256(URL)
    for key in ("diff_sha256", "worktree_status_sha256", "remote_refs_sha256"):
        assert re.fullmatch(r"[0-9a-f]{64}", fields[key])
    assert [r["path"] for r in fields["path_records"]] == ["README.md", "src/app.py"]
    assert all(r["inside_worktree"] and r["outside_git_metadata"] for r in fields["path_records"])


def test_explicit_form_binds_the_acceptance_digest(repo, gh):
    acceptance = "ab" * 32
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        boundary = observer.execution_boundary("octo/demo", risk_acceptance_sha256=acceptance)
        with pytest.raises(GitObservationError) as error:
            observer.execution_boundary("octo/demo", risk_acceptance_sha256="AB" * 32)
    assert boundary["isolation"] == policy.EXPLICIT_RISK and boundary["risk_acceptance_sha256"] == acceptance
    assert boundary["git"]["profile"] == policy.EXPLICIT_RISK_PROFILE
    assert error.value.code == "git-risk-acceptance-invalid"


def test_digests_are_stable_across_two_observers(repo, gh):
    (repo / "README.md").write_text("changed\n")
    (repo / "notes.txt").write_text("untracked\n")
    assert observe(repo, gh) == observe(repo, gh)


def _git_digests(fields: dict) -> dict:
    git = fields["execution_boundary"]["git"]
    return {
        "diff": fields["diff_sha256"],
        "status": fields["worktree_status_sha256"],
        "remote_refs": fields["remote_refs_sha256"],
        "base": fields["base_sha"],
        "config": git["config_snapshot_sha256"],
        "attributes": git["attributes_snapshot_sha256"],
        "metadata": git["git_metadata_snapshot_sha256"],
        "invocation": git["invocation_sha256"],
    }


def _edit_file(repo):
    (repo / "src" / "app.py").write_text("print('bye')\n")


def _add_untracked(repo):
    (repo / "new.txt").write_text("new\n")


def _move_remote_ref(repo):
    plain_git(repo, "commit", "-q", "--allow-empty", "-m", "more")
    plain_git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    plain_git(repo, "reset", "-q", "--soft", "HEAD~1")


def _change_config(repo):
    plain_git(repo, "config", "core.autocrlf", "false")


def _add_attributes(repo):
    (repo / "src" / ".gitattributes").write_text("*.py text\n")


def _add_unused_filter(repo):
    plain_git(repo, "config", "filter.unused.clean", "cat")


@pytest.mark.parametrize(
    "mutate, changed, unchanged",
    [
        (_edit_file, {"diff", "status"}, {"remote_refs", "config", "metadata"}),
        (_add_untracked, {"diff", "status"}, {"remote_refs", "config", "metadata", "attributes"}),
        # An empty commit moves the base but not its tree: the diff covers content only.
        (_move_remote_ref, {"remote_refs", "base", "metadata"}, {"config", "status", "diff"}),
        (_change_config, {"config"}, {"diff", "status", "invocation", "metadata"}),
        (_add_attributes, {"attributes", "status", "diff"}, {"config", "metadata"}),
        # A new driver changes what the runner neutralizes, so the invocation too.
        (_add_unused_filter, {"config", "invocation"}, {"diff", "attributes"}),
    ],
)
def test_digests_change_with_what_they_cover(repo, gh, mutate, changed, unchanged):
    before = _git_digests(observe(repo, gh))
    mutate(repo)
    after = _git_digests(observe(repo, gh))
    assert {key for key in before if before[key] != after[key]} >= changed
    assert all(before[key] == after[key] for key in unchanged)


def test_editing_an_already_modified_file_changes_the_diff_not_the_status(repo, gh):
    _edit_file(repo)
    before = _git_digests(observe(repo, gh))
    (repo / "src" / "app.py").write_text("print('again')\n")
    after = _git_digests(observe(repo, gh))
    assert before["diff"] != after["diff"] and before["status"] == after["status"]


def test_worktree_diff_equals_the_diff_the_commit_will_carry(repo, gh):
    _edit_file(repo)
    _add_untracked(repo)
    (repo / "README.md").unlink()
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        base = observer.base_sha("origin", "main")
        before = observer.diff_sha256(base)
        index_before = (repo / ".git" / "index").read_bytes()
        plain_git(repo, "add", "-A")
        plain_git(repo, "commit", "-q", "-m", "change")
        head = plain_git(repo, "rev-parse", "HEAD").strip()
        assert observer.tree_diff_sha256(base, head) == before == observer.diff_sha256(base)
    assert index_before != (repo / ".git" / "index").read_bytes()  # the commit, not the observer, wrote it


def test_observing_the_diff_never_writes_the_real_index(repo, gh):
    _add_untracked(repo)
    index = (repo / ".git" / "index").read_bytes()
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        observer.diff_sha256(observer.base_sha("origin", "main"))
    assert (repo / ".git" / "index").read_bytes() == index
    assert "new.txt" in plain_git(repo, "status", "--porcelain")  # still untracked, not intent-to-add


def test_clean_filter_never_runs_and_is_listed_as_active(repo, gh, tmp_path):
    (repo / ".gitattributes").write_text("*.dat filter=evil\n")
    (repo / "data.dat").write_text("one\n")
    plain_git(repo, "add", ".")
    plain_git(repo, "commit", "-q", "-m", "data")
    plain_git(repo, "update-ref", "refs/remotes/origin/main", "HEAD")
    driver, sentinel = trap(tmp_path, "evil-filter")
    plain_git(repo, "config", "filter.evil.clean", str(driver))
    (repo / "data.dat").write_text("two\n")
    plain_git(repo, "diff", "HEAD")
    assert sentinel.exists(), "sanity: plain git runs the clean filter"
    sentinel.unlink()

    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        assert observer.active_clean_filters() == ["evil"]
        with pytest.raises(GitObservationError) as error:
            observer.execution_boundary("octo/demo")
        explicit = observer.execution_boundary("octo/demo", risk_acceptance_sha256="0" * 64)
        observer.diff_sha256(observer.base_sha("origin", "main"))
        observer.worktree_status_sha256()
        observer.runner.run(["add", "data.dat"])  # even staging through the runner skips the driver
        argv = observer.runner.argv_prefix()
    assert not sentinel.exists()
    assert "filter.evil.clean=" in argv
    assert error.value.code == "git-isolation-unavailable"
    assert explicit["git"]["active_clean_filters"] == ["evil"]
    assert explicit["git"]["profile"] == policy.EXPLICIT_RISK_PROFILE


def test_a_configured_but_unreferenced_driver_is_neutralized_not_active(repo, gh):
    _add_unused_filter(repo)
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        assert observer.active_clean_filters() == []
        assert "filter.unused.process=" in observer.runner.argv_prefix()


def test_fsmonitor_program_never_runs(repo, gh, tmp_path):
    monitor, sentinel = trap(tmp_path, "fsmonitor")
    plain_git(repo, "config", "core.fsmonitor", str(monitor))
    plain_git(repo, "status")
    assert sentinel.exists(), "sanity: plain git runs the fsmonitor program"
    sentinel.unlink()
    _edit_file(repo)
    _add_untracked(repo)
    run_every_observation(repo, gh)
    assert not sentinel.exists()


def test_hooks_never_run_from_hooks_path_or_git_dir(repo, gh, tmp_path):
    hook, sentinel = trap(tmp_path, "pre-commit")
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "pre-commit").symlink_to(hook)
    (hooks / "post-checkout").symlink_to(hook)
    (repo / ".git" / "hooks" / "pre-commit").symlink_to(hook)
    plain_git(repo, "commit", "-q", "--allow-empty", "-m", "sanity")
    assert sentinel.exists(), "sanity: plain git runs the default hooks directory"
    sentinel.unlink()
    plain_git(repo, "config", "core.hooksPath", str(hooks))
    plain_git(repo, "commit", "-q", "--allow-empty", "-m", "sanity")
    assert sentinel.exists(), "sanity: plain git runs core.hooksPath"
    sentinel.unlink()

    run_every_observation(repo, gh)
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
        observer.runner.run([*identity, "commit", "-q", "--allow-empty", "-m", "through the runner"])
        observer.runner.run(["checkout", "-q", "-b", "topic"])
    assert not sentinel.exists()
    assert not gh[1].exists(), "observation never runs the credential helper"


@pytest.mark.parametrize(
    "key, value, code",
    [
        ("url.https://evil.example/.insteadOf", "https://github.com/", "git-insteadof-present"),
        ("url.https://evil.example/.pushInsteadOf", "https://github.com/", "git-insteadof-present"),
        ("include.path", "extra.config", "git-include-present"),
        ("includeIf.onbranch:main.path", "extra.config", "git-include-present"),
        ("http.https://github.com.extraHeader", "Authorization: x", "git-http-url-config-present"),
        ("http.sslVerify", "false", "git-http-config-present"),
        ("remote.https://github.com/octo/demo.git.url", "https://evil.example/x.git", "git-url-named-remote-present"),
        ("filter.a=b.clean", "cat", "git-filter-driver-unneutralizable"),
        # Hooks defined in config (git 2.54+) ignore core.hooksPath: refused on the key alone.
        ("hook.audit.command", "/tmp/audit-hook", "git-config-hook-present"),
        ("hook.audit.event", "pre-commit", "git-config-hook-present"),
    ],
)
def test_config_that_dash_c_cannot_override_is_refused_first(repo, gh, tmp_path, key, value, code):
    monitor, sentinel = trap(tmp_path, "fsmonitor")
    # An included file that would plant an fsmonitor: refusal must come before anything reads it.
    (repo / ".git" / "extra.config").write_text(f"[core]\n\tfsmonitor = {monitor}\n")
    plain_git(repo, "config", key, value)
    with pytest.raises(GitObservationError) as error:
        GitObserver(str(repo), gh_path=str(gh[0]))
    assert error.value.code == code
    assert value not in error.value.message  # values may be tokens: messages name keys only
    assert not sentinel.exists()


@pytest.mark.parametrize(
    "url",
    [
        "http://github.com/octo/demo.git",
        "HTTPS://github.com/octo/demo.git",
        "https://GitHub.com/octo/demo.git",
        "https://github.com/Octo/demo.git",
        "https://github.com/octo/demo",
        "https://github.com/octo/demo.git/",
        "https://github.com/octo/demo.git?x=1",
        "https://github.com/octo/demo.git#frag",
        "https://user@github.com/octo/demo.git",
        "https://x-access-token:tok@github.com/octo/demo.git",
        "https://github.com:443/octo/demo.git",
        "https://github.com/octo/%64emo.git",
        "https://github.com/octo/../demo.git",
        "https://github.com/./octo/demo.git",
        "https://github.com/octo/..git",
        "https://github.com//octo/demo.git",
        "https://github.com/octo/sub/demo.git",
        "https://www.github.com/octo/demo.git",
        "https://github.com.evil.example/octo/demo.git",
        "https://github.com/-octo/demo.git",
        "https://github.com/octo/demo.git\n",
        " https://github.com/octo/demo.git",
        "https://github.com\\octo\\demo.git",
        "git@github.com:octo/demo.git",
        "ssh://git@github.com/octo/demo.git",
        "file:///tmp/demo.git",
    ],
)
def test_non_canonical_remote_urls_are_refused(url):
    with pytest.raises(GitObservationError) as error:
        parse_github_https_url(url)
    assert error.value.code == "git-remote-url-not-canonical"


def test_canonical_url_parses():
    assert parse_github_https_url("https://github.com/octo-cat/my.repo_1.git") == "octo-cat/my.repo_1"


def test_a_remote_with_a_non_canonical_url_is_not_chosen_and_not_echoed(repo, gh):
    plain_git(repo, "remote", "set-url", "origin", "https://user:hunter2@github.com/octo/demo.git")
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        with pytest.raises(GitObservationError) as error:
            observer.remote_name_for("octo/demo")
    assert error.value.code == "git-remote-not-found" and "hunter2" not in str(error.value)


@pytest.mark.parametrize(
    "setup, code",
    [
        (lambda repo: plain_git(repo, "remote", "add", "upstream", URL), "git-remote-ambiguous"),
        (
            lambda repo: plain_git(
                repo, "remote", "set-url", "--add", "--push", "origin", "https://github.com/evil/x.git"
            ),
            "git-remote-url-not-canonical",
        ),
        (lambda repo: plain_git(repo, "remote", "remove", "origin"), "git-remote-not-found"),
    ],
)
def test_remote_must_be_exactly_one_canonical_remote(repo, gh, setup, code):
    setup(repo)
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        with pytest.raises(GitObservationError) as error:
            observer.remote_name_for("octo/demo")
    assert error.value.code == code


def test_path_records_follow_symlinks_honestly(repo, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("x\n")
    (repo / "inside-link").symlink_to("src/app.py")
    (repo / "escape-link").symlink_to(outside / "secret.txt")
    (repo / "escape-dir").symlink_to(outside)
    (repo / "metadata-link").symlink_to(".git/config")
    records = {
        r["path"]: r
        for r in path_records(
            str(repo),
            ["inside-link", "escape-link", "escape-dir/new.txt", "metadata-link", "new/dir/file.txt", "src/app.py"],
        )
    }
    assert list(records) == sorted(records)
    assert records["inside-link"]["inside_worktree"] and records["inside-link"]["outside_git_metadata"]
    assert not records["escape-link"]["inside_worktree"]
    assert not records["escape-dir/new.txt"]["inside_worktree"]
    assert records["metadata-link"]["inside_worktree"] and not records["metadata-link"]["outside_git_metadata"]
    assert records["new/dir/file.txt"]["inside_worktree"], "a nonexistent candidate inside the worktree"
    # A link to a file and the file itself resolve to the same place through different chains.
    assert records["inside-link"]["resolved_target_sha256"] == records["src/app.py"]["resolved_target_sha256"]
    assert records["inside-link"]["lstat_chain_sha256"] != records["src/app.py"]["lstat_chain_sha256"]


@pytest.mark.parametrize("path", ["", "/etc/passwd", "../x", "a//b", "a/./b", "a/", "a\\b", ".git/../x"])
def test_non_canonical_paths_are_refused(repo, path):
    with pytest.raises(GitObservationError) as error:
        path_records(str(repo), [path])
    assert error.value.code == "git-path-not-canonical"


@pytest.mark.parametrize("path", [".git/config", ".GIT/config", "sub/.git/x", ".git./x", "git~1/config"])
def test_git_metadata_names_are_never_outside_git_metadata(repo, path):
    assert path_records(str(repo), [path])[0]["outside_git_metadata"] is False


def test_recheck_detects_a_swapped_symlink_and_tolerates_an_edit(repo, tmp_path):
    (repo / "link").symlink_to("src/app.py")
    records = path_records(str(repo), ["link", "src/app.py"])
    (repo / "src" / "app.py").write_text("an approved edit changes size and times\n")
    assert recheck_path_records(str(repo), records) == []
    (repo / "link").unlink()
    (tmp_path / "elsewhere.py").write_text("print('hi')\n")
    (repo / "link").symlink_to(tmp_path / "elsewhere.py")
    assert recheck_path_records(str(repo), records) == [
        ("link", "inside_worktree"),
        ("link", "lstat_chain_sha256"),
        ("link", "resolved_target_sha256"),
    ]


def test_recheck_detects_a_directory_swapped_for_a_symlink(repo, tmp_path):
    records = path_records(str(repo), ["src/app.py"])
    (repo / "src").rename(tmp_path / "moved-src")
    (repo / "src").symlink_to(tmp_path / "moved-src")
    assert ("src/app.py", "inside_worktree") in recheck_path_records(str(repo), records)


def test_no_environment_secret_reaches_git_or_any_output(repo, gh, monkeypatch):
    monkeypatch.setenv("GITHUB_TOKEN", "secret-xyz")
    monkeypatch.setenv("GIT_CONFIG_PARAMETERS", "'core.hookspath'='/tmp/evil'")
    monkeypatch.setenv("GIT_EXTERNAL_DIFF", "/tmp/evil")
    _edit_file(repo)
    with GitObserver(str(repo), gh_path=str(gh[0]), credential_env={"GH_TOKEN": "secret-xyz"}) as observer:
        fields = observer.initial_snapshot_fields("octo/demo", "main", ["src/app.py"])
        invocation = observer.runner.invocation_document(observer.git_version)
        child_env = observer.runner.run(["-c", "alias.showenv=!env", "showenv"])[1].decode()
        network_env = observer.runner.environment(network=True)
        with pytest.raises(GitObservationError) as error:
            observer.runner.run(["rev-parse", "--verify", "--end-of-options", "no-such-ref-secret-xyz"])
    recorded = canonical_text({"fields": fields, "invocation": invocation})
    assert "secret-xyz" not in recorded and "secret-xyz" not in child_env and "secret-xyz" not in str(error.value)
    assert "GITHUB_TOKEN" not in child_env and "/tmp/evil" not in child_env
    assert invocation["credential_environment"] == {"GH_TOKEN": "<present>"}
    assert network_env["GH_TOKEN"] == "secret-xyz"  # handed to git only for network commands


def test_protections_are_derived_from_argv_and_environment(repo, gh):
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        argv = observer.runner.argv_prefix()
        env = observer.runner.environment()
    assert all(protections(argv, DIFF_OPTIONS, env).values())
    assert not protections([*argv, "-c", "core.hooksPath=/tmp/x"], DIFF_OPTIONS, env)["hooks_disabled"]
    assert not protections([*argv, "-c", "CORE.FSMONITOR=/tmp/x"], DIFF_OPTIONS, env)["fsmonitor_disabled"]
    without_ext = [o for o in DIFF_OPTIONS if o != "--no-ext-diff"]
    assert not protections(argv, without_ext, env)["external_diff_disabled"]
    assert not protections(argv, DIFF_OPTIONS, {**env, "GIT_EXTERNAL_DIFF": "x"})["external_diff_disabled"]
    assert not protections(argv, DIFF_OPTIONS, {**env, "GIT_ALLOW_PROTOCOL": "https:file"})["protocol_restricted"]
    unsigned = [a for a in argv if a != "tag.gpgSign=false"]
    assert not protections(unsigned, DIFF_OPTIONS, env)["signing_disabled"]


def test_command_definition_binds_argv_and_executable_bytes(tmp_path):
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    first = command_definition_sha256([str(tool), "--check"])
    assert first != command_definition_sha256([str(tool), "--fix"])
    tool.write_text("#!/bin/sh\necho changed\n")
    assert first != command_definition_sha256([str(tool), "--check"])
    with pytest.raises(GitObservationError) as error:
        command_definition_sha256(["tool", "--check"])
    assert error.value.code == "command-executable-not-absolute"


def test_filesystem_scopes_default_to_the_checkout_and_follow_real_paths(repo, gh, tmp_path):
    (tmp_path / "alias").symlink_to(repo)
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        default = observer.execution_boundary("octo/demo")
        aliased = observer.execution_boundary(
            "octo/demo", read_scope=[str(tmp_path / "alias"), str(repo / ".git"), str(repo)], write_scope=[str(repo)]
        )
    assert default["filesystem_read_scope_sha256"] == aliased["filesystem_read_scope_sha256"]
    assert default["filesystem_write_scope_sha256"] != aliased["filesystem_write_scope_sha256"]


def test_a_timeout_is_one_clean_error(repo, gh):
    with pytest.raises(GitObservationError) as error:
        GitObserver(str(repo), gh_path=str(gh[0]), timeout=0.000001)
    assert error.value.code == "git-timeout"


def test_a_missing_base_ref_and_a_bad_branch_are_errors(repo, gh):
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        with pytest.raises(GitObservationError) as missing:
            observer.base_sha("origin", "develop")
        with pytest.raises(GitObservationError) as invalid:
            observer.base_sha("origin", "ma..in")
    assert missing.value.code == "git-base-ref-missing" and invalid.value.code == "git-branch-invalid"


def test_the_empty_home_is_removed_on_close(repo, gh):
    with GitObserver(str(repo), gh_path=str(gh[0])) as observer:
        home = observer.runner.home
        assert os.listdir(home) == []
    assert not os.path.exists(home)
    with pytest.raises(GitObservationError) as error:
        observer.current_head_sha()
    assert error.value.code == "git-home-not-empty"
