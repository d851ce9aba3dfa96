"""How this machine reaches github.com: directly, or through an HTTPS proxy that needs an extra CA.

Networks that inspect TLS put a proxy in front of github.com and ask every
client to trust their CA; the local simulator is reached the same way. Both
the GitHub client and the hardened git runner take one ``Network`` and turn
it into their own settings, so the two can never disagree about the route,
and the git invocation digest records it (references/git-execution-boundary.md).

A ``Network`` is validated when it is built: the proxy is ``http://`` or
``https://`` host and port with nothing else (no credentials, path or query:
a proxy URL is printed and digested, so it must never carry a secret), and
the CA file is an absolute path to a regular, non-empty PEM file.
"""

from __future__ import annotations

import hashlib
import ipaddress
import os
import ssl
import stat
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import urlsplit


class NetworkSettingError(ValueError):
    """A proxy URL or CA file that cannot be used; the message names the setting, never a secret."""


@dataclass(frozen=True)
class Network:
    """The route to github.com: ``Network()`` is direct, with the system's trusted CAs."""

    https_proxy: str | None = None
    ca_file: str | None = None

    def __post_init__(self) -> None:
        if self.https_proxy is not None:
            _check_proxy(self.https_proxy)
        if self.ca_file is not None:
            _check_ca_file(self.ca_file)

    def ssl_context(self) -> ssl.SSLContext:
        """The TLS trust for github.com: the system's CAs, plus the configured CA file."""
        context = ssl.create_default_context()
        if self.ca_file is not None:
            context.load_verify_locations(cafile=self.ca_file)
        return context

    def git_overrides(self) -> list[str]:
        """``-c`` settings that give git exactly this route (empty when direct)."""
        overrides = []
        if self.https_proxy is not None:
            overrides.append(f"http.proxy={self.https_proxy}")
        if self.ca_file is not None:
            overrides.append(f"http.sslCAInfo={self.ca_file}")
        return overrides

    def document(self) -> dict[str, str | None]:
        """What the git invocation digest binds: the proxy and the CA file's path and content digest."""
        return {
            "https_proxy": self.https_proxy,
            "ca_file": self.ca_file,
            "ca_file_sha256": _sha256_file(self.ca_file) if self.ca_file is not None else None,
        }


# Where the environment names a route: the proxy (lowercase first, as curl and httpx read it) and the CA.
PROXY_VARIABLES = ("https_proxy", "HTTPS_PROXY")
CA_VARIABLES = ("SSL_CERT_FILE",)
_GITHUB_HOSTS = ("github.com", "api.github.com")


def from_environment(environ: Mapping[str, str], api_url: str) -> Network:
    """The route the environment names (HTTPS_PROXY, SSL_CERT_FILE), for git and the GitHub client alike.

    The GitHub client would otherwise follow these variables and git, whose
    environment is built from nothing, would not: the two must take one route.
    NO_PROXY naming github.com (or ``*``) and a loopback API leave the proxy out.
    """
    proxy_variable = next((name for name in PROXY_VARIABLES if environ.get(name)), None)
    proxy = environ[proxy_variable] if proxy_variable else None
    api_host = urlsplit(api_url).hostname or ""
    if proxy is not None and (_loopback(api_host) or _no_proxy(environ, (*_GITHUB_HOSTS, api_host))):
        proxy = None
    ca_file = next((environ[name] for name in CA_VARIABLES if environ.get(name)), None)
    try:
        return Network(https_proxy=proxy, ca_file=ca_file)
    except NetworkSettingError as error:
        named = " and ".join(filter(None, (proxy and proxy_variable, ca_file and "SSL_CERT_FILE")))
        raise NetworkSettingError(f"{error} (from {named} in the environment)") from None


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _no_proxy(environ: Mapping[str, str], hosts: tuple[str, ...]) -> bool:
    listed = environ.get("no_proxy") or environ.get("NO_PROXY") or ""
    entries = [entry.strip().lower().lstrip(".") for entry in listed.split(",")]
    return any(e == "*" or any(h == e or h.endswith("." + e) for h in hosts) for e in entries if e)


def _check_proxy(url: str) -> None:
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        port = None
    if (
        parts.scheme not in ("http", "https")
        or not parts.hostname
        or port is None
        or parts.username is not None
        or parts.password is not None
        or parts.path not in ("", "/")
        or parts.query
        or parts.fragment
    ):
        raise NetworkSettingError("the HTTPS proxy must be http(s)://HOST:PORT with no credentials, path or query")


def _check_ca_file(path: str) -> None:
    if not os.path.isabs(path):
        raise NetworkSettingError(f"the CA file must be an absolute path: {path}")
    try:
        status = os.stat(path)
    except OSError as error:
        raise NetworkSettingError(f"the CA file {path} cannot be read ({error.strerror})") from error
    if not stat.S_ISREG(status.st_mode) or status.st_size == 0:
        raise NetworkSettingError(f"the CA file {path} is not a non-empty regular file")
    try:
        ssl.create_default_context(cafile=path)
    except (ssl.SSLError, OSError) as error:
        raise NetworkSettingError(f"the CA file {path} holds no usable PEM certificate") from error


def _sha256_file(path: str) -> str:
    with open(path, "rb") as handle:
        return hashlib.sha256(handle.read()).hexdigest()
