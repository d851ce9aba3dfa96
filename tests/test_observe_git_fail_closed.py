"""Hostile checkouts the git observer must refuse, against real repositories in tmp_path.

Each attack is first shown to work under plain git or the plain filesystem (the
sanity check), so a refusal cannot pass merely because the trap was broken.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from observe import cli
from observe.git.observer import GitObservationError, GitObserver, path_records, recheck_path_records
from tests.test_observe_git import URL, make_repo, plain_git, trap

TOKEN = "ghs_S3cretT0kenValue"


@pytest.fixture
def gh(tmp_path: Path) -> tuple[Path, Path]:
    return trap(tmp_path, "gh")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path)


def observer(repo: Path, gh) -> GitObserver:
    return GitObserver(str(repo), gh_path=str(gh[0]))


def refusal(call) -> GitObservationError:
    with pytest.raises(GitObservationError) as error:
        call()
    return error.value


def recheck_through_the_collector(capsys, repo: Path, records: list[dict], tmp_path: Path) -> tuple[int, dict]:
    document = tmp_path / "plan.json"
    document.write_text(json.dumps({"path_records": records}))
    status = cli.main(["recheck-paths", "--checkout", str(repo), "--document", str(document)])
    captured = capsys.readouterr()
    return status, json.loads(captured.out if status == 0 else captured.err)


# --- path records: hard links, special files, another checkout --------------


def test_a_planned_file_hard_linked_to_an_outside_file_is_refused(repo, tmp_path):
    outside = tmp_path / "outside.txt"
    outside.write_text("not ours\n")
    os.link(outside, repo / "src" / "linked.py")
    with open(repo / "src" / "linked.py", "a") as handle:
        handle.write("written inside\n")
    assert "written inside" in outside.read_text(), "sanity: an in-place edit through the link writes outside"

    error = refusal(lambda: path_records(str(repo), ["src/linked.py"]))
    assert error.code == "git-path-hard-linked" and str(tmp_path / "outside.txt") not in error.message


def test_a_planned_file_that_later_gains_a_hard_link_fails_the_recheck(repo, tmp_path, capsys):
    records = path_records(str(repo), ["src/app.py"])
    assert recheck_path_records(str(repo), records) == []
    os.link(repo / "src" / "app.py", tmp_path / "outside-name.py")

    assert refusal(lambda: recheck_path_records(str(repo), records)).code == "git-path-hard-linked"
    status, output = recheck_through_the_collector(capsys, repo, records, tmp_path)
    assert status == 1 and output["errors"][0]["code"] == "git-path-hard-linked"


def test_a_planned_file_replaced_by_another_file_fails_the_recheck(repo, tmp_path):
    records = path_records(str(repo), ["src/app.py"])
    # Same name, type, mode and owner: only the file's identity tells them apart.
    (tmp_path / "same.py").write_text("print('hi')\n")
    os.replace(tmp_path / "same.py", repo / "src" / "app.py")
    assert ("src/app.py", "resolved_target_sha256") in recheck_path_records(str(repo), records)


def test_an_in_place_edit_still_passes_the_recheck(repo):
    records = path_records(str(repo), ["src/app.py", "new.txt"])
    with open(repo / "src" / "app.py", "w") as handle:
        handle.write("an approved edit, written in place\n")
    assert recheck_path_records(str(repo), records) == []


def _fifo(path: Path) -> None:
    os.mkfifo(path)


def _socket(path: Path) -> None:
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.close()  # the socket file stays


def _directory(path: Path) -> None:
    path.mkdir()


@pytest.mark.parametrize("make", [_fifo, _socket, _directory])
def test_a_planned_path_must_be_a_regular_file_or_absent(repo, tmp_path, make):
    make(repo / "special")
    error = refusal(lambda: path_records(str(repo), ["special"]))
    assert error.code == "git-path-not-regular-file"

    records = path_records(str(repo), ["later"])  # absent when planned
    make(repo / "later")
    assert refusal(lambda: recheck_path_records(str(repo), records)).code == "git-path-not-regular-file"


def test_a_symlink_to_a_directory_is_not_a_planned_file(repo):
    (repo / "to-src").symlink_to("src")
    assert refusal(lambda: path_records(str(repo), ["to-src"])).code == "git-path-not-regular-file"


def test_the_recheck_fails_against_another_clone_with_the_same_layout(repo, tmp_path, capsys):
    records = path_records(str(repo), ["README.md", "src/app.py", "src/new.py"])
    clone = tmp_path / "clone"
    shutil.copytree(repo, clone, symlinks=True)
    # The other clone takes the planned checkout's very path: names, modes and owners all match.
    repo.rename(tmp_path / "original")
    clone.rename(repo)
    differences = recheck_path_records(str(repo), records)
    assert {path for path, _ in differences} == {"README.md", "src/app.py", "src/new.py"}
    assert ("src/new.py", "lstat_chain_sha256") in differences
    status, output = recheck_through_the_collector(capsys, repo, records, tmp_path)
    assert status == 1 and output["errors"][0]["code"] == "path-records-changed"


def test_the_recheck_fails_when_only_the_git_dir_is_swapped(repo, tmp_path):
    records = path_records(str(repo), ["src/app.py"])
    other = tmp_path / "other-git"
    shutil.copytree(repo / ".git", other, symlinks=True)
    (repo / ".git").rename(tmp_path / "old-git")
    other.rename(repo / ".git")
    assert recheck_path_records(str(repo), records) == [("src/app.py", "lstat_chain_sha256")]


# --- ancestry: grafts and the commit-graph ----------------------------------


def _unrelated_commit(repo: Path) -> str:
    tree = plain_git(repo, "write-tree").strip()
    return plain_git(repo, "commit-tree", tree, "-m", "unrelated history").strip()


def test_grafts_cannot_make_an_unrelated_history_descend(repo, gh):
    initial = plain_git(repo, "rev-parse", "HEAD").strip()
    unrelated = _unrelated_commit(repo)
    with observer(repo, gh) as git:
        assert git.is_ancestor(initial, unrelated) is False
        grafts = repo / ".git" / "info" / "grafts"
        grafts.write_text(f"{unrelated} {initial}\n")
        plain_git(repo, "merge-base", "--is-ancestor", initial, unrelated)  # sanity: exit 0 under plain git
        # The runner ignores the graft file even when asked directly ...
        code, _ = git.runner.run(["merge-base", "--is-ancestor", initial, unrelated], ok_codes=(0, 1))
        assert code == 1
        # ... and the observer refuses a checkout that has one.
        assert refusal(lambda: git.is_ancestor(initial, unrelated)).code == "git-grafts-present"
    assert refusal(lambda: observer(repo, gh)).code == "git-grafts-present"


def _forge_commit_graph_parent(repo: Path, child: str, parent: str) -> None:
    """Rewrite the commit-graph so ``child`` (a root commit) lists ``parent`` as its first parent."""
    graph = repo / ".git" / "objects" / "info" / "commit-graph"
    data = bytearray(graph.read_bytes())
    chunks = {}
    for index in range(data[6]):
        entry = 8 + 12 * index
        chunks[bytes(data[entry : entry + 4])] = int.from_bytes(data[entry + 4 : entry + 12], "big")
    oids = chunks[b"OIDL"]
    count = (chunks[b"CDAT"] - oids) // 20
    ids = [bytes(data[oids + 20 * i : oids + 20 * (i + 1)]).hex() for i in range(count)]
    record = chunks[b"CDAT"] + 36 * ids.index(child)
    data[record + 20 : record + 24] = ids.index(parent).to_bytes(4, "big")
    # Topological level (top 30 bits of the last 8 bytes) one above the parent's, so no cut-off skips it.
    parent_level = int.from_bytes(data[chunks[b"CDAT"] + 36 * ids.index(parent) + 28 :][:4], "big") >> 2
    high = int.from_bytes(data[record + 28 : record + 32], "big")
    data[record + 28 : record + 32] = ((parent_level + 1) << 2 | (high & 3)).to_bytes(4, "big")
    graph.write_bytes(bytes(data))


def test_a_forged_commit_graph_cannot_make_an_unrelated_history_descend(repo, gh):
    initial = plain_git(repo, "rev-parse", "HEAD").strip()
    unrelated = _unrelated_commit(repo)
    # The tip is read from its object; the commits below it come from the graph.
    tip = plain_git(repo, "commit-tree", plain_git(repo, "write-tree").strip(), "-p", unrelated, "-m", "tip").strip()
    plain_git(repo, "update-ref", "refs/heads/unrelated", tip)
    # Version 1 levels only, so the forged parent needs one field besides the parent itself.
    plain_git(repo, "-c", "commitGraph.generationVersion=1", "commit-graph", "write", "--reachable")
    _forge_commit_graph_parent(repo, unrelated, initial)
    plain_git(repo, "merge-base", "--is-ancestor", initial, tip)  # sanity: plain git trusts the graph
    with observer(repo, gh) as git:
        assert git.is_ancestor(initial, tip) is False


# --- configuration read before every driver, and refused ---------------------


def test_a_filter_driver_added_after_the_observer_started_never_runs(repo, gh, tmp_path):
    driver, sentinel = trap(tmp_path, "late-filter")
    with observer(repo, gh) as git:
        base = git.base_sha("origin", "main")
        (repo / ".gitattributes").write_text("*.py filter=late\n")
        plain_git(repo, "config", "filter.late.clean", str(driver))
        (repo / "src" / "app.py").write_text("print('changed')\n")
        plain_git(repo, "diff")
        assert sentinel.exists(), "sanity: plain git runs the late driver"
        sentinel.unlink()

        for call in (
            lambda: git.diff_sha256(base),
            git.worktree_status_sha256,
            git.worktree_clean,
            lambda: git.runner.run(["add", "src/app.py"]),
        ):
            assert refusal(call).code == "git-config-changed"
    assert not sentinel.exists()


def test_a_config_change_during_a_command_is_caught_after_it(repo, gh):
    with observer(repo, gh) as git:
        # The alias changes the config while the command runs; the check after it sees the change.
        alias = "alias.plant=!git config filter.planted.clean cat"
        error = refusal(lambda: git.runner.run(["-c", alias, "plant"]))
    assert error.code == "git-config-changed" and "after" in error.message
    assert "planted" in plain_git(repo, "config", "--list")


_PGP = "-----BEGIN PGP SIGNATURE-----\n\n iQ\n -----END PGP SIGNATURE-----"
_X509 = "-----BEGIN SIGNED MESSAGE-----\n\n MII\n -----END SIGNED MESSAGE-----"
_SSH = "-----BEGIN SSH SIGNATURE-----\n U1NI\n -----END SSH SIGNATURE-----"


def _signed_head(repo: Path, signature: str) -> None:
    tree = plain_git(repo, "write-tree").strip()
    head = plain_git(repo, "rev-parse", "HEAD").strip()
    body = (
        f"tree {tree}\nparent {head}\nauthor t <t@example.com> 1 +0000\ncommitter t <t@example.com> 1 +0000\n"
        f"gpgsig {signature}\n\nsigned\n"
    )
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(repo)}
    result = subprocess.run(
        ["git", "-C", str(repo), "hash-object", "-t", "commit", "-w", "--stdin"],
        input=body,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    plain_git(repo, "update-ref", "HEAD", result.stdout.strip())


@pytest.mark.parametrize(
    "signature, settings",
    [
        (_PGP, {"gpg.program": "{trap}"}),
        (_PGP, {"gpg.openpgp.program": "{trap}"}),
        (_X509, {"gpg.x509.program": "{trap}"}),
        (_SSH, {"gpg.ssh.program": "{trap}", "gpg.ssh.allowedSignersFile": "{signers}"}),
    ],
)
def test_log_never_runs_a_signature_program(repo, gh, tmp_path, signature, settings):
    program, sentinel = trap(tmp_path, "gpg")
    (tmp_path / "signers").write_text("t@example.com ssh-ed25519 AAAA\n")
    _signed_head(repo, signature)
    plain_git(repo, "config", "log.showSignature", "true")
    for key, value in settings.items():
        plain_git(repo, "config", key, value.format(trap=program, signers=tmp_path / "signers"))
    plain_git(repo, "log", "-1")
    assert sentinel.exists(), "sanity: plain git log runs the signature program"
    sentinel.unlink()
    with observer(repo, gh) as git:
        assert b"signed" in git.runner.run(["log", "-1"])[1]
        git.runner.run(["log", "-1", "--show-signature"])  # asked for explicitly, it still cannot start one
    assert not sentinel.exists()


def test_a_repository_owned_by_another_user_is_refused(repo, gh):
    os.chown(repo, 4242, 4242)
    env = {"PATH": "/usr/bin:/bin", "HOME": str(repo.parent), "GIT_CONFIG_NOSYSTEM": "1"}
    env["GIT_CONFIG_GLOBAL"] = "/dev/null"
    implicit = subprocess.run(["git", "-C", str(repo), "status"], env=env, capture_output=True, text=True)
    assert implicit.returncode != 0 and "dubious ownership" in implicit.stderr, "sanity: git refuses it itself"
    explicit = subprocess.run(
        ["git", f"--git-dir={repo / '.git'}", f"--work-tree={repo}", "status"], env=env, capture_output=True, text=True
    )
    assert explicit.returncode == 0, "sanity: with --git-dir git skips its ownership check"

    error = refusal(lambda: observer(repo, gh))
    assert error.code == "git-repository-not-owned" and "4242" in error.message


def test_a_git_dir_owned_by_another_user_is_refused(repo, gh):
    os.chown(repo / ".git", 4242, 4242)
    assert refusal(lambda: observer(repo, gh)).code == "git-repository-not-owned"


# --- no credential from configuration in any message --------------------------


@pytest.mark.parametrize(
    "key, value, code",
    [
        (f"url.https://x-access-token:{TOKEN}@github.com/.insteadOf", "https://github.com/", "git-insteadof-present"),
        (f"url.x-access-token:{TOKEN}@github.com:.insteadOf", "https://github.com/", "git-insteadof-present"),
        (f"url.https://github.com/?access_token={TOKEN}.insteadOf", "https://github.com/", "git-insteadof-present"),
        (f"http.https://x-access-token:{TOKEN}@github.com/.sslVerify", "true", "git-http-url-config-present"),
        (f"remote.https://{TOKEN}@github.com/octo/demo.git.url", URL, "git-url-named-remote-present"),
    ],
)
def test_a_credential_in_a_config_key_never_reaches_a_message(repo, gh, capsys, key, value, code):
    plain_git(repo, "config", key, value)
    assert TOKEN in plain_git(repo, "config", "--list"), "sanity: the key itself holds the token"
    error = refusal(lambda: observer(repo, gh))
    assert error.code == code and TOKEN not in str(error) and "<redacted>" in error.message

    status = cli.main(["--gh", str(gh[0]), "boundary", "--checkout", str(repo), "--repository", "octo/demo"])
    captured = capsys.readouterr()
    assert status == 1 and json.loads(captured.err)["errors"][0]["code"] == code
    assert TOKEN not in captured.err + captured.out


def test_redaction_covers_urls_addresses_and_queries():
    from observe.git.runner import redact_credentials

    text = redact_credentials(f"https://u:{TOKEN}@h/x git@h:{TOKEN}@x x-access-token:{TOKEN}@h: h/?t={TOKEN} plain")
    assert TOKEN not in text and text.endswith(" plain") and "https://<redacted>@h/x" in text


# --- remote names -------------------------------------------------------------


def test_a_remote_named_with_two_dots_is_named_in_its_refusal(repo, gh):
    plain_git(repo, "remote", "remove", "origin")
    plain_git(repo, "config", "remote.a..b.url", URL)
    with observer(repo, gh) as git:
        chosen = refusal(lambda: git.remote_name_for("octo/demo"))
        direct = refusal(lambda: git.base_sha("a..b", "main"))
        refs = refusal(lambda: git.remote_refs_sha256("a..b"))
    for error in (chosen, direct, refs):
        assert error.code == "git-remote-name-invalid" and "'a..b'" in error.message and "main" not in error.message
