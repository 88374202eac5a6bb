"""SSH to a host under investigation: pinned host keys, optional jump host, one command at a
time with a deadline, output streamed to a sink and capped.

paramiko's Transport is used directly (not SSHClient) so that the host key is checked
against the pinned fingerprint before any credential is offered.
"""

import io
import shlex
import socket
import time
from dataclasses import dataclass, field
from typing import BinaryIO

import paramiko
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519, rsa

from collectors.errors import (
    AuthenticationFailed,
    CommandTimedOut,
    HostKeyChanged,
    HostKeyNotTrusted,
    Unreachable,
)
from collectors.keys import PrivateKeyError, fingerprint_of_blob, load_private_key
from collectors.phrase import Phrase, phrase_of
from collectors.phrase import gettext_noop as _

# Host key algorithms paramiko may negotiate for a pinned key of each type.
_ALGORITHMS_FOR = {
    "ssh-rsa": ["rsa-sha2-512", "rsa-sha2-256", "ssh-rsa"],
    "ssh-ed25519": ["ssh-ed25519"],
    "ecdsa-sha2-nistp256": ["ecdsa-sha2-nistp256"],
    "ecdsa-sha2-nistp384": ["ecdsa-sha2-nistp384"],
    "ecdsa-sha2-nistp521": ["ecdsa-sha2-nistp521"],
}


@dataclass(frozen=True)
class HostKey:
    key_type: str
    fingerprint: str


@dataclass(frozen=True)
class Endpoint:
    """How to reach one host: plain connection settings, nothing from the database."""

    name: str
    address: str
    port: int
    username: str
    private_key: str = field(repr=False)
    passphrase: str = field(default="", repr=False)
    host_key: HostKey | None = None
    jump: "Endpoint | None" = None
    connect_timeout: float = 10.0

    @property
    def label(self) -> str:
        return f"{self.name} ({self.username}@{self.address}:{self.port})"


@dataclass
class RunResult:
    exit_status: int | None
    stdout_bytes: int
    stderr: str
    truncated: bool


def paramiko_key(text: str, passphrase: str = "") -> paramiko.PKey:
    try:
        key = load_private_key(text, passphrase)
    except PrivateKeyError as error:
        raise AuthenticationFailed(
            Phrase(_("The stored credential cannot be used: %(error)s"), error=phrase_of(error))
        ) from None
    openssh = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.OpenSSH,
        serialization.NoEncryption(),
    ).decode()
    if isinstance(key, ed25519.Ed25519PrivateKey):
        cls = paramiko.Ed25519Key
    elif isinstance(key, ec.EllipticCurvePrivateKey):
        cls = paramiko.ECDSAKey
    elif isinstance(key, rsa.RSAPrivateKey):
        cls = paramiko.RSAKey
    else:
        raise AuthenticationFailed(
            Phrase(_("The stored credential is not an ed25519, ECDSA or RSA key."))
        )
    return cls.from_private_key(io.StringIO(openssh))


def _host_key_of(transport: paramiko.Transport) -> HostKey:
    key = transport.get_remote_server_key()
    return HostKey(key.get_name(), fingerprint_of_blob(key.asbytes()))


class _QuickAckSocket:
    """A TCP socket that acknowledges every packet at once.

    sshd does not set TCP_NODELAY on non-interactive sessions, so a reply it writes right
    after another small one waits for our ACK, which Linux delays by up to 40 ms: about
    90 ms of every connection were spent so. TCP_QUICKACK must be set again after each read.
    """

    def __init__(self, sock: socket.socket):
        self._sock = sock

    def recv(self, size: int) -> bytes:
        data = self._sock.recv(size)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 1)
        return data

    def __getattr__(self, name):
        return getattr(self._sock, name)


def _tcp(address: str, port: int, timeout: float):
    sock = socket.create_connection((address, port), timeout=timeout)
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return _QuickAckSocket(sock) if hasattr(socket, "TCP_QUICKACK") else sock


def _socket_to(address: str, port: int, timeout: float, via: "Connection | None", label: str):
    if via is not None:
        try:
            return via.transport.open_channel(
                "direct-tcpip", (address, port), ("127.0.0.1", 0), timeout=timeout
            )
        except (paramiko.ChannelException, paramiko.SSHException, OSError) as error:
            raise Unreachable(
                Phrase(
                    _("Cannot reach %(host)s through the jump host %(jump)s: %(error)s"),
                    host=label,
                    jump=via.endpoint.name,
                    error=str(error),
                )
            ) from None
    try:
        return _tcp(address, port, timeout)
    except ConnectionRefusedError:
        raise Unreachable(
            Phrase(_("Cannot reach %(host)s: connection refused (is sshd running?)"), host=label)
        ) from None
    except TimeoutError:
        raise Unreachable(
            Phrase(
                _("Cannot reach %(host)s: no answer within %(seconds)s s"),
                host=label,
                seconds=f"{timeout:g}",
            )
        ) from None
    except socket.gaierror as error:
        raise Unreachable(
            Phrase(
                _("Cannot resolve %(address)s: %(error)s"), address=address, error=error.strerror
            )
        ) from None
    except OSError as error:
        raise Unreachable(
            Phrase(
                _("Cannot reach %(host)s: %(error)s"),
                host=label,
                error=str(error.strerror or error),
            )
        ) from None


