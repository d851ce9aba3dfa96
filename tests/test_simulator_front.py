"""The simulated front door: TLS for github.com/api.github.com on 127.0.0.1, and git's smart HTTP.

Real git and a real HTTPS client go through the CONNECT proxy exactly as they
would through a TLS-inspecting corporate proxy; nothing is mocked.
"""

from __future__ import annotations

import ssl
import subprocess
from pathlib import Path

import httpx2
import pytest
from werkzeug.wrappers import Request, Response

from simulator.front import API_HOST, GIT_HOST, Front, LoopbackServer
from simulator.gh import install_gh
from simulator.git_http import GitSmartHttp

TOKEN = "ghs_simulatedTokenNeverReal000000000000"


def git(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    base = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(cwd or "/nonexistent"),
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": "/dev/null",
        "GIT_TERMINAL_PROMPT": "0",
    }
    return subprocess.run(
        ["git", *args], cwd=cwd, env={**base, **(env or {})}, capture_output=True, text=True, timeout=60, check=False
    )


@pytest.fixture
def world(tmp_path):
    bare = tmp_path / "remotes" / "octo-org" / "widgets.git"
    assert git("init", "--bare", "-q", "-b", "main", str(bare)).returncode == 0
    git_app = GitSmartHttp(lambda owner, repo: bare if (owner, repo) == ("octo-org", "widgets") else None, TOKEN)

    def api(environ, start_response):
        request = Request(environ)
        return Response(f"{request.host} {request.path}", content_type="text/plain")(environ, start_response)

    servers = {GIT_HOST: LoopbackServer(git_app).start(), API_HOST: LoopbackServer(api).start()}
    front = Front({name: server.address for name, server in servers.items()}, tmp_path / "front").start()
    gh = install_gh(tmp_path / "bin", TOKEN)
    yield {"bare": bare, "front": front, "gh": gh, "git_app": git_app, "tmp": tmp_path}
    front.stop()
    for server in servers.values():
        server.stop()


def trusting(world) -> ssl.SSLContext:
    return ssl.create_default_context(cafile=str(world["front"].ca_file))


def network_config(world) -> list[str]:
    return world["front"].git_route(world["gh"])


def test_a_push_over_https_reaches_the_simulated_bare_repository(world):
    work = world["tmp"] / "work"
    assert git("init", "-q", "-b", "main", str(work)).returncode == 0
    (work / "README").write_text("hello\n")
    assert git("add", "README", cwd=work).returncode == 0
    committed = git("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "first", cwd=work)
    assert committed.returncode == 0
    head = git("rev-parse", "HEAD", cwd=work).stdout.strip()

    pushed = git(*network_config(world), "push", "https://github.com/octo-org/widgets.git", "main:main", cwd=work)

    assert pushed.returncode == 0, pushed.stderr
    assert git("--git-dir", str(world["bare"]), "rev-parse", "refs/heads/main").stdout.strip() == head
    assert world["git_app"].pushes == [("octo-org", "widgets")]
    assert TOKEN not in pushed.stderr + pushed.stdout


def test_a_push_without_the_token_is_refused(world):
    work = world["tmp"] / "work"
    git("init", "-q", "-b", "main", str(work))
    (work / "f").write_text("x\n")
    git("add", "f", cwd=work)
    git("-c", "user.name=A", "-c", "user.email=a@example.com", "commit", "-qm", "c", cwd=work)
    wrong = install_gh(world["tmp"] / "wrong-bin", "ghs_notTheSimulatedToken")
    config = world["front"].git_route(wrong)

    pushed = git(*config, "push", "https://github.com/octo-org/widgets.git", "main:main", cwd=work)

    assert pushed.returncode != 0
    assert git("--git-dir", str(world["bare"]), "rev-parse", "--verify", "-q", "refs/heads/main").returncode != 0


def test_a_client_that_does_not_trust_the_simulator_ca_is_refused(world):
    with httpx2.Client(proxy=world["front"].proxy_url, trust_env=False) as client, pytest.raises(httpx2.ConnectError):
        client.get("https://api.github.com/user")


def test_the_api_host_is_served_through_the_proxy_with_the_ca(world):
    with httpx2.Client(proxy=world["front"].proxy_url, verify=trusting(world), trust_env=False) as client:
        answer = client.get("https://api.github.com/repos/octo-org/widgets")
    assert answer.status_code == 200
    assert answer.text == "api.github.com /repos/octo-org/widgets"


def test_no_other_host_is_reachable_through_the_front(world):
    with (
        httpx2.Client(proxy=world["front"].proxy_url, verify=trusting(world), trust_env=False) as client,
        pytest.raises(httpx2.ProxyError),
    ):
        client.get("https://example.com/")
