"""Benchmark of the collector's start-up (run: python bench/collector_startup.py [--runs N]).

"Collector start-up" is everything a wakeup pays before GitHub's first answer
can matter: ``python -I -B scripts/collect_state.py report ...`` started as
the skill starts it (its isolated re-execution included), parsing its
arguments, resolving the token (``GH_TOKEN``), importing everything the
command needs (ghapi, its operation table, httpx2, the observer), building
the GitHub client with ghapi's operations, and sending its first request,
``GET /user``, to a local server that answers every request at once with
HTTP 401; the collector then reports ``github-unauthorized`` and exits 1.
The time of that one loopback exchange is well under a millisecond.

It is timed against ``python -I -B -c "import ghapi.all"`` (the baseline),
the same interpreter, interleaved in the same rounds so a noisy neighbour
hits both alike. A third row times the old in-process measurement: import
``observe.collect`` and build one ``GitHubClient``, no request. Reports the
median wall time and the median CPU time (user + system; on a shared machine
it moves far less than the wall time), each with its ratio to the
baseline's, and the peak resident memory of each; prints a table and exits 0 (the figures are for people, see
bench/README.md).
"""

from __future__ import annotations

import argparse
import http.server
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TOKEN = "ghp_" + "x" * 36  # never valid anywhere: the local server refuses every token
BASELINE = "baseline: import ghapi.all"
COLLECTOR = "collector: collect_state.py report, to its first answer (401)"
IN_PROCESS = "in-process: import observe.collect + one GitHubClient"

CLIENT_ONLY = (
    "import sys\n"
    f"sys.path.insert(0, {str(ROOT)!r})\n"
    "import observe.collect\n"
    "from observe.github.client import GitHubClient\n"
    f"GitHubClient('octo-org/hello-world', host='https://api.github.com', token={TOKEN!r},"
    " use_cache=False, environ={}).close()\n"
    "assert 'pydantic' not in sys.modules, 'the collector imported pydantic'\n"
)


class RefuseEverything(http.server.BaseHTTPRequestHandler):
    """GitHub's answer to a bad token, at once, to every request."""

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        body = b'{"message":"Bad credentials"}'
        self.send_response(401)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base class's name)
        del format, args


def run(argv: list[str], expected_status: int, environ: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds (user + system), peak resident KiB) of one child (its re-executed self included)."""
    started = time.perf_counter()
    child = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=environ)
    assert child.stderr is not None
    errors = child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    elapsed = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != expected_status:
        raise SystemExit(f"{argv[-1][:40]!r} exited {os.waitstatus_to_exitcode(status)}: {errors[-400:]!r}")
    return elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15, help="start-ups per command (default 15)")
    args = parser.parse_args()
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), RefuseEverything)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    api_url = f"http://127.0.0.1:{server.server_address[1]}"
    environ = {key: value for key, value in os.environ.items() if key not in ("GITHUB_TOKEN", "GH_TOKEN")}
    environ |= {"GH_TOKEN": TOKEN, "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
    report = ["report", "--repository", "octo-org/hello-world", "--pr", "1", "--run-id", "0" * 32]
    commands = {
        BASELINE: ([sys.executable, "-I", "-B", "-c", "import ghapi.all"], 0),
        COLLECTOR: ([sys.executable, "-I", "-B", "scripts/collect_state.py", "--api-url", api_url, *report], 1),
        IN_PROCESS: ([sys.executable, "-I", "-B", "-c", CLIENT_ONLY], 0),
    }
    # The collector really got as far as the request: GitHub's refusal is its answer.
    first = subprocess.run(commands[COLLECTOR][0], cwd=ROOT, capture_output=True, text=True, env=environ)
    assert json.loads(first.stderr)["errors"][0]["code"] == "github-unauthorized", first.stderr
    for argv, status in commands.values():  # warm the page cache
        run(argv, status, environ)
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, list[float]] = {name: [] for name in commands}
    memory: dict[str, list[int]] = {name: [] for name in commands}
    for _ in range(args.runs):  # interleaved, so a noisy neighbour hits both alike
        for name, (argv, status) in commands.items():
            seconds, cpu_seconds, kib = run(argv, status, environ)
            times[name].append(seconds)
            cpu[name].append(cpu_seconds)
            memory[name].append(kib)
    server.shutdown()
    baseline, baseline_cpu = statistics.median(times[BASELINE]), statistics.median(cpu[BASELINE])
    print(f"{'measurement':<64} {'wall':>10} {'ratio':>6} {'CPU':>10} {'ratio':>6} {'peak RSS':>9}")
    for name in commands:
        wall, used = statistics.median(times[name]), statistics.median(cpu[name])
        print(
            f"{name:<64} {wall * 1000:>8.1f}ms {wall / baseline:>6.2f} {used * 1000:>8.1f}ms"
            f" {used / baseline_cpu:>6.2f} {max(memory[name]) / 1024:>7.1f}MB"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