class _FirstBytes:
    """A socket that keeps the first bytes it receives: what a host that is no SSH server
    answered, to say what it is (paramiko only says it read no banner)."""

    KEEP = 512

    def __init__(self, sock):
        self._sock = sock
        self.first = b""

    def recv(self, size: int) -> bytes:
        data = self._sock.recv(size)
        if len(self.first) < self.KEEP:
            self.first += data[: self.KEEP - len(self.first)]
        return data

    def __getattr__(self, name):
        return getattr(self._sock, name)


def _not_ssh(label: str, first: bytes) -> Unreachable | None:
    """What a host that answered something other than an SSH banner is, in words."""
    if not first or first.startswith(b"SSH-"):
        return None
    lowered = first.lower()
    if lowered.startswith(b"http/") or b"<html" in lowered or b"<!doctype html" in lowered:
        protocol = "HTTP"
    elif first[0] in (0x15, 0x16) and first[1:2] == b"\x03":
        protocol = "TLS"  # a handshake or an alert record: an HTTPS port, most likely
    else:
        start = first.split(b"\n", 1)[0].rstrip(b"\r")[:60].decode("ascii", "backslashreplace")
        return Unreachable(
            Phrase(
                _("%(host)s answered %(start)s, not SSH: is this the right port?"),
                host=label,
                start=repr(start),
            )
        )
    return Unreachable(
        Phrase(
            _("%(host)s answered with %(protocol)s, not SSH: is this the right port?"),
            host=label,
            protocol=protocol,
        )
    )


class _KeyTypeRefused(Exception):
    """The host offers no key of the pinned type (it was reinstalled with other keys)."""


def _start_transport(sock, timeout: float, label: str, key_type: str | None) -> paramiko.Transport:
    sock = _FirstBytes(sock)
    transport = paramiko.Transport(sock)
    transport.banner_timeout = timeout
    transport.handshake_timeout = timeout
    options = transport.get_security_options()
    if key_type in _ALGORITHMS_FOR:
        # Only the pinned key's type, in the names this paramiko knows for it.
        options.key_types = [
            name for name in _ALGORITHMS_FOR[key_type] if name in options.key_types
        ]
    try:
        transport.start_client(timeout=timeout)
    except paramiko.IncompatiblePeer:
        transport.close()
        if key_type is not None:
            raise _KeyTypeRefused() from None
        raise Unreachable(
            Phrase(_("No SSH handshake with %(host)s: no common algorithms"), host=label)
        ) from None
    except (paramiko.SSHException, EOFError, OSError) as error:
        transport.close()
        if not transport.remote_version or "banner" in str(error):
            raise _not_ssh(label, sock.first) or _silent(label, timeout) from None
        reason = error or "connection closed"
        raise Unreachable(
            Phrase(_("No SSH handshake with %(host)s: %(error)s"), host=label, error=str(reason))
        ) from None
    # start_client() returns without raising when its timeout passes mid-handshake: a host
    # that accepts the connection and never speaks ends here, not in an exception.
    if not transport.is_active() or transport.host_key is None:
        transport.close()
        if not transport.remote_version:
            raise _not_ssh(label, sock.first) or _silent(label, timeout)
        raise Unreachable(
            Phrase(
                _(
                    "%(host)s sent its SSH banner but did not finish the handshake within "
                    "%(seconds)s s"
                ),
                host=label,
                seconds=f"{timeout:g}",
            )
        )
    return transport


def _silent(label: str, timeout: float) -> Unreachable:
    return Unreachable(
        Phrase(
            _("%(host)s accepted the connection but sent no SSH banner within %(seconds)s s"),
            host=label,
            seconds=f"{timeout:g}",
        )
    )


def scan_host_key(
    address: str, port: int, *, timeout: float = 10.0, via: "Connection | None" = None
) -> HostKey:
    """The key a host presents, without authenticating (what `ssh-keyscan` does)."""
    label = f"{address}:{port}"
    sock = _socket_to(address, port, timeout, via, label)
    transport = _start_transport(sock, timeout, label, None)
    try:
        return _host_key_of(transport)
    finally:
        transport.close()


