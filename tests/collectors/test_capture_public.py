"""collectors.capture on captures made elsewhere: samples from tcpdump's own test suite
(tests/collectors/data/captures/tcpdump/, its README says where each came from), each
compared with tshark on packets, bytes, ClientHellos, the tcp.analysis flags, connections
and every TCP packet's stream. Where the two differ by definition, the test asserts both
figures and says why.

Run against all 830 captures of tcpdump's suite (commit 39b50f76), 786 gave exactly
tshark's figures; the README of the folder lists what the other 44 are.
"""

import pytest

from collectors.capture import analyse_capture, read_packets
from tests.collectors.test_capture import DATA, assert_matches_tshark, tshark_figures

PUBLIC = DATA / "tcpdump"

# TCP over Geneve and VXLAN (segmentation offload), GRE (PPTP), 802.1ad double tags,
# ERSPAN, MPLS; SSH, DNS and Redis over TCP, multipath TCP, TCP Fast Open, AccECN,
# retransmissions, nanosecond timestamps, a pcapng of 21 connections; BIG TCP (an IPv4
# total length of 0, an IPv6 jumbogram).
SAME_AS_TSHARK = (
    "geneve.pcap",
    "gso-ipv4-vxlan-ipv4.pcap",
    "gso-ipv6-geneve-ipv6.pcap",
    "pptp.pcap",
    "802.1ad_QinQ.pcap",
    "erspan-type-ii-1.pcap",
    "mpls-ldp-hello.pcap",
    "ssh.pcap",
    "dns_tcp.pcap",
    "resp_1_benchmark.pcap",
    "mptcp-v1.pcap",
    "tfo-5c1fa7f9ae91.pcap",
    "accecn_handshake.pcap",
    "kday4.pcap",
    "ipv4_tcp_http_xml_tso.pcap",
    "tcp-handshake-nano.pcap",
    "of13_ericsson.pcapng",
    "bigtcp-ipv4.pcap",
    "bigtcp-ipv6-hbh.pcap",
)


@pytest.mark.parametrize("name", SAME_AS_TSHARK)
def test_a_public_capture_gives_tsharks_figures(name):
    assert_matches_tshark(PUBLIC / name)


def test_the_public_samples_hold_what_they_are_chosen_for():
    """Each sample shows what it is named for, so a change that stops reading it fails."""
    figures = {name: analyse_capture(PUBLIC / name).as_dict() for name in SAME_AS_TSHARK}
    assert figures["geneve.pcap"]["tunnels"]["geneve"] > 0
    assert figures["gso-ipv4-vxlan-ipv4.pcap"]["tunnels"] == {"vxlan": 1}
    assert figures["pptp.pcap"]["tunnels"]["gre"] > 0
    assert figures["pptp.pcap"]["retransmissions"] > 0
    assert figures["kday4.pcap"]["retransmissions"] == 2
    assert figures["of13_ericsson.pcapng"]["connections"] == 21
    assert figures["resp_1_benchmark.pcap"]["connections"] == 15
    for name in ("bigtcp-ipv4.pcap", "bigtcp-ipv6-hbh.pcap"):
        assert figures[name]["connections"] == 1
        assert figures[name]["bytes"] > 65_535, name  # one packet beyond IP's 16-bit length


def test_big_tcp_inside_a_tunnel_is_read_where_tshark_reads_none():
    """A documented difference: Linux's BIG TCP sends IPv4 packets over 64 KiB with a total
    length of 0 (the frame gives the length). tshark 4.0 reads those outside a tunnel, but
    inside VXLAN it stops at the inner header's length of 0 and finds no TCP; Perfcase reads
    the segment as it does outside."""
    path = PUBLIC / "bigtcp-ipv4-vxlan-ipv4.pcap"
    ours, theirs = analyse_capture(path).as_dict(), tshark_figures(path)
    assert (ours["packets"], ours["bytes"]) == (theirs["packets"], theirs["bytes"])
    assert (ours["connections"], ours["tunnels"]) == (1, {"vxlan": 1})
    assert theirs["connections"] == 0 and theirs["tcp"] == {}


def test_a_quic_client_hello_is_not_a_tls_handshake_here():
    """A documented difference: tshark decrypts QUIC's Initial packets (their keys follow from
    the connection id) and counts the ClientHello inside; Perfcase counts TLS over TCP only,
    and QUIC is UDP to it."""
    path = PUBLIC / "quic_handshake.pcap"
    ours, theirs = analyse_capture(path).as_dict(), tshark_figures(path)
    assert (ours["packets"], ours["bytes"]) == (theirs["packets"], theirs["bytes"])
    assert theirs["client_hellos"] == 1 and ours["tls_handshakes"] == 0
    assert ours["decode"]["udp"] == ours["packets"]


def test_a_tcp_header_sampled_by_sflow_is_no_packet_of_a_connection():
    """A documented difference, as for ICMP errors: tshark gives the TCP header an sFlow
    datagram carries as a sample a stream of its own; to Perfcase the datagram is UDP."""
    path = PUBLIC / "sflow_expanded.pcap"
    theirs = tshark_figures(path)
    assert len(theirs["tcp"]) == 1
    assert [p.stream for p in read_packets(path) if p.stream is not None] == []
    assert analyse_capture(path).as_dict()["connections"] == theirs["connections"] == 0


def test_a_link_type_not_read_here_is_counted_as_unread():
    """IP over InfiniBand (link type 242): none of its packets is read, and all are counted
    as of a link type not read here, never dropped in silence."""
    figures = analyse_capture(PUBLIC / "ipoib.pcap").as_dict()
    assert figures["packets"] == figures["decode"]["unsupported_link"] == 30
    assert figures["interfaces"][0]["linktype"] == 242
