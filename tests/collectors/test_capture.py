"""collectors.capture on real captures (tests/collectors/data/captures, made by tcpdump:
see its README) and on synthetic ones written by collectors.capture.synth, always checked
against tshark: the tcp.analysis counts (retransmission, duplicate_ack, zero_window,
out_of_order and more), the conversations of `-z conv,tcp`, and, packet by packet, every
analysis flag and tcp.stream number.
"""

import io
import json
import random
import struct
import subprocess
import tempfile
from pathlib import Path

import pytest

from collectors.capture import (
    FIGURES,
    NotACaptureError,
    SideSummary,
    analyse_capture,
    compare,
    read_packets,
)
from collectors.capture import _core as core
from collectors.capture.stats import TIME_EDGES_NS
from collectors.capture.synth import (
    ACK,
    FIN,
    LINKTYPE_ETHERNET,
    LINKTYPE_IPV4,
    LINKTYPE_LINUX_SLL,
    LINKTYPE_LINUX_SLL2,
    LINKTYPE_NULL,
    LINKTYPE_RAW,
    PSH,
    SYN,
    PcapngWriter,
    PcapWriter,
    Segment,
    frame,
    ip_packet,
    syn_options,
)
from collectors.capture.tls import parse_client_hello

DATA = Path(__file__).resolve().parent / "data" / "captures"
CAPTURES = sorted(p for p in DATA.iterdir() if p.suffix in (".pcap", ".pcapng"))

# The four counts that must equal tshark's on every capture, and the others we compare.
REQUIRED = ("retransmission", "duplicate_ack", "zero_window", "out_of_order")
COMPARED = REQUIRED + (
    "fast_retransmission",
    "spurious_retransmission",
    "lost_segment",
    "ack_lost_segment",
    "keep_alive",
    "window_update",
    "zero_window_probe",
)
OUR_KEYS = {
    "retransmission": "retransmissions",
    "duplicate_ack": "duplicate_acks",
    "zero_window": "zero_windows",
    "out_of_order": "out_of_order",
    "fast_retransmission": "fast_retransmissions",
    "spurious_retransmission": "spurious_retransmissions",
    "lost_segment": "lost_segments",
    "ack_lost_segment": "acked_unseen_segments",
    "keep_alive": "keep_alives",
}


# --- tshark ----------------------------------------------------------------------------------


def need_tshark() -> None:
    from tests.ladders import require

    require("tshark")


def tshark_count(path: Path, display_filter: str) -> int:
    done = subprocess.run(
        ["tshark", "-r", str(path), "-Y", display_filter],
        capture_output=True,
        text=True,
        check=True,
    )
    return len(done.stdout.splitlines())


def tshark_figures(path: Path) -> dict:
    """What tshark says of a capture, read in one pass (each tshark start costs a fraction
    of a second of CPU): packets and bytes, the frames with a ClientHello, the frames that
    carry each tcp.analysis flag, the conversations of `-z conv,tcp`, and {frame number:
    (tcp.stream, flags)} of the TCP packets. Not for the ICMP errors quoting a TCP
    header: tshark gives those their connection's tcp.stream too, though they are none of its
    packets (a documented difference: test_capture_protocols)."""
    fields = ["frame.number", "frame.len", "tcp.stream", "icmp.type", "icmpv6.type"]
    fields += ["tls.handshake.type", *(f"tcp.analysis.{name}" for name in COMPARED)]
    argv = ["tshark", "-r", str(path), "-T", "fields", "-E", "occurrence=a"]
    argv += ["-E", "aggregator=,", "-z", "conv,tcp"]
    for name in fields:
        argv += ["-e", name]
    done = subprocess.run(argv, capture_output=True, text=True, check=True)
    figures = {"packets": 0, "bytes": 0, "client_hellos": 0, "connections": 0}
    figures["flagged"] = dict.fromkeys(COMPARED, 0)
    figures["tcp"] = {}
    for line in done.stdout.splitlines():
        values = line.split("\t")
        if len(values) != len(fields):
            figures["connections"] += "<->" in line  # the -z conv,tcp table, after the frames
            continue
        number, length, stream, icmp, icmpv6, handshakes, *flags = values
        figures["packets"] += 1
        figures["bytes"] += int(length)
        figures["client_hellos"] += "1" in handshakes.split(",")
        for name, value in zip(COMPARED, flags, strict=True):
            figures["flagged"][name] += bool(value)
        if stream and not (icmp or icmpv6):
            figures["tcp"][int(number)] = (
                int(stream.split(",")[0]),
                frozenset(name for name, value in zip(COMPARED, flags, strict=True) if value),
            )
    return figures


