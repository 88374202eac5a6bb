"""collectors.capture on the protocols people really capture: TLS that starts after a
plaintext prelude (a proxy's CONNECT, SOCKS, STARTTLS) and TCP inside tunnels (GRE,
ERSPAN, VXLAN, Geneve), on the committed synthetic captures (tests/collectors/capture_samples)
and on captures written here, each checked against tshark.
"""

import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from collectors.capture import analyse_capture, read_packets
from collectors.capture.synth import (
    LINKTYPE_ETHERNET,
    PcapWriter,
    carried,
    ethernet_bytes,
    exchange,
    gre,
    ip_packet,
    mpls,
    teredo,
    tls_client_hello,
    tls_server_hello,
    udp_bytes,
    vxlan,
)
from collectors.capture.tls import HELLO_RETRY_RANDOM
from tests.collectors.capture_samples import (
    HELLOS,
    PRELUDES,
    SAMPLES,
    START_NS,
    STEP_NS,
    TUNNELS,
)
from tests.collectors.test_capture import DATA, assert_matches_tshark, need_tshark, tshark_count


def write(path: Path, frames: list[bytes], snaplen: int = 262144) -> Path:
    with open(path, "wb") as stream:
        writer = PcapWriter(stream, LINKTYPE_ETHERNET, snaplen=snaplen)
        for index, data in enumerate(frames):
            writer.write(START_NS + index * STEP_NS, data)
    return path


def plain(segments) -> list[bytes]:
    return [ethernet_bytes(ip_packet(segment)) for segment in segments]


@pytest.fixture
def scratch():
    with tempfile.TemporaryDirectory() as folder:
        yield Path(folder)


def test_the_committed_synthetic_captures_are_what_capture_samples_writes(scratch):
    for name, make in SAMPLES.items():
        make(scratch / name)
        assert (scratch / name).read_bytes() == (DATA / name).read_bytes(), name


def test_tls_after_each_plaintext_prelude_is_counted_and_plain_http_is_not():
    figures = analyse_capture(DATA / "tls-after-prelude-ethernet.pcap").as_dict()
    assert figures["connections"] == len(PRELUDES) + 1
    assert figures["tls_handshakes"] == len(PRELUDES)  # the plain HTTP connection has none
    assert figures["tls"]["server_hellos"] == len(PRELUDES)
    assert figures["tls"]["versions"] == {"TLS 1.2": len(PRELUDES)}
    assert figures["tls"]["server_names"] == [
        {"name": "perfcase.test", "count": len(PRELUDES), "possible_undercount": 0}
    ]


@pytest.mark.parametrize("prelude", sorted(PRELUDES))
def test_each_prelude_alone_gives_tsharks_client_hello(scratch, prelude):
    port, turns = PRELUDES[prelude]
    path = write(
        scratch / "one.pcap", plain(exchange("192.0.2.1", "192.0.2.2", 40000, port, turns + HELLOS))
    )
    assert analyse_capture(path).as_dict()["tls_handshakes"] == 1
    assert_matches_tshark(path)


# PROXY protocol headers as a load balancer sends them before the client's first bytes.
PROXY_V1 = b"PROXY TCP4 198.51.100.7 192.0.2.2 51000 443\r\n"
PROXY_V2 = (
    b"\r\n\r\n\x00\r\nQUIT\n"
    + bytes([0x21, 0x11])  # version 2, PROXY; TCP over IPv4
    + struct.pack("!H4s4sHH", 12, bytes([198, 51, 100, 7]), bytes([192, 0, 2, 2]), 51000, 443)
)


def proxied(scratch, header: bytes, together: bool) -> Path:
    hello = [("client", header + tls_client_hello())] if together else [
        ("client", header), ("client", tls_client_hello())]  # fmt: skip
    turns = hello + [("server", tls_server_hello())]
    return write(
        scratch / "proxy.pcap", plain(exchange("192.0.2.1", "192.0.2.2", 40000, 443, turns))
    )


@pytest.mark.parametrize(
    ("header", "together"),
    [(PROXY_V1, True), (PROXY_V1, False), (PROXY_V2, False)],
    ids=["v1-same-segment", "v1-own-segment", "v2-own-segment"],
)
def test_a_hello_after_a_proxy_protocol_header_is_tsharks(scratch, header, together):
    """Behind a load balancer that speaks the PROXY protocol the hello follows its header,
    in the same segment or the next."""
    path = proxied(scratch, header, together)
    assert analyse_capture(path).as_dict()["tls_handshakes"] == 1
    assert_matches_tshark(path)


