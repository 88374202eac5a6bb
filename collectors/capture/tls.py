"""The first TLS handshake message of each direction: ClientHello and ServerHello.

The C core hands up the first handshake record of each direction of a connection
(reassembled when it spans segments), found at the start of its payload or, past a
plaintext prelude (a proxy's CONNECT, SOCKS, STARTTLS), at the start of one of its first
16 payload segments within 16 KiB. These functions read what tells a full handshake
from a resumption, the server name and the version, and tolerate a message cut short by
the capture: they return what they could read and say it was truncated.
"""

from dataclasses import dataclass

HANDSHAKE = 22
CLIENT_HELLO = 1
SERVER_HELLO = 2

EXT_SERVER_NAME = 0
EXT_SESSION_TICKET = 35
EXT_PRE_SHARED_KEY = 41
EXT_SUPPORTED_VERSIONS = 43

# A ServerHello with this random is a HelloRetryRequest (RFC 8446, 4.1.3).
HELLO_RETRY_RANDOM = bytes.fromhex(
    "cf21ad74e59a6111be1d8c021e65b891c2a211167abb8c5e079e09e2c8a8339c"
)

VERSION_NAMES = {
    0x0300: "SSL 3.0",
    0x0301: "TLS 1.0",
    0x0302: "TLS 1.1",
    0x0303: "TLS 1.2",
    0x0304: "TLS 1.3",
}


def version_name(version: int) -> str:
    return VERSION_NAMES.get(version, f"0x{version:04x}")


def is_grease(value: int) -> bool:
    """RFC 8701 reserved values (0x0a0a, 0x1a1a, ...), sent to keep peers tolerant."""
    return value & 0x0F0F == 0x0A0A and value >> 8 == value & 0xFF


@dataclass(frozen=True)
class ClientHello:
    session_id: bytes
    server_name: str | None
    offered_versions: tuple[int, ...]  # from supported_versions, else the legacy version
    offers_psk: bool  # TLS 1.3 pre_shared_key: the client tries to resume
    offers_ticket: bool  # a non-empty TLS 1.2 session ticket
    truncated: bool


@dataclass(frozen=True)
class ServerHello:
    session_id: bytes
    version: int  # negotiated: supported_versions if present, else the legacy version
    accepts_psk: bool  # TLS 1.3 resumption
    hello_retry: bool
    truncated: bool


class _Cut(Exception):
    """The message ends before the field being read."""


class _Reader:
    def __init__(self, data: bytes):
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise _Cut
        chunk = self.data[self.pos : self.pos + n]
        self.pos += n
        return chunk

    def u8(self) -> int:
        return self.take(1)[0]

    def u16(self) -> int:
        return int.from_bytes(self.take(2), "big")

    def u24(self) -> int:
        return int.from_bytes(self.take(3), "big")

    def vector(self, length_bytes: int) -> bytes:
        n = int.from_bytes(self.take(length_bytes), "big")
        return self.take(n)


def _handshake_body(data: bytes, wanted: int) -> tuple[bytes, bool] | None:
    """The body of the first handshake message if it is of type `wanted`; the bool says
    whether it was cut short."""
    if len(data) < 9 or data[0] != HANDSHAKE or data[1] != 3 or data[5] != wanted:
        return None
    length = int.from_bytes(data[6:9], "big")
    body = data[9 : 9 + length]
    return body, len(body) < length


def _extensions(reader: _Reader) -> list[tuple[int, bytes]]:
    """The extensions that fit; a cut one is left out."""
    found = []
    try:
        block = _Reader(reader.vector(2))
    except _Cut:
        block = _Reader(reader.data[reader.pos + 2 :])
    try:
        while block.pos < len(block.data):
            kind = block.u16()
            found.append((kind, block.vector(2)))
    except _Cut:
        pass
    return found


def parse_client_hello(data: bytes) -> ClientHello | None:
    """The ClientHello at the start of `data` (a TLS record), or None if it is not one."""
    found = _handshake_body(data, CLIENT_HELLO)
    if found is None:
        return None
    body, cut = found
    reader = _Reader(body)
    session_id, server_name, versions = b"", None, ()
    offers_psk = offers_ticket = False
    try:
        legacy = reader.u16()
        versions = (legacy,)
        reader.take(32)
        session_id = reader.vector(1)
        reader.vector(2)  # cipher suites
        reader.vector(1)  # compression methods
        if reader.pos < len(body):
            for kind, value in _extensions(reader):
                if kind == EXT_SERVER_NAME:
                    server_name = _server_name(value) or server_name
                elif kind == EXT_SUPPORTED_VERSIONS and value:
                    listed = value[1 : 1 + value[0]]
                    offered = [
                        int.from_bytes(listed[i : i + 2], "big")
                        for i in range(0, len(listed) - 1, 2)
                    ]
                    offered = [v for v in offered if not is_grease(v)]
                    if offered:
                        versions = tuple(offered)
                elif kind == EXT_PRE_SHARED_KEY:
                    offers_psk = True
                elif kind == EXT_SESSION_TICKET and value:
                    offers_ticket = True
    except _Cut:
        cut = True
    return ClientHello(session_id, server_name, versions, offers_psk, offers_ticket, cut)


def _server_name(value: bytes) -> str | None:
    reader = _Reader(value)
    try:
        names = _Reader(reader.vector(2))
        while names.pos < len(names.data):
            kind = names.u8()
            name = names.vector(2)
            if kind == 0:
                return name.decode("ascii", "replace").lower()
    except _Cut:
        pass
    return None


def parse_server_hello(data: bytes) -> ServerHello | None:
    """The ServerHello at the start of `data` (a TLS record), or None if it is not one."""
    found = _handshake_body(data, SERVER_HELLO)
    if found is None:
        return None
    body, cut = found
    reader = _Reader(body)
    try:
        version = reader.u16()
        random = reader.take(32)
    except _Cut:
        return None
    session_id, accepts_psk = b"", False
    try:
        session_id = reader.vector(1)
        reader.take(3)  # cipher suite, compression method
        if reader.pos < len(body):
            for kind, value in _extensions(reader):
                if kind == EXT_SUPPORTED_VERSIONS and len(value) >= 2:
                    version = int.from_bytes(value[:2], "big")
                elif kind == EXT_PRE_SHARED_KEY:
                    accepts_psk = True
    except _Cut:
        cut = True
    return ServerHello(session_id, version, accepts_psk, random == HELLO_RETRY_RANDOM, cut)


def is_resumption(client_session_id: bytes | None, server: ServerHello) -> bool | None:
    """Whether the server resumed a session: TLS 1.3 by accepting a pre-shared key; up to
    TLS 1.2 by echoing the client's non-empty session id (which is also how a ticket is
    accepted, RFC 5077 3.4). `client_session_id` is the ClientHello's, None when it was not
    seen; then a TLS 1.2 resumption cannot be told (None)."""
    if server.version >= 0x0304:
        return server.accepts_psk
    if client_session_id is None:
        return None
    return bool(client_session_id) and client_session_id == server.session_id