def assert_matches_tshark(path: Path, analysis=None) -> None:
    """Our counts equal tshark's: packets, bytes and ClientHellos, the tcp.analysis
    filters, -z conv,tcp, and every TCP packet's stream and flags."""
    need_tshark()
    analysis = analysis or analyse_capture(path)
    figures = analysis.as_dict()
    theirs = tshark_figures(path)
    assert (figures["packets"], figures["bytes"]) == (theirs["packets"], theirs["bytes"])
    assert figures["tls_handshakes"] == theirs["client_hellos"]
    for name in REQUIRED:
        assert figures[OUR_KEYS[name]] == theirs["flagged"][name], name
    assert figures["connections"] == theirs["connections"]
    ours = {
        p.number: (p.stream, p.analysis & frozenset(COMPARED))
        for p in read_packets(path)
        if p.stream is not None
    }
    assert ours == theirs["tcp"]
    for name in COMPARED:
        if name in OUR_KEYS:
            counted = sum(1 for _, flags in theirs["tcp"].values() if name in flags)
            assert figures[OUR_KEYS[name]] == counted, name


# --- the committed real captures -------------------------------------------------------------


def test_the_time_buckets_python_holds_are_the_cores():
    assert TIME_EDGES_NS == tuple(core.histogram_edges_ns())


def test_the_committed_captures_are_small():
    assert sum(p.stat().st_size for p in CAPTURES) < 1_000_000
    assert len(CAPTURES) == 7


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_every_committed_capture_counts_what_tshark_counts(path):
    assert_matches_tshark(path)


def test_short_tls_connections_show_each_handshake_its_resumption_and_the_server_name():
    analysis = analyse_capture(DATA / "tls-short-connections-sll2.pcap")
    figures = analysis.as_dict()
    assert figures["link_types"] == {"linux_sll2": 176}
    assert figures["connections"] == 12
    assert figures["tls_handshakes"] == 12
    assert figures["tls"]["full_handshakes"] == 2
    assert figures["tls"]["resumptions"] == 10
    assert figures["tls"]["versions"] == {"TLS 1.3": 6, "TLS 1.2": 6}
    assert figures["tls"]["server_names"] == [
        {"name": "perfcase.test", "count": 12, "possible_undercount": 0}
    ]
    assert figures["connection"]["handshakes"] == {"completed": 12}
    (port,) = figures["connection"]["server_ports"]
    assert port["connections"] == 12
    assert figures["top_connections"][0]["connection"].endswith(f"127.0.0.61:{port['port']}")
    assert figures["connection"]["server_guessed"] == 0
    assert figures["gaps"] == []


def test_a_paused_keepalive_connection_shows_who_was_silent_before_what():
    analysis = analyse_capture(DATA / "keepalive-pauses-ethernet.pcap")
    figures = analysis.as_dict()
    assert figures["connections"] == 1
    assert figures["connection"]["requests"] == 8
    kinds = {(k["silent"], k["before"]): k["count"] for k in figures["gap_kinds"]}
    assert kinds[("client", "request")] == 8
    assert kinds[("server", "response")] == 2
    for gap in figures["gaps"]:
        assert set(gap) >= {"connection", "at", "seconds", "silent", "before"}
        assert gap["connection"].startswith("127.0.0.1:")
        assert gap["connection"].split(" -> ")[1].startswith("127.0.0.62:")
        assert 0.1 < gap["seconds"] < 0.3
    assert figures["gaps"] == sorted(figures["gaps"], key=lambda g: -g["seconds"])
    assert figures["request_wait"]["count"] == 7  # the first request follows no response


