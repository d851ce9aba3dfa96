"""git's smart HTTP protocol for the simulated ``github.com``, served by ``git http-backend``.

A WSGI app: ``/<owner>/<repo>.git/info/refs``, ``/git-upload-pack`` and
``/git-receive-pack`` run git's own CGI program on the bare repository the
simulated world owns, so a push or fetch is real git on both ends. Like
GitHub, it asks for credentials with ``401`` and a Basic challenge and
accepts only the simulated token (as the password, whatever the user name),
which is what makes a push go through the gh credential helper. A token that
may not write contents (``may_push`` false) is refused a push with 403, as
GitHub refuses it.
"""

from __future__ import annotations

import base64
import binascii
import re
import subprocess
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from werkzeug.wrappers import Request, Response

_ROUTE = re.compile(
    r"/(?P<owner>[A-Za-z0-9_.-]{1,100})/(?P<repo>[A-Za-z0-9_.-]{1,100}?)(?:\.git)?"
    r"(?P<service>/info/refs|/git-upload-pack|/git-receive-pack)"
)
_GIT_HTTP_BACKEND = ("git", "http-backend")

RepositoryResolver = Callable[[str, str], "Path | None"]


class GitSmartHttp:
    """Serves the bare repositories ``resolve(owner, repo)`` names, to holders of ``token`` only."""

    def __init__(
        self,
        resolve: RepositoryResolver,
        token: str,
        *,
        on_push: Callable[[str, str], None] | None = None,
        may_push: Callable[[], bool] = lambda: True,
        on_write: Callable[[str, str, bool | None], bool] | None = None,
    ):
        self.resolve = resolve
        self.token = token
        self.on_push = on_push
        self.may_push = may_push  # False: the token may read but not write the repository's contents
        self.pushes: list[tuple[str, str]] = []
        # A test's window on each push (World.writing): called "before" (True drops it), "applied", "answered".
        self.on_write = on_write

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
        return self.handle(Request(environ))(environ, start_response)

    def handle(self, request: Request) -> Response:
        route = _ROUTE.fullmatch(request.path)
        if route is None:
            return Response(b"Not Found\n", status=404, content_type="text/plain")
        repository = self.resolve(route["owner"], route["repo"])
        if repository is None:
            return Response(b"Repository not found.\n", status=404, content_type="text/plain")
        user = self._authenticated_user(request)
        if user is None:
            return Response(
                b"Authentication required\n",
                status=401,
                content_type="text/plain",
                headers={"WWW-Authenticate": 'Basic realm="GitHub"'},
            )
        pushing = route["service"] == "/git-receive-pack" or request.args.get("service") == "git-receive-pack"
        if pushing and not self.may_push():
            # GitHub's answer to a push with a token that may only read: 403, before any pack is sent.
            message = f"Permission to {route['owner']}/{route['repo']}.git denied to {user}.\n"
            return Response(message.encode(), status=403, content_type="text/plain")
        write = route["service"] == "/git-receive-pack" and self.on_write is not None
        if write and self.on_write is not None and self.on_write("git push", "before", None):
            return Response(status=503)  # a test stopped the client before the push: nothing is received
        response = self._backend(request, repository, route["service"], user)
        if route["service"] == "/git-receive-pack" and response.status_code == 200:
            self.pushes.append((route["owner"], route["repo"]))
            if self.on_push is not None:
                self.on_push(route["owner"], route["repo"])
        if write and self.on_write is not None:
            hook, applied = self.on_write, response.status_code == 200
            hook("git push", "applied", applied)
            response.call_on_close(lambda: hook("git push", "answered", applied))
        return response

    def _authenticated_user(self, request: Request) -> str | None:
        scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
        if scheme.lower() != "basic":
            return None
        try:
            user, _, password = base64.b64decode(encoded, validate=True).decode("utf-8").partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return None
        if password != self.token:
            return None
        return user or "x-access-token"

    def _backend(self, request: Request, repository: Path, service: str, user: str) -> Response:
        environment = {
            "PATH": "/usr/bin:/bin",
            "GIT_PROJECT_ROOT": str(repository.parent),
            "GIT_HTTP_EXPORT_ALL": "1",
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "PATH_INFO": f"/{repository.name}{service}",
            "REQUEST_METHOD": request.method,
            "QUERY_STRING": request.query_string.decode("ascii", "replace"),
            "CONTENT_TYPE": request.headers.get("Content-Type", ""),
            "REMOTE_USER": user,  # lets http-backend accept receive-pack
            "REMOTE_ADDR": "127.0.0.1",
        }
        if request.headers.get("Content-Encoding"):
            environment["HTTP_CONTENT_ENCODING"] = request.headers["Content-Encoding"]
        if request.headers.get("Git-Protocol"):
            environment["GIT_PROTOCOL"] = request.headers["Git-Protocol"]
        body = request.get_data()
        environment["CONTENT_LENGTH"] = str(len(body))
        completed = subprocess.run(
            _GIT_HTTP_BACKEND,
            input=body,
            capture_output=True,
            env=environment,
            timeout=60,
            check=False,
        )
        return _cgi_response(completed.stdout)


def _cgi_response(output: bytes) -> Response:
    separator = b"\r\n\r\n" if b"\r\n\r\n" in output else b"\n\n"
    head, _, body = output.partition(separator)
    status = 200
    headers: list[tuple[str, str]] = []
    for line in head.decode("latin-1").splitlines():
        name, _, value = line.partition(":")
        if name.lower() == "status":
            status = int(value.strip().split()[0])
        elif name:
            headers.append((name.strip(), value.strip()))
    return Response(body, status=status, headers=headers)
