"""Packet captures (tcpdump's pcap and pcapng) in, what they show out: who waits, how many
connections, what the network did.

Pure: no Django; bytes or files in, dataclasses out. The hot loop is a C extension
(`collectors/capture/_core.c`, built by `pip install -e .`): it streams the file with
constant memory, decodes Ethernet (with VLAN tags), Linux cooked v1/v2, raw IP and BSD
loopback frames, IPv4 and IPv6 (and what IP-in-IP, GRE, ERSPAN, VXLAN and Geneve tunnels
carry), and TCP, keeps per-connection state and counts what Wireshark's TCP analysis
flags. Python parses the TLS hellos it hands up and aggregates.

    analysis = analyse_capture("side-a.pcap", gap_threshold=0.1)
    analysis.as_dict()["gaps"][0]   # {"connection", "at", "seconds", "silent", "before", ...}
    compare(analysis, analyse_capture("side-b.pcapng"))

See analysis.py for the definitions (connection, request, gap, handshake time) and
_core.c for where the TCP analysis departs from Wireshark's.
"""

from collectors.capture._loader import require_core
from collectors.capture.analysis import CaptureAnalysis, Gap, analyse_capture
from collectors.capture.errors import CaptureCoreMissing, CaptureError
from collectors.capture.reader import (
    NotACaptureError,
    Packet,
    Problem,
    capture_format,
    capture_header_bytes,
    read_packets,
)
from collectors.capture.summary import FIGURES, Comparison, SideSummary, compare

__all__ = [
    "FIGURES",
    "CaptureAnalysis",
    "CaptureCoreMissing",
    "CaptureError",
    "Comparison",
    "Gap",
    "NotACaptureError",
    "Packet",
    "Problem",
    "SideSummary",
    "analyse_capture",
    "capture_format",
    "capture_header_bytes",
    "compare",
    "read_packets",
    "require_core",
]