def test_a_pcapng_of_two_interfaces_reads_each_with_its_own_link_type():
    merged = analyse_capture(DATA / "two-interfaces.pcapng").as_dict()
    tls = analyse_capture(DATA / "tls-short-connections-sll2.pcap").as_dict()
    keepalive = analyse_capture(DATA / "keepalive-pauses-ethernet.pcap").as_dict()
    assert [i["linktype"] for i in merged["interfaces"]] == [276, 1]
    assert merged["link_types"] == {"linux_sll2": 176, "ethernet": 35}
    for key in ("packets", "bytes", "connections", "tls_handshakes", "gap_count"):
        assert merged[key] == tls[key] + keepalive[key], key


def test_a_lossy_link_shows_retransmissions_and_duplicate_acks_on_both_ip_versions():
    figures = analyse_capture(DATA / "lossy-link-ethernet.pcap").as_dict()
    assert figures["connections"] == 2
    assert figures["retransmissions"] > 0 and figures["duplicate_acks"] > 0
    assert figures["decode"]["ipv4"] > 0 and figures["decode"]["ipv6"] > 0
    assert figures["retransmitting_connections"]
    assert {c["connection"].split(" -> ")[1] for c in figures["top_connections"]} == {
        "198.18.0.2:5001",
        "[2001:db8::2]:5001",
    }


def test_a_closed_receive_window_is_counted():
    figures = analyse_capture(DATA / "zero-window-sll.pcap").as_dict()
    assert figures["zero_windows"] > 0
    assert figures["link_types"] == {"linux_sll": figures["packets"]}


def test_as_dict_is_json_with_the_keys_the_api_reads():
    figures = analyse_capture(DATA / "keepalive-pauses-ethernet.pcap").as_dict()
    json.dumps(figures, allow_nan=False)
    for key in ("packets", "bytes", "duration_s", "connections", "connections_per_s",
                "tls_handshakes", "retransmissions", "duplicate_acks", "zero_windows",
                "resets", "gaps"):  # fmt: skip
        assert key in figures


def test_progress_is_reported_from_zero_to_the_whole_file():
    path = DATA / "lossy-link-ethernet.pcap"
    calls = []
    analyse_capture(path, progress=lambda done, total: calls.append((done, total)))
    size = path.stat().st_size
    assert calls[0] == (0, size) and calls[-1] == (size, size)


def test_a_binary_stream_of_unknown_size_is_read_like_the_file():
    path = DATA / "tls-short-connections-sll2.pcap"

    class Pipe(io.RawIOBase):  # no fileno: the size is unknown
        def __init__(self, data: bytes):
            self.data = io.BytesIO(data)

        def readable(self) -> bool:
            return True

        def read(self, n: int = -1) -> bytes:
            return self.data.read(n)

    calls = []
    from_stream = analyse_capture(Pipe(path.read_bytes()), progress=lambda d, t: calls.append(t))
    assert from_stream.as_dict() == analyse_capture(path).as_dict()
    assert set(calls) == {None}


def test_side_a_with_many_handshakes_compares_worse_on_connections_than_keepalive_side_b():
    a = analyse_capture(DATA / "tls-short-connections-sll2.pcap")
    b = analyse_capture(DATA / "keepalive-pauses-ethernet.pcap")
    rows = {row.figure: row for row in compare(a, b)}
    assert set(rows) == {f.name for f in FIGURES}
    assert rows["connections"].better is None  # volume: neither better
    # 0.28 s against 1.9 s: totals and rates over each capture are not judged...
    assert rows["duration_s"].a < 0.2 * rows["duration_s"].b
    for name in ("tls_handshakes", "gaps", "connections_per_s", "packets_per_s"):
        assert (rows[name].better, rows[name].no_verdict) == (None, "durations_differ"), name
    assert rows["retransmissions"].better == "same"  # ...but none on either side is none
    # ...the figures per request and per connection are.
    assert rows["tls_handshakes_per_request"].better == "b"
    assert rows["requests_per_connection"].better == "b"
    assert rows["gaps_per_request"].better == "a"
    assert rows["reset_ratio"].better == "b"
    assert rows["connections"].ratio == 12.0
    assert rows["tls_handshakes"].ratio is None  # b has none
    summary = SideSummary.of(a)
    assert compare(summary, b) == compare(a, b)
    json.dumps([row.as_dict() for row in compare(a, b)], allow_nan=False)


# --- synthetic captures: every container and link variant -----------------------------------


