"""The route to github.com (observe/network.py) reaches the GitHub client, the hardened git runner and the collector.

The simulated front door terminates TLS for github.com and api.github.com with
its own CA, like a TLS-inspecting proxy; the client and git reach it only
through ``--https-proxy`` and ``--ca-file``, never through a relaxed mode.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from observe import cli
from observe.git.observer import GitObserver
from observe.github.client import GitHubClient
from observe.github.errors import GitHubObservationError
from observe.network import Network
from simulator.fakegithub import PR_NUMBER, RUN_ID, TOKEN
from simulator.front import API_HOST, GIT_HOST, Front, LoopbackServer
from simulator.gh import install_gh
from simulator.git_http import GitSmartHttp

REPOSITORY = "octo-org/widgets"


def git(*args: str) -> str:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": "/nonexistent",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_AUTHOR_NAME": "A",
        "GIT_AUTHOR_EMAIL": "a@example.com",
        "GIT_COMMITTER_NAME": "A",
        "GIT_COMMITTER_EMAIL": "a@example.com",
    }
    return subprocess.run(
        ["git", *args], check=True, capture_output=True, text=True, env=env, timeout=60
    ).stdout.strip()


@pytest.fixture
def route(tmp_path, fake, monkeypatch):
    bare = tmp_path / "remotes" / "widgets.git"
    git("init", "--bare", "-q", "-b", "main", str(bare))
    work = tmp_path / "work"
    git("init", "-q", "-b", "main", str(work))
    (work / "README").write_text("widgets\n")
    git("-C", str(work), "add", "README")
    git("-C", str(work), "commit", "-qm", "base")
    git("-C", str(work), "push", "-q", str(bare), "main")
    git("-C", str(work), "remote", "add", "origin", f"https://github.com/{REPOSITORY}.git")
    git_server = LoopbackServer(
        GitSmartHttp(lambda owner, repo: bare if f"{owner}/{repo}" == REPOSITORY else None, TOKEN)
    ).start()
    api_address = ("127.0.0.1", int(fake.url.rsplit(":", 1)[1]))
    front = Front({GIT_HOST: git_server.address, API_HOST: api_address}, tmp_path / "front").start()
    gh = install_gh(tmp_path / "bin", TOKEN)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("GH_TOKEN", raising=False)
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    yield {"front": front, "gh": gh, "work": work, "bare": bare, "fake": fake}
    front.stop()
    git_server.stop()


def network(route) -> Network:
    return Network(https_proxy=route["front"].proxy_url, ca_file=str(route["front"].ca_file))


def test_the_client_reaches_api_github_com_only_through_the_proxy_with_its_ca(route):
    client = GitHubClient(REPOSITORY, token=TOKEN, network=network(route), use_cache=False)
    try:
        assert client.get("users.get_authenticated").body["login"]
    finally:
        client.close()
    untrusting = GitHubClient(
        REPOSITORY, token=TOKEN, network=Network(https_proxy=route["front"].proxy_url), use_cache=False, max_attempts=1
    )
    try:
        with pytest.raises(GitHubObservationError) as refused:
            untrusting.get("users.get_authenticated")
    finally:
        untrusting.close()
    assert refused.value.code == "github-connection-failed"


def test_the_runner_fetches_through_the_route_and_the_invocation_records_it(route):
    direct = GitObserver(str(route["work"]), gh_path=str(route["gh"]))
    routed = GitObserver(str(route["work"]), gh_path=str(route["gh"]), network=network(route))
    with direct, routed:
        prefix = routed.runner.argv_prefix()
        assert prefix[-4:] == [
            "-c",
            f"http.proxy={route['front'].proxy_url}",
            "-c",
            f"http.sslCAInfo={route['front'].ca_file}",
        ]
        document = routed.runner.invocation_document(routed.git_version)
        assert document["network"] == network(route).document()
        assert direct.runner.invocation_document(direct.git_version)["network"]["https_proxy"] is None
        assert direct.git_object(REPOSITORY)["invocation_sha256"] != routed.git_object(REPOSITORY)["invocation_sha256"]
        _, out = routed.runner.run(
            ["ls-remote", "--end-of-options", f"https://github.com/{REPOSITORY}.git", "refs/heads/main"], network=True
        )
    assert out.decode().split("\t")[0] == git("--git-dir", str(route["bare"]), "rev-parse", "main")


def test_the_collector_takes_the_route_as_flags(route, capsys):
    status = cli.main(
        [
            "--gh",
            str(route["gh"]),
            "--https-proxy",
            route["front"].proxy_url,
            "--ca-file",
            str(route["front"].ca_file),
            "report",
            "--repository",
            REPOSITORY,
            "--pr",
            str(PR_NUMBER),
            "--run-id",
            RUN_ID,
        ]
    )
    captured = capsys.readouterr()
    assert status == 0, captured.err
    assert json.loads(captured.out)["pr_number"] == PR_NUMBER
    assert TOKEN not in captured.out + captured.err


@pytest.mark.parametrize(
    "flags",
    [
        ["--https-proxy", "http://user:secret@127.0.0.1:3128"],
        ["--https-proxy", "socks5://127.0.0.1:1080"],
        ["--ca-file", "relative/ca.pem"],
        ["--ca-file", "/nonexistent/ca.pem"],
    ],
)
def test_a_bad_route_is_a_usage_error(flags, capsys):
    status = cli.main([*flags, "report", "--repository", REPOSITORY, "--pr", "7", "--run-id", RUN_ID])
    captured = capsys.readouterr()
    assert status == 2
    assert captured.out == ""
    assert json.loads(captured.err)["errors"][0]["code"] == "usage-error"
    assert "secret" not in captured.err


def test_the_collector_without_the_ca_reaches_nothing(route, capsys):
    status = cli.main(
        [
            "--gh",
            str(route["gh"]),
            "--https-proxy",
            route["front"].proxy_url,
            "report",
            "--repository",
            REPOSITORY,
            "--pr",
            str(PR_NUMBER),
            "--run-id",
            RUN_ID,
        ],
        sleep=lambda seconds: None,
    )
    captured = capsys.readouterr()
    assert status == 1 and captured.out == ""
    assert json.loads(captured.err)["errors"][0]["code"] == "github-connection-failed"


def _organizations(context) -> set[str]:
    return {dict(entry[0] for entry in cert["subject"]).get("organizationName", "") for cert in context.get_ca_certs()}


@pytest.mark.skipif(sys.platform in ("darwin", "win32"), reason="httpx2's default trust there is not shared")
def test_the_direct_route_builds_its_default_trust_once_per_certificate_setting(tmp_path, monkeypatch):
    """The system trust is loaded once per process; SSL_CERT_FILE still chooses it, loopback ignores it."""
    import trustme

    from observe.github.channel import route_options

    ca_file = tmp_path / "ca.pem"
    trustme.CA(organization_name="Route test CA").cert_pem.write_to_path(str(ca_file))
    monkeypatch.delenv("SSL_CERT_FILE", raising=False)
    monkeypatch.delenv("SSL_CERT_DIR", raising=False)
    monkeypatch.delenv("SSLKEYLOGFILE", raising=False)
    system = route_options(None, "https://api.github.com")
    assert system["trust_env"] is True
    assert route_options(None, "https://api.github.com")["verify"] is system["verify"]

    monkeypatch.setenv("SSL_CERT_FILE", str(ca_file))
    chosen = route_options(None, "https://api.github.com")["verify"]
    loopback = route_options(None, "http://127.0.0.1:8080")
    assert chosen is not system["verify"]
    assert _organizations(chosen) == {"Route test CA"}
    assert loopback["trust_env"] is False
    assert "Route test CA" not in _organizations(loopback["verify"])

    monkeypatch.setenv("SSLKEYLOGFILE", str(tmp_path / "keys.log"))  # read when the context is built
    logging = route_options(None, "https://api.github.com")["verify"]
    assert logging not in (chosen, system["verify"])

    monkeypatch.delenv("SSL_CERT_FILE")
    monkeypatch.delenv("SSLKEYLOGFILE")
    monkeypatch.setenv("SSL_CERT_DIR", str(tmp_path))
    assert route_options(None, "https://api.github.com")["verify"] is not system["verify"]


def test_the_direct_route_refuses_a_certificate_no_trusted_authority_signed(tmp_path):
    """The shared default trust still verifies: a loopback TLS server with a self-made CA's certificate is refused.

    The control: the same server, its CA given as the network's CA file, is reached (and answers 501).
    """
    import http.server
    import ssl
    import threading

    import trustme

    authority = trustme.CA(organization_name="Untrusted test CA")
    ca_file = tmp_path / "ca.pem"
    authority.cert_pem.write_to_path(str(ca_file))
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    authority.issue_cert("127.0.0.1").configure_cert(server_context)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    server.socket = server_context.wrap_socket(server.socket, server_side=True)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()

    def refusal(network: Network | None) -> str:
        client = GitHubClient(
            REPOSITORY,
            host=f"https://127.0.0.1:{server.server_address[1]}",
            token=TOKEN,
            network=network,
            use_cache=False,
            max_attempts=1,
            environ={},
        )
        try:
            with pytest.raises(GitHubObservationError) as refused:
                client.get("users.get_authenticated")
        finally:
            client.close()
        return refused.value.code

    try:
        assert refusal(None) == "github-connection-failed"
        assert refusal(Network(ca_file=str(ca_file))) != "github-connection-failed"
    finally:
        server.shutdown()
        server.server_close()
