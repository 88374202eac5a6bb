"""The analysis of one capture: `analyse_capture(path_or_file) -> CaptureAnalysis`.

The C core reads the records and keeps per-connection state; this module turns its events
into figures with bounded memory (histograms, heavy-hitter counters, the N longest gaps),
parses the TLS hellos the core hands up, and reports.

Definitions:
- A connection is what Wireshark calls a TCP conversation (a tcp.stream): a 4-tuple, and a
  new one when a SYN with a new initial sequence number reuses it. `connection` ids are the
  tcp.stream numbers tshark gives, but for one thing: tshark also numbers the conversation
  a SOCKS connection asks for (no packet has that number), so its numbers of the
  connections after a SOCKS one run one ahead. An ICMP error quoting a TCP header is an
  ICMP packet here (decode["other_ip"]); tshark gives it its connection's tcp.stream,
  though not as a packet of that conversation.
- TCP inside tunnels (IP in IP and 6in4, GRE, ERSPAN types I to III, VXLAN on UDP 4789,
  Geneve on UDP 6081, Teredo on UDP 3544, nested up to four deep) and past MPLS labels (on
  Ethernet, VLANs and in GRE, at most 8 labels; the payload told IPv4 or IPv6 by its first
  nibble, as Wireshark tells it, anything else not IP) is the innermost packet's: its
  connection, its flags. A packet whose tunnel is not read (another GRE version, GRE routing, an
  unknown payload type) is counted in decode["unreadable_tunnel"].
- A TLS handshake is counted by the first ClientHello of a connection: the one that
  starts its client payload (past a PROXY protocol header, v1 or v2, in the same segment),
  or that starts one of its first 16 payload segments past a plaintext prelude (HTTP
  CONNECT, SOCKS, STARTTLS, a PROXY header alone) of at most 16 KiB. tshark also counts
  the second ClientHello of a handshake after a HelloRetryRequest
  (tls.hello_retry_requests says how many) and a ClientHello past that bound; it counts no
  hello that shares its segment with a PROXY v2 header (it reads neither).
- The client is the SYN's sender (or the SYN/ACK's receiver). Where neither was captured,
  the server is guessed: the port below 1024 if exactly one is, else the lower port; such
  connections are counted in `server_guessed`.
- A request is a burst of new client payload that starts the connection's payload or
  follows server payload; retransmitted, out-of-order, keep-alive and zero-window-probe
  segments are no new payload. Responses are the same from the server.
- A gap is a silence between two consecutive packets of a connection (either direction)
  longer than `gap_threshold`. The side that breaks it is the side that was silent, and
  `before` says what it sent then: "request" (the client was silent before a new request),
  "response" (the server was silent before answering), "data" (more of the same side's
  burst), "close" (FIN or RST) or "ack" (no payload).
- request_wait: from the end of server payload to the client's next request;
  response_wait: from the end of client payload to the server's response.
- Handshake time: from the first SYN to the client's first ACK after the SYN/ACK.
"""

import ipaddress
from collections import Counter
from dataclasses import dataclass

from collectors.capture._loader import core_module
from collectors.capture.aggregate import (
    DEFAULT_GAP_THRESHOLD,
    ENDINGS,
    LONGEST_GAPS,
    SIDES,
    TOP,
    Aggregator,
    Gap,
    TlsFigures,
)
from collectors.capture.reader import Problem, Progress, Source, feed
from collectors.capture.stats import Histogram, Timeline, histogram_from_core