@pytest.fixture
def scratch():
    """A directory removed after the test, passed or failed (pytest's tmp_path keeps some)."""
    with tempfile.TemporaryDirectory(prefix="perfcase-capture-") as directory:
        yield Path(directory)


CLIENT, SERVER = "192.0.2.10", "192.0.2.80"


def conversation(client=CLIENT, server=SERVER, sport=40000, dport=80, start_ns=10**18,
                 isn=1000, server_isn=5000) -> list[tuple[int, Segment]]:  # fmt: skip
    """A handshake, a request, a two-segment response, a duplicate ACK, a fast
    retransmission, an out-of-order segment, a spurious retransmission, a zero window and
    its update, a keep-alive, and a close: (time ns, segment) in order."""
    c, s = isn, server_isn
    t = start_ns
    ms = 1_000_000
    out = []

    def add(dt_ms: float, src_is_client: bool, seq: int, ack: int, flags: int, payload=b"",
            window: int = 502, options=b"") -> None:  # fmt: skip
        nonlocal t
        t += int(dt_ms * ms)
        src, dst = (client, server) if src_is_client else (server, client)
        sp, dp = (sport, dport) if src_is_client else (dport, sport)
        out.append((t, Segment(src, dst, sp, dp, seq, ack, flags, window, payload, options)))

    add(0, True, c, 0, SYN, window=64240, options=syn_options())
    add(10, False, s, c + 1, SYN | ACK, window=65160, options=syn_options())
    add(10, True, c + 1, s + 1, ACK)
    add(5, True, c + 1, s + 1, PSH | ACK, b"GET / HTTP/1.1\r\n\r\n")  # 18 bytes
    req_end = c + 1 + 18
    add(1, False, s + 1, req_end, ACK)
    add(100, False, s + 1, req_end, PSH | ACK, b"a" * 1000)  # server silent 0.1 s +
    add(0.1, False, s + 2001, req_end, PSH | ACK, b"c" * 1000)  # a hole: 1000 lost
    add(0.1, True, req_end, s + 1001, ACK)
    add(0.1, True, req_end, s + 1001, ACK)  # duplicate ACK
    add(0.1, True, req_end, s + 1001, ACK)  # duplicate ACK
    add(1, False, s + 1001, req_end, PSH | ACK, b"b" * 1000)  # fast retransmission
    add(1, True, req_end, s + 3001, ACK)
    add(0.5, False, s + 3001, req_end, PSH | ACK, b"e" * 500)
    add(0.1, False, s + 3001 + 500 + 500, req_end, PSH | ACK, b"g" * 500)  # hole again
    add(0.1, False, s + 3501, req_end, PSH | ACK, b"f" * 500)  # out of order (soon)
    add(1, True, req_end, s + 4501, ACK, window=0)  # zero window
    add(200, True, req_end, s + 4501, ACK)  # window update
    add(300, False, s + 3001, req_end, PSH | ACK, b"e" * 500)  # spurious: acked already
    add(5000, True, req_end - 1, s + 4501, ACK)  # keep-alive
    add(1, True, req_end, s + 4501, FIN | ACK)
    add(1, False, s + 4501, req_end + 1, FIN | ACK)
    add(1, True, req_end + 1, s + 4502, ACK)
    return out


def write_pcap(path: Path, packets, linktype=LINKTYPE_ETHERNET, **options) -> Path:
    with open(path, "wb") as stream:
        writer = PcapWriter(stream, linktype, **options)
        for time_ns, segment in packets:
            writer.write(time_ns, frame(linktype, ip_packet(segment)))
    return path


def test_a_scripted_conversation_gets_every_flag_tshark_gives_it(scratch):
    path = write_pcap(scratch / "scripted.pcap", conversation())
    flags = [sorted(p.analysis) for p in read_packets(path)]
    assert flags[8] == ["duplicate_ack"] and flags[9] == ["duplicate_ack"]
    assert flags[10] == ["fast_retransmission", "retransmission"]
    assert "out_of_order" in flags[14]
    assert flags[15] == ["zero_window"]
    assert flags[16] == ["window_update"]
    assert flags[17] == ["retransmission", "spurious_retransmission"]
    assert flags[18] == ["keep_alive"]
    assert_matches_tshark(path)