def test_a_hello_in_the_segment_of_a_proxy_v2_header_is_counted_where_tshark_does_not(scratch):
    """A documented difference: tshark (4.0) reads neither a PROXY v2 header that shares its
    segment with the client's first bytes nor what follows it, so it sees no hello there;
    the hello is there, and counted."""
    need_tshark()
    path = proxied(scratch, PROXY_V2, True)
    assert analyse_capture(path).as_dict()["tls_handshakes"] == 1
    assert tshark_count(path, "tls.handshake.type == 1") == 0


def test_the_search_for_a_hello_past_a_prelude_is_bounded(scratch):
    """The first 15 payload segments of a direction may be a prelude; a hello after more is
    not looked for (tshark, which reads the whole stream, counts it: a bound of ours)."""
    counts = {}
    for lines in (15, 16):
        turns = [("client", b"NOOP\r\n")] * lines + HELLOS
        path = write(
            scratch / f"{lines}.pcap", plain(exchange("192.0.2.1", "192.0.2.2", 40000, 25, turns))
        )
        counts[lines] = analyse_capture(path).as_dict()["tls_handshakes"]
    assert counts == {15: 1, 16: 0}
    big = [("client", b"X" * 16385)] + HELLOS
    path = write(scratch / "big.pcap", plain(exchange("192.0.2.1", "192.0.2.2", 40000, 25, big)))
    assert analyse_capture(path).as_dict()["tls_handshakes"] == 0


def test_a_capture_that_begins_inside_tls_is_not_searched_for_a_later_hello(scratch):
    turns = [("client", b"\x17\x03\x03\x00\x02hi"), ("client", tls_client_hello())]
    path = write(
        scratch / "inside.pcap", plain(exchange("192.0.2.1", "192.0.2.2", 40000, 8443, turns))
    )
    assert analyse_capture(path).as_dict()["tls_handshakes"] == 0


def test_tcp_in_every_kind_of_tunnel_counts_as_plain_tcp_and_unread_tunnels_are_said():
    figures = analyse_capture(DATA / "tunnels-ethernet.pcap").as_dict()
    assert figures["connections"] == len(TUNNELS)
    assert figures["tls_handshakes"] == len(TUNNELS)
    assert figures["retransmissions"] == len(TUNNELS)
    assert figures["decode"]["tcp"] == figures["packets"] - 2
    assert figures["decode"]["unreadable_tunnel"] == 2
    assert figures["tunnels"] == {"gre": 31, "erspan": 30, "vxlan": 15, "geneve": 16}
    servers = {c["connection"].split(" -> ")[1] for c in figures["top_connections"]}
    assert servers == {"[2001:db8::2]:443"} | {f"10.{i}.0.2:443" for i in range(1, 6)}


def test_a_tunnel_inside_a_tunnel_is_decoded(scratch):
    segments = exchange("10.9.0.1", "10.9.0.2", 50000, 443, HELLOS)
    frames = [
        ethernet_bytes(
            gre(
                "203.0.113.1",
                "203.0.113.2",
                vxlan("198.51.100.1", "198.51.100.2", ip_packet(s)),
                protocol=0x0800,
            )
        )
        for s in segments
    ]
    path = write(scratch / "nested.pcap", frames)
    figures = analyse_capture(path).as_dict()
    assert (figures["connections"], figures["tls_handshakes"]) == (1, 1)
    assert figures["tunnels"] == {"gre": len(frames), "vxlan": len(frames)}
    assert_matches_tshark(path)


