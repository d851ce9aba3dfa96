"""A scripted model provider for the real Codex CLI: an OpenAI Responses endpoint on 127.0.0.1.

Part of the world the tests and benchmarks stand up (like the fake GitHub): the model service.

Codex, given a custom provider (``model_provider`` and ``[model_providers.NAME]``
in its ``config.toml``, :func:`config_toml`), POSTs every model turn to
``BASE_URL/responses`` with ``stream: true`` and reads server-sent events:
``response.created``, ``response.output_item.added``/``.done`` per output
item, ``response.completed``. A ``function_call`` item makes Codex run that
tool and send its ``function_call_output`` in the next request; a ``message``
item ends the turn. The model here is a plain function of the request body
(``respond``); every request is recorded, in order, for the test to read.

For a model name Codex does not know it offers plain function tools:
``exec_command`` (``cmd``, ``workdir``, ``yield_time_ms``, ...) and
``write_stdin`` (``session_id``, ``chars``: empty polls a command still
running). Each tool output is text in Codex's own framing, read by
:func:`parse_tool_output`.
"""

from __future__ import annotations

import itertools
import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

PROVIDER = "scripted"
MODEL = "scripted-loop-model"  # unknown to Codex: plain function tools, no "code mode"
ENV_KEY = "SCRIPTED_PROVIDER_KEY"  # Codex needs the variable set; its value is a dummy, never a credential

Respond = Callable[[dict[str, Any]], list[dict[str, Any]]]


def config_toml(base_url: str, *, sandbox_mode: str = "danger-full-access") -> str:
    """A ``config.toml`` pointing Codex at the provider; ``codex exec resume`` takes its sandbox from here.

    Nothing else leaves the machine: no update check, no analytics. Root keys come before the
    tables (TOML), so more tables may be appended.
    """
    return (
        f'model = "{MODEL}"\n'
        f'model_provider = "{PROVIDER}"\n'
        'approval_policy = "never"\n'
        f'sandbox_mode = "{sandbox_mode}"\n'
        "check_for_update_on_startup = false\n"
        "\n"
        "[analytics]\n"
        "enabled = false\n"
        "\n"
        f"[model_providers.{PROVIDER}]\n"
        'name = "scripted model on 127.0.0.1"\n'
        f'base_url = "{base_url}"\n'
        'wire_api = "responses"\n'
        f'env_key = "{ENV_KEY}"\n'
        "request_max_retries = 0\n"
        "stream_max_retries = 0\n"
    )


def function_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"type": "function_call", "name": name, "arguments": json.dumps(arguments)}


def assistant_message(text: str) -> dict[str, Any]:
    return {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}


@dataclass
class ResponsesProvider:
    """The endpoint: ``start()``, then ``base_url`` for Codex; ``requests`` holds every body received."""

    respond: Respond
    requests: list[dict[str, Any]] = field(default_factory=list)
    sizes: list[int] = field(default_factory=list)  # each request body's bytes
    failures: list[str] = field(default_factory=list)  # the model's own errors, answered as a message

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                data = provider.answer(self.path, body)
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def start(self) -> ResponsesProvider:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def answer(self, path: str, body: bytes) -> bytes:
        """One model turn: the scripted items as server-sent events (one request at a time, in order)."""
        with self._lock:
            number = next(self._ids)
            try:
                request = json.loads(body)
                self.requests.append(request)
                self.sizes.append(len(body))
                if not path.endswith("/responses"):
                    raise ValueError(f"unexpected path {path}")
                items = self.respond(request)
            except Exception as error:  # the script's own failure ends the turn visibly, never a hang
                self.failures.append(f"request {number}: {type(error).__name__}: {error}")
                items = [assistant_message(f"scripted model failed: {error}")]
        return sse(f"resp_{number}", [_with_ids(item, number, index) for index, item in enumerate(items)])


def _with_ids(item: dict[str, Any], number: int, index: int) -> dict[str, Any]:
    if item["type"] == "function_call":
        return {"id": f"fc_{number}_{index}", "call_id": f"call_{number}_{index}", **item}
    return {"id": f"msg_{number}_{index}", **item}


def sse(response_id: str, items: list[dict[str, Any]]) -> bytes:
    events: list[dict[str, Any]] = [{"type": "response.created", "response": {"id": response_id}}]
    for index, item in enumerate(items):
        events.append({"type": "response.output_item.added", "output_index": index, "item": item})
        events.append({"type": "response.output_item.done", "output_index": index, "item": item})
    usage = {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}
    events.append({"type": "response.completed", "response": {"id": response_id, "usage": usage}})
    return b"".join(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode() for event in events)


# -- what Codex sends back -------------------------------------------------------------------------

_FRAME = re.compile(
    r"\AChunk ID: [^\n]*\nWall time: (?P<wall>[0-9.]+) seconds\n"
    r"(?:Process exited with code (?P<code>-?\d+)|Process running with session ID (?P<session>\d+))\n"
    r"Original token count: (?P<tokens>\d+)\nOutput:\n",
)
# Codex's own marks of an output it shortened before the model saw it.
TRUNCATION_MARKS = ("Warning: truncated output", "tokens truncated", "chars truncated", "Total output lines:")


@dataclass(frozen=True)
class ToolOutput:
    """One ``exec_command``/``write_stdin`` answer: the command's exit code, or its session id while running."""

    exit_code: int | None
    session_id: int | None
    original_tokens: int
    wall_seconds: float
    output: str

    @property
    def truncated(self) -> bool:
        return any(mark in self.output for mark in TRUNCATION_MARKS)


def parse_tool_output(text: str) -> ToolOutput:
    """Codex's framing of a shell tool's answer; anything else (a refused call) raises ValueError."""
    matched = _FRAME.match(text)
    if matched is None:
        raise ValueError(f"not a shell tool output: {text[:200]!r}")
    return ToolOutput(
        exit_code=None if matched["code"] is None else int(matched["code"]),
        session_id=None if matched["session"] is None else int(matched["session"]),
        original_tokens=int(matched["tokens"]),
        wall_seconds=float(matched["wall"]),
        output=text[matched.end() :],
    )


def input_text(item: dict[str, Any]) -> str:
    """The text of one request input item (a message's parts, a call's arguments, a tool's output)."""
    if item.get("type") == "message":
        return "".join(part.get("text", "") for part in item.get("content", []) if isinstance(part, dict))
    if item.get("type") == "function_call":
        return str(item.get("arguments", ""))
    if item.get("type") == "function_call_output":
        output = item.get("output", "")
        return output if isinstance(output, str) else json.dumps(output)
    return json.dumps(item)