def test_both_byte_orders_and_both_time_resolutions_read_alike(scratch):
    packets = conversation()
    variants = [
        write_pcap(
            scratch / f"{order}-{unit}.pcap",
            packets,
            big_endian=order == "be",
            nanoseconds=unit == "ns",
        )  # fmt: skip
        for order in ("le", "be")
        for unit in ("us", "ns")
    ]
    results = [analyse_capture(path).as_dict() for path in variants]
    resolutions = [r.pop("interfaces")[0]["resolution_ns"] for r in results]
    assert resolutions == [1000, 1, 1000, 1]
    assert all(r == results[0] for r in results[1:])
    times = [p.time_ns for p in read_packets(variants[3])]
    assert times == [t for t, _ in packets]
    assert results[0]["retransmissions"] == 2 and results[0]["duplicate_acks"] == 2
    for path in variants:
        assert_matches_tshark(path)


@pytest.mark.parametrize(
    "linktype",
    [LINKTYPE_ETHERNET, LINKTYPE_LINUX_SLL, LINKTYPE_LINUX_SLL2, LINKTYPE_RAW, LINKTYPE_NULL],
)
def test_every_link_type_decodes_to_the_same_tcp(scratch, linktype):
    path = write_pcap(scratch / f"{linktype}.pcap", conversation(), linktype=linktype)
    packets = list(read_packets(path))
    assert [(p.src, p.dst, p.src_port, p.dst_port) for p in packets[:2]] == [
        (CLIENT, SERVER, 40000, 80),
        (SERVER, CLIENT, 80, 40000),
    ]
    assert packets[0].mss == 1460 and packets[0].window_scale == 7 and packets[0].sack_permitted
    assert analyse_capture(path).as_dict()["retransmissions"] == 2


def test_a_pcapng_with_interfaces_of_different_link_types_and_resolutions(scratch):
    """dpkt applies the first interface's link type to every packet; each must use its own."""
    path = scratch / "mixed.pcapng"
    v4 = conversation()
    v6 = conversation("2001:db8::10", "2001:db8::80", sport=40001, dport=443, start_ns=10**18 + 7)
    with open(path, "wb") as stream:
        writer = PcapngWriter(stream)
        eth = writer.interface(LINKTYPE_ETHERNET, resolution=6)
        raw = writer.interface(LINKTYPE_RAW, resolution=9)
        sll = writer.interface(LINKTYPE_LINUX_SLL2, resolution=0x80 | 30)  # 2**-30 s
        writer.block(5, struct.pack("<III", 0, 0, 0))  # interface statistics: skipped
        writer.block(0x999, b"a block of a type nobody knows is skipped")
        for index, ((t4, s4), (t6, s6)) in enumerate(zip(v4, v6, strict=True)):
            interface = eth if index % 2 else sll
            writer.write(interface, t4, frame(writer_link(interface), ip_packet(s4)))
            writer.write(raw, t6, frame(LINKTYPE_RAW, ip_packet(s6, ipv6_extensions=True)))
    packets = list(read_packets(path))
    assert {p.linktype for p in packets} == {1, 101, 276}
    assert {p.interface for p in packets if p.src and ":" in p.src} == {1}
    six = [p for p in packets if p.interface == 1]
    assert [p.time_ns for p in six] == [t for t, _ in v6]
    figures = analyse_capture(path).as_dict()
    assert figures["connections"] == 2 and figures["retransmissions"] == 4
    assert figures["decode"]["ipv6"] == len(v6)
    assert_matches_tshark(path)


def writer_link(interface: int) -> int:
    return {0: LINKTYPE_ETHERNET, 1: LINKTYPE_RAW, 2: LINKTYPE_LINUX_SLL2}[interface]


def test_big_endian_pcapng_with_simple_packet_blocks(scratch):
    path = scratch / "big.pcapng"
    packets = conversation()
    with open(path, "wb") as stream:
        writer = PcapngWriter(stream, big_endian=True)
        writer.interface(LINKTYPE_ETHERNET)
        for index, (t, segment) in enumerate(packets):
            data = frame(LINKTYPE_ETHERNET, ip_packet(segment))
            if index == 5:
                writer.simple(data)  # no time stamp: takes the one before
            else:
                writer.write(0, t, data)
    figures = analyse_capture(path).as_dict()
    assert figures["packets"] == len(packets)
    assert figures["decode"]["no_timestamp"] == 1
    assert figures["connections"] == 1


