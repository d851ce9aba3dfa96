"""A hostile front end on 127.0.0.1: answers every request one byte at a time.

The fake GitHub (fakegithub.py) can slow a body, but its HTTP server always
writes the status line and headers at once. This server writes everything,
headers included, a byte every ``seconds``: each socket read succeeds, so no
read timeout ever fires, and only a deadline on the whole exchange ends it.
``stop()`` ends every connection at once.
"""

from __future__ import annotations

import socket
import threading

from simulator import SERVE_POLL_SECONDS


class DrippingServer:
    def __init__(self, response: bytes, seconds: float):
        self.response, self.seconds = response, seconds
        self._stopped = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        # accept() wakes to notice stop(); closing alone would not wake it
        self._listener.settimeout(SERVE_POLL_SECONDS)
        self._threads: list[threading.Thread] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def start(self) -> DrippingServer:
        self._spawn(self._accept)
        return self

    def stop(self) -> None:
        self._stopped.set()
        for thread in self._threads:
            thread.join(5)
        self._listener.close()

    def _spawn(self, target, *args) -> None:
        thread = threading.Thread(target=target, args=args, daemon=True)
        self._threads.append(thread)
        thread.start()

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                connection, _ = self._listener.accept()
            except TimeoutError:
                continue
            self._spawn(self._drip, connection)

    def _drip(self, connection: socket.socket) -> None:
        with connection:
            connection.settimeout(5)
            request = b""
            try:
                while b"\r\n\r\n" not in request:
                    chunk = connection.recv(65536)
                    if not chunk:
                        return
                    request += chunk
                for index in range(len(self.response)):
                    if self._stopped.wait(self.seconds):
                        return
                    connection.sendall(self.response[index : index + 1])
            except OSError:
                return  # the client gave up
