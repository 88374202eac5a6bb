"""The synthetic captures committed in tests/collectors/data/captures (see its README):
TLS after a plaintext prelude, and TCP inside tunnels. Written by collectors.capture.synth;
run `python -m tests.collectors.capture_samples DIR` to write them again (byte for byte the
same: the times are fixed).
"""

import sys
from pathlib import Path

from collectors.capture.synth import (
    LINKTYPE_ETHERNET,
    PcapWriter,
    carried,
    erspan,
    ethernet_bytes,
    exchange,
    geneve,
    gre,
    ip_packet,
    tls_client_hello,
    tls_server_hello,
    udp_bytes,
    vxlan,
)

START_NS = 1_767_225_600 * 10**9  # 2026-01-01
STEP_NS = 1_000_000

HELLOS = [("client", tls_client_hello()), ("server", tls_server_hello())]
APPLICATION = [("client", b"\x17\x03\x03\x00\x05hello"), ("server", b"\x17\x03\x03\x00\x03bye")]

# The preludes before TLS: (server port, turns before the hellos).
PRELUDES = {
    "http-connect": (3128, [
        ("client", b"CONNECT perfcase.test:443 HTTP/1.1\r\nHost: perfcase.test:443\r\n\r\n"),
        ("server", b"HTTP/1.1 200 Connection established\r\n\r\n"),
    ]),
    "smtp-starttls": (25, [
        ("server", b"220 perfcase.test ESMTP\r\n"),
        ("client", b"EHLO client.perfcase.test\r\n"),
        ("server", b"250-perfcase.test\r\n250-SIZE 10240000\r\n250 STARTTLS\r\n"),
        ("client", b"STARTTLS\r\n"),
        ("server", b"220 2.0.0 Ready to start TLS\r\n"),
    ]),
    "imap-starttls": (143, [
        ("server", b"* OK [CAPABILITY IMAP4rev1 STARTTLS] perfcase.test ready\r\n"),
        ("client", b"a001 STARTTLS\r\n"),
        ("server", b"a001 OK Begin TLS negotiation now\r\n"),
    ]),
    "pop3-stls": (110, [
        ("server", b"+OK POP3 perfcase.test ready\r\n"),
        ("client", b"STLS\r\n"),
        ("server", b"+OK Begin TLS negotiation\r\n"),
    ]),
    "socks5": (1080, [
        ("client", b"\x05\x01\x00"),
        ("server", b"\x05\x00"),
        ("client", b"\x05\x01\x00\x03\x0dperfcase.test\x01\xbb"),
        ("server", b"\x05\x00\x00\x01\x00\x00\x00\x00\x00\x00"),
    ]),
}  # fmt: skip


def write_prelude_capture(path: Path) -> None:
    """A plain HTTP connection that has no TLS at all, then one connection per prelude,
    each then a TLS handshake. SOCKS comes last: after a SOCKS connection tshark's tcp.stream
    numbers run one ahead of ours (see test_capture_protocols), and last it shifts none."""
    with open(path, "wb") as stream:
        writer = PcapWriter(stream, LINKTYPE_ETHERNET)
        now = START_NS
        plain = [("client", b"GET / HTTP/1.1\r\nHost: perfcase.test\r\n\r\n")] + [
            ("server", b"HTTP/1.1 200 OK\r\nContent-Length: 6\r\n\r\n\x16\x03\x01\x00\x01\x01")
        ]
        connections = [(80, plain)] + [
            (port, turns + HELLOS + APPLICATION) for port, turns in PRELUDES.values()
        ]
        for index, (port, conversation) in enumerate(connections):
            for segment in exchange("192.0.2.10", "192.0.2.20", 40000 + index, port, conversation):
                writer.write(now, ethernet_bytes(ip_packet(segment)))
                now += STEP_NS


OUTER = ("198.51.100.1", "198.51.100.2")
# Each tunnel wraps an inner IP packet into an outer one (src, dst).
TUNNELS = {
    "gre-ip": lambda src, dst, p: gre(src, dst, p, protocol=0x0800 if p[0] >> 4 == 4 else 0x86DD),
    "gre-bridged": lambda src, dst, p: gre(
        src, dst, ethernet_bytes(p), protocol=0x6558, key=7, sequence=1
    ),
    "erspan-2": lambda src, dst, p: erspan(src, dst, p, kind=2),
    "erspan-3": lambda src, dst, p: erspan(src, dst, p, kind=3),
    "vxlan": vxlan,
    "geneve": geneve,
}


def write_tunnel_capture(path: Path) -> None:
    """A TLS connection inside each kind of tunnel (one inside GRE over IPv6), its first
    application-data segment sent twice (a retransmission); then two packets whose tunnel
    is not read here (enhanced GRE as PPTP sends it, Geneve carrying an unknown type)."""
    with open(path, "wb") as stream:
        writer = PcapWriter(stream, LINKTYPE_ETHERNET)
        now = START_NS
        for index, wrap in enumerate(TUNNELS.values()):
            client, server = f"10.{index}.0.1", f"10.{index}.0.2"
            if index == 0:
                client, server = "2001:db8::1", "2001:db8::2"
            segments = exchange(client, server, 50000 + index, 443, HELLOS + APPLICATION)
            data = next(i for i, s in enumerate(segments) if s.payload.startswith(b"\x17"))
            segments.insert(data + 2, segments[data])
            for segment in segments:
                there = segment.src == client
                src, dst = OUTER if there else OUTER[::-1]
                writer.write(now, ethernet_bytes(wrap(src, dst, ip_packet(segment))))
                now += STEP_NS
        pptp = gre(*OUTER, b"\xff\x03\x00\x21", protocol=0x880B, version=1)
        writer.write(now, ethernet_bytes(pptp))
        unknown = udp_bytes(49154, 6081, b"\x00\x00\x12\x34\x00\x00\x2a\x00" + b"\x00" * 8)
        writer.write(now + STEP_NS, ethernet_bytes(carried(*OUTER, 17, unknown)))


SAMPLES = {
    "tls-after-prelude-ethernet.pcap": write_prelude_capture,
    "tunnels-ethernet.pcap": write_tunnel_capture,
}

if __name__ == "__main__":
    for name, write in SAMPLES.items():
        write(Path(sys.argv[1]) / name)