def test_vlan_tags_ipv4_options_and_fragments(scratch):
    path = scratch / "vlan.pcap"
    packets = conversation()
    with open(path, "wb") as stream:
        writer = PcapWriter(stream, LINKTYPE_ETHERNET)
        for t, segment in packets:
            data = ip_packet(segment, ip_options=b"\x01\x01\x01\x00")  # NOPs and an end
            writer.write(t, frame(LINKTYPE_ETHERNET, data, vlan=42))
        udp = ip_packet(packets[0][1], transport=b"\x00" * 16, protocol=17, fragment=(0, True))
        writer.write(packets[-1][0] + 1, frame(LINKTYPE_ETHERNET, udp))
        udp = ip_packet(packets[0][1], transport=b"\x00" * 16, protocol=17, fragment=(2, False))
        writer.write(packets[-1][0] + 2, frame(LINKTYPE_ETHERNET, udp))
    figures = analyse_capture(path).as_dict()
    assert figures["decode"]["tcp"] == len(packets)
    assert figures["decode"]["udp"] == 2 and figures["decode"]["ip_fragments"] == 0
    assert figures["decode"]["other_ip"] == 0
    assert figures["retransmissions"] == 2
    assert_matches_tshark(path)


def test_fragments_are_counted_and_not_reassembled(scratch):
    path = scratch / "fragments.pcap"
    segment = conversation()[3][1]
    with open(path, "wb") as stream:
        writer = PcapWriter(stream, LINKTYPE_IPV4)
        whole = ip_packet(segment)
        body = whole[20:]
        writer.write(10**18, ip_packet(segment, transport=body[:16], fragment=(0, True)))
        writer.write(10**18 + 1, ip_packet(segment, transport=body[16:], fragment=(2, False)))
    figures = analyse_capture(path).as_dict()
    assert figures["decode"]["ip_fragments"] == 2 and figures["connections"] == 0


def test_a_new_syn_on_a_used_four_tuple_is_a_new_connection(scratch):
    first = conversation()
    second = conversation(start_ns=first[-1][0] + 10**9, isn=900_000)
    path = write_pcap(scratch / "reuse.pcap", first + second)
    figures = analyse_capture(path).as_dict()
    assert figures["connections"] == 2
    assert figures["connection"]["endings"] == {"reused": 1, "closed": 1}
    assert_matches_tshark(path)


def test_a_connection_whose_start_was_not_captured_guesses_the_server(scratch):
    packets = conversation(sport=51000, dport=8443)[3:]
    path = write_pcap(scratch / "late.pcap", packets)
    figures = analyse_capture(path).as_dict()
    connection = figures["connection"]
    assert connection["handshakes"] == {"start_not_captured": 1}
    assert connection["server_guessed"] == 1
    assert connection["guessed_server_ports"] == [{"port": 8443, "connections": 1}]
    assert figures["top_connections"][0]["connection"].endswith("192.0.2.80:8443")


def test_a_client_hello_spanning_two_segments_is_put_back_together(scratch):
    hello = client_hello("split.perfcase.test")
    c, s, t = 1000, 5000, 10**18
    handshake = [
        Segment(CLIENT, SERVER, 40000, 443, c, 0, SYN, options=syn_options()),
        Segment(SERVER, CLIENT, 443, 40000, s, c + 1, SYN | ACK, options=syn_options()),
        Segment(CLIENT, SERVER, 40000, 443, c + 1, s + 1, ACK),
        Segment(CLIENT, SERVER, 40000, 443, c + 1, s + 1, ACK, payload=hello[:100]),
        Segment(CLIENT, SERVER, 40000, 443, c + 101, s + 1, PSH | ACK, payload=hello[100:]),
    ]
    path = write_pcap(scratch / "split.pcap", [(t + i * 1000, seg) for i, seg in
                                                  enumerate(handshake)])  # fmt: skip
    tls = analyse_capture(path).as_dict()["tls"]
    assert tls["client_hellos"] == 1 and tls["unanswered_client_hellos"] == 1
    assert tls["server_names"][0]["name"] == "split.perfcase.test"


