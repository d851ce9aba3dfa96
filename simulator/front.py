"""GitHub's front door, simulated: ``github.com`` and ``api.github.com`` over TLS on 127.0.0.1.

The loop's code reaches the simulator exactly as it reaches GitHub from behind
a TLS-inspecting HTTPS proxy: the same host names, ``https`` only, a CA the
caller is told to trust. Nothing in the client or the hardened git runner is
switched into a "simulation mode"; they get a proxy URL and a CA file, the
two settings any corporate network already needs.

``Front`` is an HTTP CONNECT proxy. For ``CONNECT github.com:443`` or
``CONNECT api.github.com:443`` it answers ``200``, terminates TLS with a
certificate its own CA issued for that name, and relays the decrypted bytes
to a plain HTTP server on 127.0.0.1 that serves the name (the REST/GraphQL
app for ``api.github.com``, the git smart-HTTP app for ``github.com``). Every
other destination is refused with ``403``: the simulated world has no other
hosts, and nothing may leak to the real internet through it.
"""

from __future__ import annotations

import select
import socket
import socketserver
import ssl
import threading
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import trustme
from werkzeug.serving import make_server

from simulator import SERVE_POLL_SECONDS

API_HOST = "api.github.com"
GIT_HOST = "github.com"
_MAX_REQUEST_HEAD = 8192
_RELAY_CHUNK = 65536


@dataclass
class Front:
    """A CONNECT proxy that terminates TLS for the simulated GitHub host names."""

    upstreams: dict[str, tuple[str, int]]  # host name -> plain HTTP server behind it
    scratch: Path
    ca: trustme.CA = field(default_factory=trustme.CA)
    _listener: socket.socket | None = None
    _threads: list[threading.Thread] = field(default_factory=list)
    _stopping: threading.Event = field(default_factory=threading.Event)
    tunnels: Counter[str] = field(default_factory=Counter)  # CONNECTs accepted per host: one per client connection

    def start(self) -> Front:
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.ca.cert_pem.write_to_path(str(self.ca_file))
        leaf = self.ca.issue_cert(*sorted(self.upstreams))
        self._tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        leaf.configure_cert(self._tls)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(SERVE_POLL_SECONDS)  # accept() wakes to notice stop()
        accept = threading.Thread(target=self._accept_loop, name="front-accept", daemon=True)
        accept.start()
        self._threads.append(accept)
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._listener is not None:
            self._listener.close()
        for thread in self._threads:
            thread.join(timeout=2)

    def pause(self) -> None:
        """Stop accepting, the listening socket kept open: a forked copy of the process serves it meanwhile
        (the crash tests branch a whole run there, tests/crash_points.py); ``resume`` accepts again."""
        self._stopping.set()
        for thread in self._threads:
            thread.join(timeout=5)
        self._threads.clear()
        self._stopping.clear()

    def resume(self) -> None:
        accept = threading.Thread(target=self._accept_loop, name="front-accept", daemon=True)
        accept.start()
        self._threads.append(accept)

    @property
    def ca_file(self) -> Path:
        """The PEM file of the CA that signed the simulated hosts' certificates."""
        return self.scratch / "simulator-ca.pem"

    @property
    def proxy_url(self) -> str:
        assert self._listener is not None, "start() the front first"
        host, port = self._listener.getsockname()[:2]
        return f"http://{host}:{port}"

    def git_route(self, gh: object) -> list[str]:
        """``git -c`` options that reach the simulated hosts through this front, ``gh`` answering for credentials."""
        return [
            "-c",
            f"http.proxy={self.proxy_url}",
            "-c",
            f"http.sslCAInfo={self.ca_file}",
            "-c",
            "credential.helper=",
            "-c",
            f"credential.https://github.com.helper=!{gh} auth git-credential",
        ]

    # --- connections -------------------------------------------------------

    def _accept_loop(self) -> None:
        assert self._listener is not None
        while not self._stopping.is_set():
            try:
                client, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            thread = threading.Thread(target=self._serve, args=(client,), name="front-conn", daemon=True)
            thread.start()

    def _serve(self, client: socket.socket) -> None:
        with client:
            client.settimeout(30)
            try:
                target = self._read_connect(client)
            except (OSError, ValueError):
                return
            upstream_address = self.upstreams.get(target)
            if upstream_address is None:
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            self.tunnels[target] += 1
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            try:
                secure = self._tls.wrap_socket(client, server_side=True)
            except (OSError, ssl.SSLError):
                return  # the caller did not trust our CA: exactly what a real client must do
            with secure, socket.create_connection(upstream_address, timeout=30) as upstream:
                _relay(secure, upstream)

    @staticmethod
    def _read_connect(client: socket.socket) -> str:
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = client.recv(1024)
            if not chunk:
                raise ValueError("connection closed before a request")
            head += chunk
            if len(head) > _MAX_REQUEST_HEAD:
                raise ValueError("request head too long")
        request_line = head.split(b"\r\n", 1)[0].decode("ascii", "replace").split()
        if len(request_line) != 3 or request_line[0] != "CONNECT":
            client.sendall(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            raise ValueError("not a CONNECT request")
        host, _, port = request_line[1].rpartition(":")
        return host.lower() if port == "443" else ""


def _relay(secure: ssl.SSLSocket, upstream: socket.socket) -> None:
    """Copy bytes both ways in one thread until either side closes or goes quiet.

    One thread, because an OpenSSL connection must not be read and written
    from two threads at once; HTTP's request/response turn-taking keeps the
    blocking sends from waiting on each other.
    """
    while True:
        ready = [secure] if secure.pending() else select.select([secure, upstream], [], [], 30)[0]
        if not ready:
            return
        for source, sink in ((secure, upstream), (upstream, secure)):
            if source in ready:
                try:
                    data = source.recv(_RELAY_CHUNK)
                except (OSError, ssl.SSLError):
                    return
                if not data:
                    return
                sink.sendall(data)


class LoopbackServer:
    """A WSGI app served over plain HTTP on 127.0.0.1, in a background thread (the front's upstream).

    Its clients reach it through the front's TLS, so the app is told the
    scheme they used (``wsgi.url_scheme``, as a TLS-terminating proxy's
    ``X-Forwarded-Proto`` tells an upstream): the URLs it builds from the
    request, the API's ``Link`` headers above all, name the origin the client
    used (``https://api.github.com``), which is the only origin a careful
    client follows.
    """

    def __init__(self, app: Any, *, scheme: str = "https"):
        def as_reached(environ: dict[str, Any], start_response: Any) -> Any:
            environ["wsgi.url_scheme"] = scheme
            return app(environ, start_response)

        self._server = make_server("127.0.0.1", 0, as_reached, threaded=True)
        self._thread = threading.Thread(target=self._serve, name="loopback-http", daemon=True)

    def _serve(self) -> None:
        # socketserver's loop, not werkzeug's: werkzeug's closes the socket when it returns, and ``pause`` keeps it.
        socketserver.BaseServer.serve_forever(self._server, SERVE_POLL_SECONDS)

    def start(self) -> LoopbackServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def pause(self) -> None:
        """Stop serving, the socket kept open (see ``Front.pause``); ``resume`` serves again."""
        self._server.shutdown()
        self._thread.join(timeout=5)

    def resume(self) -> None:
        self._thread = threading.Thread(target=self._serve, name="loopback-http", daemon=True)
        self._thread.start()

    @property
    def address(self) -> tuple[str, int]:
        return ("127.0.0.1", self._server.server_port)
