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


def tls_client_hello(server_name: str = "perfcase.test") -> bytes:
    """A TLS record holding a minimal TLS 1.2 ClientHello (one suite, SNI)."""
    name = server_name.encode()
    sni = struct.pack("!HBH", len(name) + 3, 0, len(name)) + name
    extensions = struct.pack("!HH", 0, len(sni)) + sni
    body = b"\x03\x03" + bytes(range(32)) + b"\x00" + b"\x00\x02\xc0\x2f" + b"\x01\x00"
    body += struct.pack("!H", len(extensions)) + extensions
    return _handshake_record(1, body)


def tls_server_hello(random: bytes = bytes(range(32, 64)), *, tls13: bool = False) -> bytes:
    """A TLS record holding a minimal ServerHello: TLS 1.2, or 1.3 (supported_versions);
    tls.HELLO_RETRY_RANDOM as `random` makes it a HelloRetryRequest."""
    suite = b"\x13\x01" if tls13 else b"\xc0\x2f"
    body = b"\x03\x03" + random + b"\x00" + suite + b"\x00"
    if tls13:
        extensions = struct.pack("!HHH", 43, 2, 0x0304)
        body += struct.pack("!H", len(extensions)) + extensions
    return _handshake_record(2, body)


def _handshake_record(kind: int, body: bytes) -> bytes:
    message = bytes([kind]) + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + struct.pack("!H", len(message)) + message


def exchange(
    client: str, server: str, sport: int, dport: int, turns: list[tuple[str, bytes]]
) -> list[Segment]:
    """A whole TCP connection: the handshake, each ("client" | "server", payload) turn
    acknowledged by the other side, and a FIN close."""
    seq = {"client": 1000, "server": 5000}
    ends = {"client": (client, sport), "server": (server, dport)}
    out: list[Segment] = []

    def send(side: str, flags: int, payload: bytes = b"", options: bytes = b"") -> None:
        other = "server" if side == "client" else "client"
        (src, sp), (dst, dp) = ends[side], ends[other]
        ack = seq[other] if flags & ACK else 0
        out.append(
            Segment(src, dst, sp, dp, seq[side], ack, flags, payload=payload, options=options)
        )
        seq[side] += len(payload) + (1 if flags & (SYN | FIN) else 0)

    send("client", SYN, options=syn_options())
    send("server", SYN | ACK, options=syn_options())
    send("client", ACK)
    for side, payload in turns:
        send(side, PSH | ACK, payload)
        send("server" if side == "client" else "client", ACK)
    send("client", FIN | ACK)
    send("server", FIN | ACK)
    send("client", ACK)
    return out


def udp_bytes(sport: int, dport: int, payload: bytes) -> bytes:
    return struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload


def carried(src: str, dst: str, protocol: int, body: bytes) -> bytes:
    """An IP packet from `src` to `dst` carrying `body` of IP protocol `protocol`."""
    return ip_packet(Segment(src, dst, 0, 0, 0, 0, 0), transport=body, protocol=protocol)


def ethernet_bytes(packet: bytes) -> bytes:
    return frame(LINKTYPE_ETHERNET, packet)


def gre(
    src: str,
    dst: str,
    inner: bytes,
    *,
    protocol: int,
    key: int | None = None,
    sequence: int | None = None,
    version: int = 0,
) -> bytes:
    """`inner` (an IP packet, or a frame for bridging and ERSPAN) in GRE over IP."""
    flags = version | (0x2000 if key is not None else 0) | (0x1000 if sequence is not None else 0)
    header = struct.pack("!HH", flags, protocol)
    if key is not None:
        header += struct.pack("!I", key)
    if sequence is not None:
        header += struct.pack("!I", sequence)
    return carried(src, dst, 47, header + inner)


def erspan(src: str, dst: str, inner: bytes, *, kind: int, sequence: int = 1) -> bytes:
    """`inner` (an IP packet) mirrored in an Ethernet frame by ERSPAN type 2 or 3."""
    mirrored = ethernet_bytes(inner)
    if kind == 2:
        header = struct.pack("!HHI", 0x1000 | 10, 0x0001, 0)  # version 1, VLAN 10; session 1
        return gre(src, dst, header + mirrored, protocol=0x88BE, sequence=sequence)
    header = struct.pack("!HHII", 0x2000 | 10, 0x0001, 0, 0)  # version 2, no platform header
    return gre(src, dst, header + mirrored, protocol=0x22EB, sequence=sequence)


def vxlan(src: str, dst: str, inner: bytes, *, vni: int = 42, sport: int = 49152) -> bytes:
    """`inner` (an IP packet) in an Ethernet frame in VXLAN over UDP port 4789."""
    header = struct.pack("!II", 0x08000000, vni << 8)
    return carried(src, dst, 17, udp_bytes(sport, 4789, header + ethernet_bytes(inner)))


def geneve(src: str, dst: str, inner: bytes, *, vni: int = 42, sport: int = 49153) -> bytes:
    """`inner` (an IP packet) in Geneve over UDP port 6081, with one 8-byte option."""
    option = struct.pack("!HBB", 0x0101, 0x01, 1) + b"\x00" * 4
    header = struct.pack("!BBHI", len(option) // 4, 0, 0x6558, vni << 8) + option
    return carried(src, dst, 17, udp_bytes(sport, 6081, header + ethernet_bytes(inner)))


def mpls(packet: bytes, labels: tuple[int, ...] = (16, 17)) -> bytes:
    """`packet` (an IP packet) under a stack of MPLS labels, the last marked bottom of stack,
    in an Ethernet frame of EtherType 0x8847 (MPLS unicast)."""
    stack = b"".join(
        struct.pack("!I", label << 12 | (1 << 8 if i == len(labels) - 1 else 0) | 64)
        for i, label in enumerate(labels)
    )
    return (
        b"\x02\x00\x00\x00\x00\x02\x02\x00\x00\x00\x00\x01"
        + struct.pack("!H", 0x8847)
        + stack
        + packet
    )


def teredo(src: str, dst: str, inner: bytes, *, origin: bool = True, sport: int = 49154) -> bytes:
    """`inner` (an IPv6 packet) in Teredo over UDP port 3544, after an origin indication
    header (a relay's packet to its client) when `origin`."""
    header = struct.pack("!HH4s", 0x0000, 0xFFFF ^ 40000, bytes(~b & 0xFF for b in (192, 0, 2, 9)))
    return carried(src, dst, 17, udp_bytes(3544, sport, (header if origin else b"") + inner))