def client_hello(name: str) -> bytes:
    server_name = struct.pack("!HBH", len(name) + 3, 0, len(name)) + name.encode()
    extensions = struct.pack("!HH", 0, len(server_name)) + server_name
    extensions += struct.pack("!HHB", 43, 3, 2) + b"\x03\x04"
    body = b"\x03\x03" + bytes(32) + b"\x00" + b"\x00\x02\x13\x01" + b"\x01\x00"
    body += struct.pack("!H", len(extensions)) + extensions
    handshake = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16\x03\x01" + struct.pack("!H", len(handshake)) + handshake


def test_the_client_hello_parser_reads_what_a_truncated_hello_still_holds():
    hello = client_hello("cut.perfcase.test")
    whole = parse_client_hello(hello)
    assert whole.server_name == "cut.perfcase.test" and not whole.truncated
    assert whole.offered_versions == (0x0304,)
    cut = parse_client_hello(hello[:60])
    assert cut.truncated and cut.server_name is None
    assert parse_client_hello(b"\x17\x03\x03\x00\x10" + bytes(16)) is None


def test_a_full_connection_table_finishes_the_least_recently_active_early(scratch):
    packets = []  # 40 connections one after the other, each left open after a request
    for number in range(40):
        packets += conversation(sport=30000 + number, start_ns=10**18 + number * 10**9)[:4]
    path = write_pcap(scratch / "many.pcap", packets)
    small = analyse_capture(path, max_connections=16).as_dict()
    large = analyse_capture(path).as_dict()
    assert small["connections"] == large["connections"] == 40
    assert small["connections_finished_early"] == 24
    assert large["connections_finished_early"] == 0


# --- what is not a capture, and what is damaged --------------------------------------------


@pytest.mark.parametrize(
    "data",
    [b"", b"\xd4\xc3", b"hello, this is text and not a capture\n", bytes(100)],
    ids=["empty", "two bytes", "text", "zeros"],
)
def test_what_is_not_a_capture_raises_only_not_a_capture_error(scratch, data):
    path = scratch / "not.pcap"
    path.write_bytes(data)
    with pytest.raises(NotACaptureError):
        analyse_capture(path)


def test_a_header_alone_is_an_empty_capture():
    data = (DATA / "keepalive-pauses-ethernet.pcap").read_bytes()[:24]
    figures = analyse_capture(io.BytesIO(data)).as_dict()
    assert figures["packets"] == 0 and figures["problems"] == []


