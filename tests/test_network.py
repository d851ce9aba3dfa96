"""The route to github.com: a proxy and a CA, validated once and shared by the client and git."""

from __future__ import annotations

import pytest
import trustme

from observe.network import Network, NetworkSettingError


@pytest.fixture(scope="module")
def ca_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("ca") / "ca.pem"
    trustme.CA().cert_pem.write_to_path(str(path))
    return str(path)


def test_a_direct_network_adds_nothing_to_git():
    assert Network().git_overrides() == []
    assert Network().document() == {"https_proxy": None, "ca_file": None, "ca_file_sha256": None}


def test_a_proxy_and_ca_become_git_settings_and_are_bound_by_content(ca_file):
    network = Network(https_proxy="http://127.0.0.1:8080", ca_file=ca_file)
    assert network.git_overrides() == ["http.proxy=http://127.0.0.1:8080", f"http.sslCAInfo={ca_file}"]
    document = network.document()
    assert document["ca_file"] == ca_file
    assert len(document["ca_file_sha256"]) == 64
    assert network.ssl_context().cert_store_stats()["x509_ca"] >= 1


@pytest.mark.parametrize(
    "proxy",
    [
        "http://user:secret@127.0.0.1:8080",  # credentials would be printed and digested
        "http://127.0.0.1",  # no port
        "socks5://127.0.0.1:1080",
        "http://127.0.0.1:8080/path",
        "http://127.0.0.1:8080?x=1",
        "127.0.0.1:8080",
        "http://127.0.0.1:99999",
    ],
)
def test_a_proxy_url_other_than_scheme_host_and_port_is_refused(proxy):
    with pytest.raises(NetworkSettingError) as raised:
        Network(https_proxy=proxy)
    assert "secret" not in str(raised.value)


def test_a_ca_file_must_be_an_absolute_readable_pem_file(tmp_path, ca_file):
    not_pem = tmp_path / "not.pem"
    not_pem.write_text("hello\n")
    empty = tmp_path / "empty.pem"
    empty.write_text("")
    for bad in ("relative.pem", str(tmp_path / "missing.pem"), str(tmp_path), str(not_pem), str(empty)):
        with pytest.raises(NetworkSettingError):
            Network(ca_file=bad)
    assert Network(ca_file=ca_file).ca_file == ca_file