def test_tcp_past_mpls_labels_and_in_mpls_over_gre_is_tsharks(scratch):
    """IPv4 and IPv6 under a stack of labels on Ethernet, and under one label in GRE."""
    frames = [mpls(ip_packet(s)) for s in exchange("10.7.0.1", "10.7.0.2", 50000, 443, HELLOS)]
    frames += [
        mpls(ip_packet(s), labels=(16, 17, 18))
        for s in exchange("2001:db8::7", "2001:db8::8", 50001, 443, HELLOS)
    ]
    label = struct.pack("!I", 16 << 12 | 1 << 8 | 64)
    in_gre = [
        ethernet_bytes(gre("203.0.113.1", "203.0.113.2", label + ip_packet(s), protocol=0x8847))
        for s in exchange("10.8.0.1", "10.8.0.2", 50002, 443, HELLOS)
    ]
    path = write(scratch / "mpls.pcap", frames + in_gre)

    figures = analyse_capture(path).as_dict()
    assert (figures["connections"], figures["tls_handshakes"]) == (3, 3)
    assert figures["tunnels"] == {"mpls": len(frames), "gre": len(in_gre)}
    assert figures["decode"]["tcp"] == figures["packets"]
    assert_matches_tshark(path)


def test_a_pseudowire_under_mpls_labels_is_not_ip_and_is_counted_so(scratch):
    """What follows the bottom label and is neither IPv4 nor IPv6 (an Ethernet pseudowire's
    control word) is counted as not IP, never read as a packet."""
    control_word = b"\x00\x00\x00\x00"
    pseudowire = mpls(control_word + ethernet_bytes(ip_packet(exchange(
        "10.7.0.1", "10.7.0.2", 50000, 443, HELLOS)[0])))  # fmt: skip
    path = write(scratch / "pw.pcap", [pseudowire])
    figures = analyse_capture(path).as_dict()
    assert figures["decode"]["non_ip"] == 1 and figures["connections"] == 0
    assert figures["tunnels"] == {"mpls": 1}


@pytest.mark.parametrize("origin", [True, False], ids=["origin-indication", "bare"])
def test_tcp_in_teredo_is_tsharks(scratch, origin):
    segments = exchange("2001:0:4136:e378::1", "2001:db8::9", 50003, 443, HELLOS)
    frames = [
        ethernet_bytes(teredo("192.0.2.10", "192.0.2.11", ip_packet(s), origin=origin))
        for s in segments
    ]
    path = write(scratch / "teredo.pcap", frames)

    figures = analyse_capture(path).as_dict()
    assert (figures["connections"], figures["tls_handshakes"]) == (1, 1)
    assert figures["tunnels"] == {"teredo": len(frames)}
    assert_matches_tshark(path)


def test_other_udp_on_the_teredo_port_stays_udp(scratch):
    path = write(
        scratch / "udp.pcap",
        # "h" is 0x68: the version nibble of IPv6, but no IPv6 header that fills the datagram.
        [ethernet_bytes(carried("192.0.2.10", "192.0.2.11", 17, udp_bytes(3544, 53, b"hello?")))],
    )
    figures = analyse_capture(path).as_dict()
    assert figures["decode"]["udp"] == 1 and figures["tunnels"] == {}


def test_a_tunnel_header_cut_by_the_snap_length_is_counted_as_truncated(scratch):
    (segment,) = exchange("10.9.0.1", "10.9.0.2", 50000, 443, [])[:1]
    frame = ethernet_bytes(vxlan("198.51.100.1", "198.51.100.2", ip_packet(segment)))
    path = write(scratch / "cut.pcap", [frame], snaplen=14 + 20 + 8 + 8 + 10)
    figures = analyse_capture(path).as_dict()
    assert figures["decode"]["truncated"] == 1 and figures["decode"]["tcp"] == 0
    assert figures["tunnels"] == {"vxlan": 1}