@dataclass
class CaptureAnalysis:
    """What one capture shows. `as_dict()` is the JSON form an API stores."""

    counters: dict
    gap_threshold: float
    timeline: Timeline
    problems: list[Problem]
    problem_count: int
    interfaces: list[dict]
    connection_endings: dict
    durations: Histogram
    requests: Histogram
    handshakes: Histogram
    syn_to_synack: Histogram
    handshake_counts: dict
    server_ports: Counter
    guessed_ports: Counter
    total_requests: int
    total_responses: int
    reset_connections: int
    client_bytes: int
    server_bytes: int
    top_hosts: list[dict]
    top_connections: list[dict]
    retransmitting_connections: list[dict]
    gaps: list[Gap]
    gap_count: int
    gap_seconds: float
    gap_kinds: Counter
    gap_wait: Counter
    inter_packet: Histogram
    request_wait: Histogram
    response_wait: Histogram
    tls: TlsFigures

    @property
    def packets(self) -> int:
        return self.counters["packets"]

    @property
    def bytes(self) -> int:
        return self.counters["bytes"]

    @property
    def first_ns(self) -> int | None:
        return self.counters["first_ns"]

    @property
    def duration_s(self) -> float:
        first, last = self.counters["first_ns"], self.counters["last_ns"]
        return (last - first) / 1e9 if first is not None else 0.0

    @property
    def connections(self) -> int:
        return self.counters["connections"]

    def rate(self, count: float) -> float | None:
        return count / self.duration_s if self.duration_s > 0 else None

    @property
    def retransmissions(self) -> int:
        """As tshark's tcp.analysis.retransmission: plain, fast and spurious."""
        c = self.counters
        return c["retransmission_only"] + c["fast_retransmission"] + c["spurious_retransmission"]

    def as_dict(self) -> dict:
        c = self.counters
        first = self.first_ns
        return {
            "packets": self.packets,
            "bytes": self.bytes,
            "first_packet_at": first / 1e9 if first is not None else None,
            "last_packet_at": c["last_ns"] / 1e9 if c["last_ns"] is not None else None,
            "duration_s": self.duration_s,
            "packets_per_s": self.rate(self.packets),
            "throughput_bps": self.rate(self.bytes * 8),
            "connections": self.connections,
            "connections_per_s": self.rate(self.connections),
            "connections_per_s_peak": self.timeline.peak("connections"),
            "tls_handshakes": self.tls.client_hellos,
            "tls_handshakes_per_s": self.rate(self.tls.client_hellos),
            "retransmissions": self.retransmissions,
            "fast_retransmissions": c["fast_retransmission"],
            "spurious_retransmissions": c["spurious_retransmission"],
            "duplicate_acks": c["duplicate_ack"],
            "zero_windows": c["zero_window"],
            "out_of_order": c["out_of_order"],
            "lost_segments": c["lost_segment"],
            "acked_unseen_segments": c["ack_lost_segment"],
            "keep_alives": c["keep_alive"],
            "resets": self.reset_connections,
            "rst_packets": c["rst"],
            "gap_threshold_s": self.gap_threshold,
            "gaps": [gap.as_dict(first) for gap in self.gaps],
            "gap_count": self.gap_count,
            "gap_seconds": self.gap_seconds,
            "gap_kinds": [
                {"silent": side, "before": what, "count": n}
                for (side, what), n in self.gap_kinds.most_common()
            ],
            "wait_seconds": {side: self.gap_wait.get(side, 0.0) for side in SIDES},
            "inter_packet_time": self.inter_packet.as_dict(1e9, "s"),
            "request_wait": self.request_wait.as_dict(1e9, "s"),
            "response_wait": self.response_wait.as_dict(1e9, "s"),
            "connection": {
                "requests": self.total_requests,
                "responses": self.total_responses,
                "requests_per_connection": self.requests.as_dict(),
                "duration": self.durations.as_dict(1e9, "s"),
                "handshake": self.handshakes.as_dict(1e9, "s"),
                "syn_to_syn_ack": self.syn_to_synack.as_dict(1e9, "s"),
                "handshakes": dict(self.handshake_counts),
                "incomplete_handshakes": self.handshake_counts.get("no_syn_ack", 0)
                + self.handshake_counts.get("no_final_ack", 0),
                "endings": self.connection_endings,
                "client_to_server_bytes": self.client_bytes,
                "server_to_client_bytes": self.server_bytes,
                "server_ports": [
                    {"port": port, "connections": n}
                    for port, n in self.server_ports.most_common(TOP)
                ],
                "guessed_server_ports": [
                    {"port": port, "connections": n}
                    for port, n in self.guessed_ports.most_common(TOP)
                ],
                "server_guessed": sum(self.guessed_ports.values()),
            },
            "top_hosts": self.top_hosts,
            "top_connections": self.top_connections,
            "retransmitting_connections": self.retransmitting_connections,
            "tls": self.tls.as_dict(self.connections, self.duration_s),
            "timeline": {"bucket_seconds": self.timeline.width, "rows": self.timeline.rows()},
            "decode": {
                key: c[key]
                for key in (
                    "ipv4",
                    "ipv6",
                    "tcp",
                    "udp",
                    "other_ip",
                    "non_ip",
                    "ip_fragments",
                    "malformed",
                    "truncated",
                    "unsupported_link",
                    "short_tcp",
                    "no_timestamp",
                    "unreadable_tunnel",
                )
            },  # fmt: skip
            "tunnels": {
                key: c[key]
                for key in ("ip_in_ip", "gre", "erspan", "vxlan", "geneve", "teredo", "mpls")
                if c[key]
            },
            "link_types": {
                key: c[key]
                for key in (
                    "ethernet",
                    "linux_sll",
                    "linux_sll2",
                    "raw_ip",
                    "bsd_loopback",
                    "other",
                )
                if c[key]
            },
            "interfaces": self.interfaces,
            "connections_finished_early": c["evicted"],
            "problems": [{"offset": p.offset, "message": p.message} for p in self.problems],
            "problem_count": self.problem_count,
        }

    def summary(self):
        from collectors.capture.summary import SideSummary

        return SideSummary.of(self)


