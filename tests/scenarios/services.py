"""Small real services the rebuilt cases run on their test hosts, and how to start them
there (through the host, so in its PID namespace and its cgroup, left running as daemons).

FORWARDER: an HTTP service that, for each request, works 2 ms, then writes `chunk_kb` KiB to
its dependency over one connection it opened at start (under one lock, as a single client of
a database or a log shipper would), then answers. With `answered` 1 it reads the dependency's
short answer after each write (a request and its reply), and with `wait_ms` it first waits
that long (a client that pauses before each of its requests: a rate limiter, a timer, a pool
waiting for its connection). SINK: that
dependency, reading `read_kb` KiB at a time with `pause_ms` between reads (and a receive
buffer of `buffer_kb` KiB, when not 0): with a pause, a slow receiver whose window fills and
advertises zero; without, a fast one. With `answer` 1, it answers each read with a short
reply. TLS_DEPENDENCY: a TLS server (a key of its own, made with openssl as it starts)
answering each read; TLS_CLIENT: an HTTP service calling it for each request, over a new
TLS connection each time or over one it keeps.
"""

import io
import random
import socket
import time

from collectors.ssh import Connection
from tests.loadservers import SERVER

# The HTTP service of FORWARDER and TLS_CLIENT: each request calls `call()`, then answers.
HTTP_SERVICE = r"""
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True

    def do_GET(self):
        call()
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

FORWARDER = (
    r"""
import hashlib, sys, socket, threading, time

port, dependency, chunk_kb, answered, wait_ms = (int(v) for v in sys.argv[1:6])
for attempt in range(100):  # the sink may still be starting
    try:
        upstream = socket.create_connection(("127.0.0.1", dependency))
        break
    except ConnectionRefusedError:
        time.sleep(0.1)
lock = threading.Lock()
chunk = b"x" * (chunk_kb * 1024)

def call():
    digest, deadline = b"perfcase", time.perf_counter() + 0.002
    while time.perf_counter() < deadline:  # some work of its own (so perf has samples)
        digest = hashlib.sha256(digest).digest()
    with lock:
        if wait_ms:
            time.sleep(wait_ms / 1000)
        upstream.sendall(chunk)
        if answered:
            upstream.recv(64)
"""
    + HTTP_SERVICE
)

SINK = r"""
import sys, socket, time
port, read_kb, pause_ms, buffer_kb, answer = (int(v) for v in sys.argv[1:6])
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
if buffer_kb:
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, buffer_kb * 1024)
listener.bind(("127.0.0.1", port))
listener.listen(8)
connection, _ = listener.accept()
while connection.recv(read_kb * 1024):
    if answer:
        connection.sendall(b"ok\n")
    if pause_ms:
        time.sleep(pause_ms / 1000)
"""


TLS_DEPENDENCY = r"""
import os, socket, ssl, subprocess, sys, tempfile, threading
port = int(sys.argv[1])
context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
with tempfile.TemporaryDirectory() as keys:  # a key of its own, read and removed at once
    key, cert = os.path.join(keys, "key.pem"), os.path.join(keys, "cert.pem")
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
         "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=dependency"],
        check=True, capture_output=True,
    )
    context.load_cert_chain(cert, key)
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", port))
listener.listen(128)

def serve(connection):
    try:
        with context.wrap_socket(connection, server_side=True) as tls:
            while tls.recv(65536):
                tls.sendall(b"ok\n")
    except OSError:
        pass

while True:
    connection, _ = listener.accept()
    threading.Thread(target=serve, args=(connection,), daemon=True).start()
"""

TLS_CLIENT = (
    r"""
import socket, ssl, sys, threading, time

port, dependency, per_request = (int(v) for v in sys.argv[1:4])
context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
context.check_hostname, context.verify_mode = False, ssl.CERT_NONE  # the test's own key

def connect():
    for attempt in range(100):  # the dependency may still be starting
        try:
            return context.wrap_socket(socket.create_connection(("127.0.0.1", dependency)))
        except ConnectionRefusedError:
            time.sleep(0.1)
    raise SystemExit("the dependency never listened")

kept, lock = (None if per_request else connect()), threading.Lock()
request = b"x" * 1024

def call():
    if per_request:  # a new connection, and so a full handshake, for every request
        with connect() as tls:
            tls.sendall(request)
            tls.recv(64)
        return
    with lock:
        kept.sendall(request)
        kept.recv(64)

"""
    + HTTP_SERVICE
)


def free_port() -> int:
    """A free port below the kernel's ephemeral range (32768 and up), as a real server's
    is: a capture that missed a connection's start takes its lower port for the server's,
    and a port from the ephemeral range could be higher than its client's."""
    for port in random.sample(range(20000, 32768), 200):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32767")


def listening(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


def wait_listening(port: int, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while not listening(port):
        if time.monotonic() > deadline:
            raise RuntimeError(f"nothing listens on port {port} after {timeout:g} s")
        time.sleep(0.1)


def run_daemon(host, script: str, *args) -> None:
    """`python3 -c script args...` on the host, detached (setsid, no terminal)."""
    with Connection(host.endpoint()) as connection:
        connection.run(
            [
                "sh",
                "-c",
                'script=$1; shift; setsid /usr/bin/python3 -c "$script" "$@" '
                "</dev/null >/dev/null 2>&1 &",
                "sh",
                script,
                *[str(arg) for arg in args],
            ],
            sink=io.BytesIO(),
            timeout=20,
        )


def start_http(host) -> int:
    """tests/loadservers.py's server (1 ms asleep a request, no CPU); its port."""
    port = free_port()
    run_daemon(host, SERVER, port, 1, 0, 0)
    wait_listening(port)
    return port


def start_forwarder(
    host, *, slow: bool = False, chunk_kb: int = 16, answered: bool = False, wait_ms: int = 0
) -> int:
    """The sink (slow, or fast) and the forwarder writing to it (each write answered by the
    sink, and `wait_ms` before each, when asked); the forwarder's port.
    The sink is not probed for listening (it accepts one connection only: the forwarder's,
    which tries again while the sink starts)."""
    dependency = free_port()
    # Slow: 16 KiB at a time, 50 ms apart (320 KB/s); fast: whatever is there, at once,
    # through a 4 MiB buffer (so that a busy machine's pause in reading closes no window).
    reads = (16, 50, 0) if slow else (1024, 0, 4096)
    run_daemon(host, SINK, dependency, *reads, int(answered))
    port = free_port()
    run_daemon(host, FORWARDER, port, dependency, chunk_kb, int(answered), wait_ms)
    wait_listening(port)
    return port


def start_tls_client(host, *, per_request: bool) -> int:
    """A TLS dependency, and a service calling it for each of its requests: over a new TLS
    connection each time (`per_request`), or over one it keeps; the service's port."""
    dependency = free_port()
    run_daemon(host, TLS_DEPENDENCY, dependency)
    wait_listening(dependency)
    port = free_port()
    run_daemon(host, TLS_CLIENT, port, dependency, int(per_request))
    wait_listening(port)
    return port
