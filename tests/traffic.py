"""Loopback traffic of known shape, for the capture tests: TLS and plain TCP servers on a
127.0.0.x address in this process, and clients that make short TLS connections, one paused
keep-alive connection, or a window that closes."""

import contextlib
import datetime
import socket
import ssl
import threading
import time
from collections.abc import Iterator
from pathlib import Path


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate and key for perfcase.test, made now."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "perfcase.test")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("perfcase.test")]), False)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@contextlib.contextmanager
def server(address: str, handle, *, context: ssl.SSLContext | None = None,
           rcvbuf: int | None = None) -> Iterator[int]:  # fmt: skip
    """A TCP (or TLS) server on a free port of `address`, calling handle(connection) in a
    thread per connection; yields the port."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    if rcvbuf:
        listener.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, rcvbuf)
    listener.bind((address, 0))
    listener.listen(64)
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve_one(raw: socket.socket) -> None:
        with contextlib.suppress(OSError):
            with raw:
                raw.settimeout(10)
                connection = context.wrap_socket(raw, server_side=True) if context else raw
                handle(connection)

    def accept() -> None:
        while not stop.is_set():
            try:
                raw, _ = listener.accept()
            except (TimeoutError, OSError):
                continue
            threading.Thread(target=serve_one, args=(raw,), daemon=True).start()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        listener.close()


def answer_lines(connection: socket.socket, pause_every: int = 0, pause: float = 0.0) -> None:
    """Answer each request line with a short response; before every `pause_every`-th
    answer, wait `pause` seconds (a slow server)."""
    buffered, answered = b"", 0
    while True:
        data = connection.recv(4096)
        if not data:
            return
        buffered += data
        while b"\n" in buffered:
            line, buffered = buffered.split(b"\n", 1)
            answered += 1
            if pause_every and answered % pause_every == 0:
                time.sleep(pause)
            connection.sendall(b"OK " + line + b"\n" + b"." * 200 + b"\n")


def tls_contexts(directory: Path) -> tuple[ssl.SSLContext, ssl.SSLContext]:
    """(server, client) TLS contexts: a self-signed perfcase.test, not verified."""
    cert, key = self_signed(directory)
    served = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    served.load_cert_chain(cert, key)
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.check_hostname = False
    client.verify_mode = ssl.CERT_NONE
    return served, client


def tls_server(address: str, directory: Path):
    """A TLS server answering request lines, on a free port of `address` (yields the port
    and the client context)."""
    served, client = tls_contexts(directory)

    @contextlib.contextmanager
    def running():
        with server(address, answer_lines, context=served) as port:
            yield port, client

    return running()


def tls_clients(address: str, port: int, client: ssl.SSLContext, *, each: int = 6) -> dict:
    """`each` TLS 1.3 and `each` TLS 1.2 connections, one request each, closed after it;
    all but the first of each version resume the previous session (TLS 1.3 tickets, TLS
    1.2 session ids)."""
    resumed = 0
    for version in (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_2):
        client.minimum_version = client.maximum_version = version
        session = None
        for number in range(each):
            with socket.create_connection((address, port), timeout=10) as raw:
                with client.wrap_socket(
                    raw, server_hostname="perfcase.test", session=session
                ) as connection:
                    connection.sendall(b"GET /%d\n" % number)
                    reply = b""
                    while b"\n" not in reply:
                        reply += connection.recv(4096)
                    while not reply.endswith(b".\n"):
                        reply += connection.recv(4096)
                    resumed += connection.session_reused
                    session = connection.session
    return {"connections": 2 * each, "resumed": resumed}


def tls_short_connections(address: str, directory: Path, *, each: int = 6) -> dict:
    """tls_clients() against a TLS server of its own on `address`."""
    with tls_server(address, directory) as (port, client):
        return tls_clients(address, port, client, each=each)


def pausing_server(address: str, *, server_pause: float = 0.15):
    """A server that waits `server_pause` before every third answer (yields its port)."""

    def handle(connection: socket.socket) -> None:
        answer_lines(connection, pause_every=3, pause=server_pause)

    return server(address, handle)


def keepalive_client(address: str, port: int, *, requests: int = 8, pause: float = 0.2) -> None:
    """One connection kept alive: the client waits `pause` before each request."""
    with socket.create_connection((address, port), timeout=10) as connection:
        for number in range(requests):
            time.sleep(pause)
            connection.sendall(b"GET /%d\n" % number)
            reply = b""
            while not reply.endswith(b".\n"):
                reply += connection.recv(4096)


def keepalive_with_pauses(address: str, *, requests: int = 8, pause: float = 0.2,
                          server_pause: float = 0.15) -> dict:  # fmt: skip
    """One connection kept alive: the client waits `pause` before each request; the server
    waits `server_pause` before every third answer."""
    with pausing_server(address, server_pause=server_pause) as port:
        keepalive_client(address, port, requests=requests, pause=pause)
    return {"connections": 1, "requests": requests, "slow_answers": requests // 3}


def zero_window(address: str, *, size: int = 120_000, stall: float = 0.8) -> None:
    """A receiver with a small buffer that stops reading for `stall` seconds while the
    sender keeps sending: its window closes."""

    def handle(connection: socket.socket) -> None:
        time.sleep(stall)
        while connection.recv(65536):
            pass
        connection.sendall(b"done\n")

    with server(address, handle, rcvbuf=4096) as port:
        with socket.create_connection((address, port), timeout=10) as connection:
            connection.sendall(b"z" * size)
            connection.shutdown(socket.SHUT_WR)
            while connection.recv(4096):
                pass