def _connection_dict(c: dict, label: str) -> dict:
    return {
        "connection": label,
        "stream": c["id"],
        "seconds": (c["last_ns"] - c["first_ns"]) / 1e9,
        "packets": c["client_packets"] + c["server_packets"],
        "bytes": c["client_bytes"] + c["server_bytes"],
        "client_to_server_bytes": c["client_bytes"],
        "server_to_client_bytes": c["server_bytes"],
        "requests": c["requests"],
        "retransmissions": c["retransmissions"],
        "duplicate_acks": c["duplicate_acks"],
        "zero_windows": c["zero_windows"],
        "reset": bool(c["rst_packets"]),
        "mss": [c["client_mss"] or None, c["server_mss"] or None],
        "window_scale": [
            c["client_wscale"] if c["client_wscale"] >= 0 else None,
            c["server_wscale"] if c["server_wscale"] >= 0 else None,
        ],
        "server_guessed": bool(c["server_guessed"]),
        "ended": ENDINGS[c["ended"]],
    }


def analyse_capture(
    source: Source,
    *,
    gap_threshold: float = DEFAULT_GAP_THRESHOLD,
    progress: Progress | None = None,
    longest_gaps: int = LONGEST_GAPS,
    max_connections: int = 131072,
) -> CaptureAnalysis:
    """Analyse a pcap or pcapng capture, streaming, in bounded memory.

    `source` is a path or a binary file object. `progress(bytes_done, bytes_total)` is
    called at the start, at most four times a second, and at the end (bytes_total is None
    for a stream of unknown size). At most `max_connections` connections are kept at once;
    past that the least recently active is finished early (counted in
    connections_finished_early), which can make counts differ from Wireshark's.

    Raises NotACaptureError for input that is not a capture at all, OSError for a path
    that cannot be read; a damaged or truncated capture is analysed up to the damage and
    `problems` says what happened at which byte offset.
    """
    if gap_threshold <= 0:
        raise ValueError("gap_threshold must be positive")
    core = core_module()
    analyser = core.Core(gap_threshold=gap_threshold, max_connections=max_connections)
    aggregate = Aggregator(gap_threshold, longest_gaps)
    for events in feed(source, analyser, progress):
        aggregate.take(events)
    while True:
        drained = analyser.finish(10_000)
        aggregate.take(analyser.take_events())
        if drained:
            break
    counters = analyser.counters()
    a = aggregate
    return CaptureAnalysis(
        counters=counters,
        gap_threshold=gap_threshold,
        timeline=a.timeline,
        problems=a.problems,
        problem_count=a.problem_count,
        interfaces=a.interfaces,
        connection_endings=dict(a.endings),
        durations=a.durations,
        requests=a.requests,
        handshakes=a.handshakes,
        syn_to_synack=a.syn_to_synack,
        handshake_counts=dict(a.handshake_counts),
        server_ports=a.server_ports,
        guessed_ports=a.guessed_ports,
        total_requests=a.total_requests,
        total_responses=a.total_responses,
        reset_connections=a.reset_connections,
        client_bytes=a.client_bytes,
        server_bytes=a.server_bytes,
        top_hosts=[
            {
                "address": str(ipaddress.ip_address(address)),
                "bytes": int(weight),
                "packets": int(extra[0]) if extra else 0,
                "connections": int(extra[1]) if extra else 0,
                "possible_undercount_bytes": int(error),
            }
            for address, weight, extra, error in a.hosts.top(TOP)
        ],
        top_connections=[_connection_dict(c, label) for c, label in a.top_connections.items()],
        retransmitting_connections=[
            _connection_dict(c, label) for c, label in a.retransmitting.items()
        ],
        gaps=a.gap_list(),
        gap_count=a.gap_count,
        gap_seconds=a.gap_seconds,
        gap_kinds=a.gap_kinds,
        gap_wait=a.gap_wait,
        inter_packet=histogram_from_core(counters["inter_packet"]),
        request_wait=histogram_from_core(counters["request_wait"]),
        response_wait=histogram_from_core(counters["response_wait"]),
        tls=a.tls,
    )
