"""Writing captures: pcap and pcapng writers and frame builders, for synthetic captures.

The benchmark synthesises a million-packet capture with these, and the tests build the
container and link-layer variants that tcpdump on this machine does not write (big-endian
files, several interfaces of different link types, simple packet blocks, VLAN tags, IPv4
options and fragments, IPv6 extension headers). Checksums are left zero: neither tshark
nor the analysis checks them.
"""

import ipaddress
import struct
from dataclasses import dataclass
from typing import BinaryIO

LINKTYPE_NULL = 0
LINKTYPE_ETHERNET = 1
LINKTYPE_RAW = 101
LINKTYPE_LINUX_SLL = 113
LINKTYPE_IPV4 = 228
LINKTYPE_IPV6 = 229
LINKTYPE_LINUX_SLL2 = 276

FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


@dataclass(frozen=True)
class Segment:
    """One TCP segment; addresses as text (IPv4 or IPv6)."""

    src: str
    dst: str
    sport: int
    dport: int
    seq: int
    ack: int
    flags: int
    window: int = 65535
    payload: bytes = b""
    options: bytes = b""


def syn_options(mss: int = 1460, wscale: int | None = 7, sack: bool = True) -> bytes:
    """MSS, SACK permitted and window scale, padded as Linux sends them."""
    options = struct.pack("!BBH", 2, 4, mss)
    if sack:
        options += b"\x04\x02"
    if wscale is not None:
        options += b"\x01" + struct.pack("!BBB", 3, 3, wscale)
    return options + b"\x00" * (-len(options) % 4)


def tcp_bytes(segment: Segment) -> bytes:
    options = segment.options + b"\x00" * (-len(segment.options) % 4)
    offset = (20 + len(options)) // 4
    header = struct.pack(
        "!HHIIBBHHH",
        segment.sport,
        segment.dport,
        segment.seq & 0xFFFFFFFF,
        segment.ack & 0xFFFFFFFF,
        offset << 4,
        segment.flags,
        segment.window,
        0,
        0,
    )
    return header + options + segment.payload


