"""Two real HTTP servers on loopback with different capacity, for ladder tests and benches.

Each runs in its own process (so that one's CPU work cannot slow the other through the
GIL). Every request waits `wait_ms` (I/O: throughput scales with concurrency) and then
burns `cpu_ms` of CPU under one lock (a single core's worth: throughput stops at about
1000 / cpu_ms requests/s). So a server with cpu_ms=5 saturates near 200 requests/s, while
one with cpu_ms=0 keeps scaling.

`hold_ms` makes a server weak without spending CPU: every request holds one shared resource
(think of a single database connection) for that long, asleep. Its throughput can never pass
1000 / hold_ms requests/s, however idle or busy the machine, and a busy machine cannot make
it any stronger: the limit to test against when other work shares the cores.
"""

import socket
import subprocess
import sys
import time
from contextlib import contextmanager

SERVER = r"""
import hashlib, sys, threading, time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

port, wait_ms, cpu_ms = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3])
hold_ms = float(sys.argv[4])
cpu = threading.Lock()
resource = threading.Lock()

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Headers and body go out in two writes: without this, Nagle holds the body back
    # until the client's delayed ACK, adding 40 ms to every request.
    disable_nagle_algorithm = True

    def do_GET(self):
        time.sleep(wait_ms / 1000)
        if hold_ms:
            with resource:
                time.sleep(hold_ms / 1000)
        if cpu_ms:
            with cpu:
                deadline = time.perf_counter() + cpu_ms / 1000
                digest = b"perfcase"
                while time.perf_counter() < deadline:
                    digest = hashlib.sha256(digest).digest()
        body = b"ok\n"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass

class Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 1024

Server(("127.0.0.1", port), Handler).serve_forever()
"""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def http_server(*, wait_ms: float = 10, cpu_ms: float = 0, hold_ms: float = 0):
    """A server on 127.0.0.1; yields its URL and stops it afterwards."""
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(port), str(wait_ms), str(cpu_ms), str(hold_ms)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(
                        f"the test HTTP server did not start: {process.stderr.read().decode()}"
                    ) from None
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/"
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