def test_a_capture_cut_inside_a_record_is_analysed_up_to_the_cut():
    data = (DATA / "lossy-link-ethernet.pcap").read_bytes()
    cut = analyse_capture(io.BytesIO(data[: len(data) // 2])).as_dict()
    whole = analyse_capture(io.BytesIO(data)).as_dict()
    assert 0 < cut["packets"] < whole["packets"]
    (problem,) = cut["problems"]
    assert "ends inside a record" in problem["message"]
    assert 24 < problem["offset"] < len(data) // 2


def test_a_damaged_record_length_stops_the_analysis_with_the_offset():
    data = bytearray((DATA / "keepalive-pauses-ethernet.pcap").read_bytes())
    offset = 24
    for _ in range(10):  # the eleventh record's captured length becomes absurd
        offset += 16 + struct.unpack_from("<I", data, offset + 8)[0]
    struct.pack_into("<I", data, offset + 8, 0x7FFFFFFF)
    figures = analyse_capture(io.BytesIO(bytes(data))).as_dict()
    assert figures["packets"] == 10
    assert figures["problems"][0]["offset"] == offset
    assert "damaged" in figures["problems"][0]["message"]


def test_a_damaged_pcapng_block_is_reported_at_its_offset():
    data = bytearray((DATA / "two-interfaces.pcapng").read_bytes())
    offset = 0
    for _ in range(20):  # the twentieth block claims an absurd length
        offset += struct.unpack_from("<I", data, offset + 4)[0]
    struct.pack_into("<I", data, offset + 4, 0xFFFFFFF0)
    figures = analyse_capture(io.BytesIO(bytes(data))).as_dict()
    assert figures["problem_count"] == 1
    assert figures["problems"][0]["offset"] == offset
    assert "claims a length of 4294967280 bytes" in figures["problems"][0]["message"]
    assert 0 < figures["packets"] < 20


def test_random_damage_never_crashes_and_never_raises_anything_else():
    """Fuzz: truncations, bit flips, byte runs and random bodies behind valid headers."""
    rng = random.Random(12)
    seeds = [p.read_bytes() for p in CAPTURES]
    headers = [seed[:24] for seed in seeds if seed[:4] != b"\n\r\r\n"] + [seeds[-1][:28]]
    tried = 0
    for _ in range(400):
        seed = bytearray(rng.choice(seeds))
        kind = rng.randrange(4)
        if kind == 0:
            data = seed[: rng.randrange(len(seed))]
        elif kind == 1:
            for _ in range(rng.randrange(1, 50)):
                seed[rng.randrange(len(seed))] ^= 1 << rng.randrange(8)
            data = seed
        elif kind == 2:
            at = rng.randrange(len(seed))
            seed[at : at + rng.randrange(1, 64)] = bytes([rng.randrange(256)]) * 64
            data = seed
        else:
            data = rng.choice(headers) + rng.randbytes(rng.randrange(0, 5000))
        for source in (io.BytesIO(bytes(data)),):
            try:
                figures = analyse_capture(source, max_connections=64).as_dict()
            except NotACaptureError:
                continue
            json.dumps(figures, allow_nan=False)
            tried += 1
    assert tried > 300


def test_the_core_refuses_bad_settings_and_a_second_init():
    with pytest.raises(ValueError):
        core.Core(gap_threshold=-1)
    with pytest.raises(ValueError):
        core.Core(max_connections=1)
    analyser = core.Core()
    with pytest.raises(RuntimeError):
        analyser.__init__()


@pytest.mark.parametrize("size", [1, 7, 97, 4096])
def test_records_split_across_reads_parse_as_whole_ones(monkeypatch, size):
    from collectors.capture import reader

    path = DATA / "two-interfaces.pcapng"
    whole = analyse_capture(path).as_dict()
    monkeypatch.setattr(reader, "CHUNK_BYTES", size)
    assert analyse_capture(path).as_dict() == whole
    pcap = DATA / "zero-window-sll.pcap"
    if size > 1:  # its 64 KiB records one byte at a time would take long
        monkeypatch.undo()
        expected = analyse_capture(pcap).as_dict()
        monkeypatch.setattr(reader, "CHUNK_BYTES", size)
        assert analyse_capture(pcap).as_dict() == expected


def test_the_core_survives_hostile_bytes_fed_in_random_pieces():
    """Fuzz the C core itself: damaged captures fed in pieces of random size, in decode
    mode or not, with a tiny connection table, finished a few connections at a time."""
    rng = random.Random(7)
    seeds = [p.read_bytes() for p in CAPTURES]
    finished = 0
    for _ in range(600):
        data = bytearray(rng.choice(seeds))
        for _ in range(rng.randrange(1, 100)):
            data[rng.randrange(len(data))] = rng.randrange(256)
        data = bytes(data[: rng.randrange(len(data) + 1)])
        analyser = core.Core(
            decode=rng.random() < 0.3,
            max_connections=16 + rng.randrange(50),
            gap_threshold=rng.random(),
        )
        pending, position = b"", 0
        try:
            while position < len(data):
                piece = pending + data[position : position + rng.randrange(1, 5000)]
                position += len(piece) - len(pending)
                pending = piece[analyser.feed(piece) :]
                analyser.take_events()
            while not analyser.finish(rng.randrange(1, 20)):
                analyser.take_events()
        except ValueError:  # the magic number itself was damaged
            continue
        assert analyser.counters()["live_connections"] == 0
        finished += 1
    assert finished > 400


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: p.name)
def test_asking_for_some_streams_gives_exactly_their_packets(path):
    everything = list(read_packets(path))
    wanted = {p.stream for p in everything if p.stream is not None}
    chosen = set(sorted(wanted)[::2])

    some = list(read_packets(path, streams=chosen))

    assert some == [p for p in everything if p.stream in chosen]
    assert list(read_packets(path, streams=set())) == []