def test_a_second_client_hello_after_a_hello_retry_request_is_not_counted(scratch):
    """A documented difference: tshark counts both ClientHellos of a handshake the server
    asked to retry; a handshake is counted once here, and the retry is said."""
    need_tshark()
    turns = [
        ("client", tls_client_hello()),
        ("server", tls_server_hello(HELLO_RETRY_RANDOM, tls13=True)),
        ("client", tls_client_hello()),
        ("server", tls_server_hello(tls13=True)),
    ]
    path = write(
        scratch / "retry.pcap", plain(exchange("192.0.2.1", "192.0.2.2", 40000, 443, turns))
    )
    figures = analyse_capture(path).as_dict()
    assert figures["tls"]["hello_retry_requests"] == 1
    assert tshark_count(path, "tls.handshake.type == 1") == 2
    assert figures["tls_handshakes"] == 1
    done = subprocess.run(
        ["tshark", "-r", str(path), "-q", "-z", "conv,tcp"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert sum("<->" in line for line in done.stdout.splitlines()) == figures["connections"]


def test_after_a_socks_connection_tsharks_stream_numbers_run_one_ahead(scratch):
    """A documented difference: tshark also numbers the conversation a SOCKS connection
    asks for (a tcp.stream no packet has), so the connections after it are numbered one
    more there; their count (-z conv,tcp) and every other figure are the same."""
    need_tshark()
    port, turns = PRELUDES["socks5"]
    frames = []
    for sport in (40000, 40001):
        frames += plain(exchange("192.0.2.1", "192.0.2.2", sport, port, turns + HELLOS))
    path = write(scratch / "socks.pcap", frames)
    done = subprocess.run(
        ["tshark", "-r", str(path), "-T", "fields", "-e", "tcp.stream"],
        capture_output=True,
        text=True,
        check=True,
    )
    theirs = sorted({int(n) for n in done.stdout.split()})
    figures = analyse_capture(path).as_dict()
    ours = sorted({c["stream"] for c in figures["top_connections"]})
    assert (ours, theirs) == ([0, 1], [0, 2])
    assert figures["connections"] == 2 and figures["tls_handshakes"] == 2


def test_an_icmp_error_quoting_a_tcp_header_is_no_packet_of_its_connection(scratch):
    """A documented difference: tshark gives an ICMP error that quotes a TCP header (here
    "fragmentation needed" for the request) its connection's tcp.stream, though -z conv,tcp
    does not count it; here it is an ICMP packet (decode["other_ip"]). The five counts are
    the same."""
    need_tshark()
    segments = exchange(
        "192.0.2.1", "192.0.2.2", 40000, 80, [("client", b"GET / HTTP/1.1\r\n\r\n")]
    )
    frames = plain(segments)
    quoted = ip_packet(segments[3])[:48]  # the IP header and the TCP header of the request
    icmp = struct.pack("!BBHHH", 3, 4, 0, 0, 1400) + quoted
    frames.insert(4, ethernet_bytes(carried("192.0.2.254", "192.0.2.1", 1, icmp)))
    path = write(scratch / "icmp.pcap", frames)
    done = subprocess.run(
        [
            "tshark",
            "-r",
            str(path),
            "-Y",
            "icmp",
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "tcp.stream",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.split() == ["5", "0"]
    (icmp_packet,) = [p for p in read_packets(path) if p.number == 5]
    assert icmp_packet.ip_protocol == 1 and icmp_packet.stream is None
    assert analyse_capture(path).as_dict()["decode"]["other_ip"] == 1
    assert_matches_tshark(path)


def test_ip_in_ip_and_6in4_are_decoded(scratch):
    frames = []
    for index, (client, server, protocol) in enumerate(
        [("10.8.0.1", "10.8.0.2", 4), ("2001:db8::81", "2001:db8::82", 41)]
    ):
        for segment in exchange(client, server, 50000 + index, 443, HELLOS):
            outer = carried("203.0.113.1", "203.0.113.2", protocol, ip_packet(segment))
            frames.append(ethernet_bytes(outer))
    path = write(scratch / "ipip.pcap", frames)
    figures = analyse_capture(path).as_dict()
    assert (figures["connections"], figures["tls_handshakes"]) == (2, 2)
    assert figures["tunnels"] == {"ip_in_ip": len(frames)}
    assert_matches_tshark(path)


def test_erspan_type_1_and_type_3_with_its_platform_header_are_decoded(scratch):
    type_3 = struct.pack("!HHII", 0x2000 | 10, 0x0001, 0, 1) + b"\x00" * 8  # O set
    frames = []
    for index, (header, protocol, sequence) in enumerate(
        [(b"", 0x88BE, None), (type_3, 0x22EB, 1)]
    ):
        for segment in exchange(f"10.7.{index}.1", f"10.7.{index}.2", 50000, 443, HELLOS):
            mirrored = header + ethernet_bytes(ip_packet(segment))
            outer = gre(
                "198.51.100.1", "198.51.100.2", mirrored, protocol=protocol, sequence=sequence
            )
            frames.append(ethernet_bytes(outer))
    path = write(scratch / "erspan.pcap", frames)
    figures = analyse_capture(path).as_dict()
    assert (figures["connections"], figures["tls_handshakes"]) == (2, 2)
    assert figures["tunnels"] == {"erspan": len(frames)}
    assert_matches_tshark(path)
