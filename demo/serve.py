"""``python -m demo.serve``: the simulated GitHub, Codex and automation host, running for a trial by hand.

``serve`` starts the same stack the demo runs in (demo/stack.py), with a
checkout holding a local change, and keeps it running on a clock that follows
the machine's own (so the commands need no ``--observed-at``). It prints the
environment and the flags every ``loop.py`` command needs, and writes them to
``DIR/serve.json``. Codex answers each ``@codex review`` after
``--codex-delay`` seconds, from ``--codex`` (``findings`` or ``clean``, in
order, the last repeated); each heartbeat that falls due is printed.

``tool DIR PAYLOAD`` is Codex's automation tool for that stack: it passes the
JSON payload a ``loop.py`` command printed to the running host and prints
its answer. Stop ``serve`` with Ctrl-C.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
import threading
import time
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.request import Request, urlopen

from demo.scenarios import FINDING
from demo.stack import CHANGED_FILE, HEAD_BRANCH, REPOSITORY, Stack, start
from simulator.clock import SimClock
from simulator.codex import CodexReviewer

SCRIPTS: dict[str, Any] = {"findings": FINDING, "clean": "clean"}


def _tool_server(stack: Stack, lock: threading.Lock) -> ThreadingHTTPServer:
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            try:
                with lock:
                    answer: Any = {"ok": True, "result": stack.host.automation_update(json.loads(body))}
            except Exception as error:  # the host's refusal, as the tool reports it
                answer = {"ok": False, "error": str(error)}
            data = json.dumps(answer).encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    return ThreadingHTTPServer(("127.0.0.1", 0), Handler)


def serve(scratch: Path, codex: list[str], delay: float) -> int:
    clock = SimClock(datetime.now(UTC).replace(microsecond=0))
    stack = start(scratch, clock=clock)
    CodexReviewer(stack.world, [SCRIPTS[name] for name in codex], delay=delay)
    (stack.checkout / CHANGED_FILE).write_text("print('hello')\n", encoding="utf-8")  # the person's local change
    lock = threading.Lock()
    tool = _tool_server(stack, lock)
    threading.Thread(target=tool.serve_forever, daemon=True).start()
    stack.host.on_wakeup = lambda record, now: print(
        f"{now:%H:%M:%S} heartbeat: run `loop.py next --state-dir DIR $F`",
        flush=True,
    )
    environment = stack.environment()
    flags = stack.network_flags()
    (scratch / "serve.json").write_text(
        json.dumps({"tool_port": tool.server_address[1], "environment": environment, "flags": flags}), "utf-8"
    )
    loop = "scripts/loop"  # the first python3 on PATH runs it (the one that has requirements.lock installed)
    exports = " ".join(f"{name}={shlex.quote(value)}" for name, value in environment.items() if name != "PATH")
    print(
        f"simulated github.com, Codex and the automation host are running ({scratch}).\n\n"
        f"In another shell, from this repository:\n  export {exports}\n  F={shlex.quote(' '.join(flags))}\n\n"
        f"The checkout {stack.checkout} has a local change to {CHANGED_FILE}. Start a loop:\n"
        f"  {loop} init $F --checkout {stack.checkout} --repository {REPOSITORY} --base main --head {HEAD_BRANCH} "
        f"--path {CHANGED_FILE} --create-branch --commit --push --mode approval-gated --title 'Fix the greeting' "
        "--body 'The greeting said helo.' --format text\n"
        "Then follow SKILL.md (`scripts/loop next --approve HASH`, then `scripts/loop next` until the loop is live),\n"
        "adding $F to every command. Pass each automation payload with:\n"
        f"  {shlex.quote(sys.executable)} -m demo.serve tool {scratch} 'PAYLOAD'\n\nCtrl-C stops it.",
        flush=True,
    )
    try:
        while True:
            time.sleep(1)
            with lock:
                clock.advance(1)  # the World follows the machine's clock, second by second
    except KeyboardInterrupt:
        return 0
    finally:
        tool.shutdown()
        stack.stop()


def call_tool(scratch: Path, payload: str) -> int:
    try:
        port = json.loads((scratch / "serve.json").read_text("utf-8"))["tool_port"]
        request = Request(f"http://127.0.0.1:{port}/", data=payload.encode(), method="POST")
        with urlopen(request, timeout=30) as answer:  # noqa: S310 (loopback only)
            result = json.loads(answer.read())
    except (OSError, ValueError, KeyError) as error:
        print(json.dumps({"ok": False, "error": f"no running `demo.serve` in {scratch}: {error}"}))
        return 1
    print(json.dumps(result))
    return 0 if result.get("ok") else 1


def main(argv: list[str] | None = None) -> int:
    top = argparse.ArgumentParser(prog="python -m demo.serve", description=__doc__.split("\n\n")[0])
    commands = top.add_subparsers(dest="command", required=True)
    run = commands.add_parser("serve", help="start the simulated world and keep it running")
    run.add_argument("scratch", type=Path, help="a directory for the world, the checkout and the state")
    run.add_argument("--codex", default="findings,clean", help="Codex's answers in order (findings, clean)")
    run.add_argument("--codex-delay", type=float, default=20.0, help="seconds before Codex answers a request")
    tool = commands.add_parser("tool", help="Codex's automation_update tool for a running serve")
    tool.add_argument("scratch", type=Path)
    tool.add_argument("payload", help="the JSON payload, exactly as loop.py printed it")
    args = top.parse_args(argv)
    if args.command == "tool":
        return call_tool(args.scratch, args.payload)
    codex = args.codex.split(",")
    if not codex or any(name not in SCRIPTS for name in codex):
        top.error(f"--codex takes a comma-separated list of {sorted(SCRIPTS)}")
    return serve(args.scratch.resolve(), codex, args.codex_delay)


if __name__ == "__main__":
    sys.exit(main())