def ip_packet(
    segment: Segment,
    *,
    ip_options: bytes = b"",
    ipv6_extensions: bool = False,
    ident: int = 1,
    fragment: tuple[int, bool] | None = None,
    transport: bytes | None = None,
    protocol: int = 6,
) -> bytes:
    """The IP packet carrying the segment (or `transport` bytes of `protocol`). `fragment`
    is (offset in 8-byte units, more fragments) for IPv4."""
    body = tcp_bytes(segment) if transport is None else transport
    src, dst = ipaddress.ip_address(segment.src), ipaddress.ip_address(segment.dst)
    if src.version == 4:
        options = ip_options + b"\x00" * (-len(ip_options) % 4)
        frag = 0
        if fragment is not None:
            frag = fragment[0] | (0x2000 if fragment[1] else 0)
        header = struct.pack(
            "!BBHHHBBH4s4s",
            0x40 | (5 + len(options) // 4),
            0,
            20 + len(options) + len(body),
            ident & 0xFFFF,
            frag,
            64,
            protocol,
            0,
            src.packed,
            dst.packed,
        )
        return header + options + body
    next_header, extensions = protocol, b""
    if ipv6_extensions:
        # hop-by-hop options (8 bytes of padding) then a destination-options header
        extensions = bytes([60, 0]) + b"\x01\x04\x00\x00\x00\x00"
        extensions += bytes([protocol, 0]) + b"\x01\x04\x00\x00\x00\x00"
        next_header = 0
    header = struct.pack(
        "!IHBB16s16s",
        6 << 28,
        len(extensions) + len(body),
        next_header,
        64,
        src.packed,
        dst.packed,
    )
    return header + extensions + body


def frame(linktype: int, packet: bytes, *, vlan: int | None = None) -> bytes:
    """The packet framed for a link type; `vlan` adds an 802.1Q tag (Ethernet, SLL)."""
    version = packet[0] >> 4
    ethertype = 0x0800 if version == 4 else 0x86DD
    tag = b"" if vlan is None else struct.pack("!HH", vlan & 0x0FFF, ethertype)
    outer = 0x8100 if vlan is not None else ethertype
    if linktype == LINKTYPE_ETHERNET:
        return (
            b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01"
            + struct.pack("!H", outer)
            + (tag + packet)
        )
    if linktype == LINKTYPE_LINUX_SLL:
        return struct.pack("!HHH8sH", 0, 1, 6, b"\x02\x00\x00\x00\x00\x01\x00\x00", outer) + (
            tag + packet
        )
    if linktype == LINKTYPE_LINUX_SLL2:
        return struct.pack("!HHIHBB8s", ethertype, 0, 1, 1, 0, 6, b"\x02" + b"\x00" * 7) + packet
    if linktype in (LINKTYPE_RAW, LINKTYPE_IPV4, LINKTYPE_IPV6):
        return packet
    if linktype == LINKTYPE_NULL:
        return struct.pack("<I", 2 if version == 4 else 30) + packet
    raise ValueError(f"no framing for link type {linktype}")


class PcapWriter:
    """Classic pcap: either byte order, micro- or nanosecond stamps."""

    def __init__(
        self,
        stream: BinaryIO,
        linktype: int,
        *,
        nanoseconds: bool = False,
        big_endian: bool = False,
        snaplen: int = 262144,
    ):
        self.stream = stream
        self.order = ">" if big_endian else "<"
        self.nanoseconds = nanoseconds
        self.snaplen = snaplen
        self.record = struct.Struct(self.order + "IIII")
        magic = 0xA1B23C4D if nanoseconds else 0xA1B2C3D4
        stream.write(struct.pack(self.order + "IHHiIII", magic, 2, 4, 0, 0, snaplen, linktype))

    def write(self, time_ns: int, data: bytes, wire_length: int | None = None) -> None:
        seconds, rest = divmod(time_ns, 1_000_000_000)
        fraction = rest if self.nanoseconds else rest // 1000
        captured = data[: self.snaplen]
        self.stream.write(
            self.record.pack(seconds, fraction, len(captured), wire_length or len(data))
        )
        self.stream.write(captured)


class PcapngWriter:
    """pcapng: a section header, interfaces with their own link type and time resolution,
    enhanced and simple packet blocks, and any other block."""

    def __init__(self, stream: BinaryIO, *, big_endian: bool = False):
        self.stream = stream
        self.order = ">" if big_endian else "<"
        self.interfaces: list[int] = []  # units per second of each
        self.block(0x0A0D0D0A, struct.pack(self.order + "IHHq", 0x1A2B3C4D, 1, 0, -1))

    def block(self, kind: int, body: bytes) -> None:
        body += b"\x00" * (-len(body) % 4)
        length = 12 + len(body)
        self.stream.write(struct.pack(self.order + "II", kind, length) + body)
        self.stream.write(struct.pack(self.order + "I", length))

    def interface(self, linktype: int, *, resolution: int = 6, snaplen: int = 262144) -> int:
        """Describe an interface; `resolution` is if_tsresol: 10**-resolution seconds (or
        2**-(r & 0x7f) when its top bit is set)."""
        options = b""
        if resolution != 6:
            options = struct.pack(self.order + "HH", 9, 1) + bytes([resolution, 0, 0, 0])
            options += struct.pack(self.order + "HH", 0, 0)
        self.block(1, struct.pack(self.order + "HHI", linktype, 0, snaplen) + options)
        units = 2 ** (resolution & 0x7F) if resolution & 0x80 else 10**resolution
        self.interfaces.append(units)
        return len(self.interfaces) - 1

    def write(self, interface: int, time_ns: int, data: bytes) -> None:
        stamp = time_ns * self.interfaces[interface] // 1_000_000_000
        head = struct.pack(
            self.order + "IIIII",
            interface,
            stamp >> 32,
            stamp & 0xFFFFFFFF,
            len(data),
            len(data),
        )
        self.block(6, head + data)

    def simple(self, data: bytes) -> None:
        self.block(3, struct.pack(self.order + "I", len(data)) + data)


def conversation(
    client: str,
    server: str,
    sport: int,
    dport: int,
    *,
    requests: int = 1,
    pause: float = 0.0,
    request: bytes = b"GET / HTTP/1.1\r\nHost: perfcase.test\r\n\r\n",
    response: bytes = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    rtt: float = 0.0005,
) -> list[tuple[float, Segment]]:
    """A whole TCP connection: the handshake, `requests` request/response rounds (the client
    silent `pause` seconds before each), and a FIN close; as (seconds since the segment
    before, segment)."""
    c, s = 1000, 5000  # initial sequence numbers
    out: list[tuple[float, Segment]] = []

    def send(gap: float, src, dst, sp, dp, seq, ack, flags, payload=b"", options=b""):
        out.append(
            (gap, Segment(src, dst, sp, dp, seq, ack, flags, payload=payload, options=options))
        )

    send(0.0, client, server, sport, dport, c, 0, SYN, options=syn_options())
    send(rtt / 2, server, client, dport, sport, s, c + 1, SYN | ACK, options=syn_options())
    send(rtt / 2, client, server, sport, dport, c + 1, s + 1, ACK)
    c, s = c + 1, s + 1
    for _ in range(requests):
        send(pause or rtt, client, server, sport, dport, c, s, PSH | ACK, request)
        c += len(request)
        send(rtt, server, client, dport, sport, s, c, PSH | ACK, response)
        s += len(response)
        send(rtt / 2, client, server, sport, dport, c, s, ACK)
    send(rtt, client, server, sport, dport, c, s, FIN | ACK)
    send(rtt / 2, server, client, dport, sport, s, c + 1, FIN | ACK)
    send(rtt / 2, client, server, sport, dport, c + 1, s + 1, ACK)
    return out