class Connection:
    """One authenticated SSH connection; use as a context manager."""

    def __init__(self, endpoint: Endpoint):
        self.endpoint = endpoint
        self.jump: Connection | None = None
        self.transport: paramiko.Transport | None = None

    def __enter__(self) -> "Connection":
        try:
            self.open()
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def open(self) -> None:
        endpoint = self.endpoint
        if endpoint.host_key is None:
            raise HostKeyNotTrusted(
                Phrase(
                    _(
                        "The host key of %(host)s is not trusted yet: scan it and trust it on "
                        "the host's page first."
                    ),
                    host=endpoint.name,
                )
            )
        if endpoint.jump is not None:
            self.jump = Connection(endpoint.jump)
            self.jump.open()
        sock = _socket_to(
            endpoint.address, endpoint.port, endpoint.connect_timeout, self.jump, endpoint.label
        )
        try:
            self.transport = _start_transport(
                sock, endpoint.connect_timeout, endpoint.label, endpoint.host_key.key_type
            )
        except _KeyTypeRefused:
            presented = scan_host_key(
                endpoint.address, endpoint.port, timeout=endpoint.connect_timeout, via=self.jump
            )
            raise self._changed(presented) from None
        presented = _host_key_of(self.transport)
        if presented.fingerprint != endpoint.host_key.fingerprint:
            raise self._changed(presented)
        key = paramiko_key(endpoint.private_key, endpoint.passphrase)
        try:
            self.transport.auth_publickey(endpoint.username, key)
        except paramiko.AuthenticationException:
            raise AuthenticationFailed(
                Phrase(
                    _(
                        "Permission denied for %(user)s@%(address)s: the host does not accept "
                        "the credential's key (check authorized_keys and the user name)."
                    ),
                    user=endpoint.username,
                    address=endpoint.address,
                )
            ) from None
        except (paramiko.SSHException, EOFError, OSError) as error:
            raise Unreachable(
                Phrase(
                    _("Connection to %(host)s lost while signing in: %(error)s"),
                    host=endpoint.label,
                    error=str(error),
                )
            ) from None

    def _changed(self, presented: HostKey) -> HostKeyChanged:
        trusted = self.endpoint.host_key
        return HostKeyChanged(
            Phrase(
                _(
                    "The host key of %(host)s changed: trusted %(trusted)s, now %(presented)s. "
                    "Refusing to connect. If the host was reinstalled, scan and trust its new "
                    "key on the host's page."
                ),
                host=self.endpoint.name,
                trusted=f"{trusted.key_type} {trusted.fingerprint}",
                presented=f"{presented.key_type} {presented.fingerprint}",
            )
        )

    def _lost(self, error: Exception) -> Unreachable:
        return Unreachable(
            Phrase(
                _("Lost the connection to %(host)s: %(error)s"),
                host=self.endpoint.label,
                error=str(error),
            )
        )

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
            self.transport = None
        if self.jump is not None:
            self.jump.close()
            self.jump = None

    def run(
        self,
        argv: list[str],
        *,
        sink: BinaryIO,
        stdin: bytes = b"",
        timeout: float = 60.0,
        max_bytes: int = 64 * 1024 * 1024,
    ) -> RunResult:
        """Run one remote command, streaming stdout into `sink` (at most max_bytes of it).

        Every word of argv is quoted for the remote shell: no value is ever interpreted.
        """
        deadline = time.monotonic() + timeout
        try:
            channel = self.transport.open_session(timeout=self.endpoint.connect_timeout)
            channel.exec_command(shlex.join(argv))
            if stdin:
                channel.sendall(stdin)
            channel.shutdown_write()
        except (paramiko.SSHException, EOFError, OSError) as error:
            raise self._lost(error) from None
        written, truncated, exit_status = 0, False, None
        stderr = bytearray()
        # Blocking reads with a short timeout, not select(): select() makes paramiko create a
        # pipe that closing the channel can break under its reader thread.
        try:
            while True:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise CommandTimedOut(
                        Phrase(
                            _("The command on %(host)s did not finish within %(seconds)s s."),
                            host=self.endpoint.name,
                            seconds=f"{timeout:g}",
                        )
                    )
                channel.settimeout(min(remaining, 0.5))
                try:
                    chunk = channel.recv(65536)
                except TimeoutError:
                    chunk = None
                while channel.recv_stderr_ready():
                    stderr += channel.recv_stderr(65536)[: max(0, 65536 - len(stderr))]
                if chunk is None:
                    continue
                if not chunk:
                    break  # end of output
                keep = chunk[: max(0, max_bytes - written)]
                sink.write(keep)
                written += len(keep)
                if len(keep) < len(chunk):
                    truncated = True
                    break
            if not truncated and channel.status_event.wait(max(0.1, deadline - time.monotonic())):
                exit_status = channel.exit_status
        except (paramiko.SSHException, EOFError, OSError) as error:
            raise self._lost(error) from None
        finally:
            channel.close()
        return RunResult(
            exit_status=exit_status,
            stdout_bytes=written,
            stderr=stderr.decode(errors="replace"),
            truncated=truncated,
        )


__all__ = [
    "Connection",
    "Endpoint",
    "HostKey",
    "RunResult",
    "scan_host_key",
]
