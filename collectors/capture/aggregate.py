"""From the C core's events to bounded aggregates: what analyse_capture reports.

Everything kept here is bounded: histograms, heavy-hitter counters, the N longest gaps and
the labels of their connections, the ClientHellos still waiting for their ServerHello
(bounded by the core's connection table). The definitions are in analysis.py.
"""

import ipaddress
from collections import Counter
from dataclasses import dataclass, field

from collectors.capture import tls
from collectors.capture._loader import core_module
from collectors.capture.reader import Problem
from collectors.capture.stats import (
    COUNT_EDGES,
    TIME_EDGES_NS,
    HeavyHitters,
    Histogram,
    Timeline,
    TopN,
)

DEFAULT_GAP_THRESHOLD = 0.1
LONGEST_GAPS = 1000
TOP = 10
MAX_PROBLEMS = 50
MAX_INTERFACES = 64

SIDES = ("client", "server")
BEFORE = ("request", "response", "data", "close", "ack")
ENDINGS = ("open", "closed", "evicted", "reused")
# The core's per-connection row, in order (see finish_conn in _core.c).
CONNECTION_FIELDS = (
    "id", "family", "client", "client_port", "server", "server_port", "server_guessed",
    "first_ns", "last_ns", "syn_ns", "synack_ns", "handshake_ack_ns",
    "client_packets", "server_packets", "client_bytes", "server_bytes",
    "client_payload", "server_payload", "requests", "responses", "retransmissions",
    "duplicate_acks", "zero_windows", "out_of_order", "rst_packets", "client_fin",
    "server_fin", "client_syn", "server_syn", "client_mss", "server_mss", "client_wscale",
    "server_wscale", "sack_permitted", "timestamps", "ended",
)  # fmt: skip
NO_TIME = -(2**63)
LINK_TYPES = {
    0: "BSD loopback",
    1: "Ethernet",
    12: "raw IP",
    14: "raw IP",
    101: "raw IP",
    108: "OpenBSD loopback",
    113: "Linux cooked (SLL)",
    228: "raw IPv4",
    229: "raw IPv6",
    276: "Linux cooked v2 (SLL2)",
}


def endpoint(address: bytes, port: int) -> str:
    ip = ipaddress.ip_address(address)
    return f"[{ip}]:{port}" if ip.version == 6 else f"{ip}:{port}"


@dataclass(frozen=True)
class Gap:
    connection: str  # "client:port -> server:port"
    stream: int
    at_ns: int  # when the silence began (epoch nanoseconds)
    seconds: float
    silent: str  # "client" or "server"
    before: str  # one of BEFORE

    def as_dict(self, first_ns: int | None) -> dict:
        return {
            "connection": self.connection,
            "stream": self.stream,
            "at": self.at_ns / 1e9,
            "at_offset_s": (self.at_ns - first_ns) / 1e9 if first_ns is not None else None,
            "seconds": self.seconds,
            "silent": self.silent,
            "before": self.before,
        }


@dataclass
class TlsFigures:
    client_hellos: int = 0
    server_hellos: int = 0
    full: int = 0
    resumed: int = 0
    resumption_unknown: int = 0
    hello_retries: int = 0
    unanswered: int = 0
    truncated: int = 0
    versions: Counter = field(default_factory=Counter)
    offered: Counter = field(default_factory=Counter)
    server_names: HeavyHitters = field(default_factory=lambda: HeavyHitters(1000))

    def as_dict(self, connections: int, duration_s: float) -> dict:
        return {
            "client_hellos": self.client_hellos,
            "client_hellos_per_s": self.client_hellos / duration_s if duration_s else None,
            "client_hellos_per_connection": (
                self.client_hellos / connections if connections else None
            ),
            "server_hellos": self.server_hellos,
            "full_handshakes": self.full,
            "resumptions": self.resumed,
            "resumption_unknown": self.resumption_unknown,
            "hello_retry_requests": self.hello_retries,
            "unanswered_client_hellos": self.unanswered,
            "truncated_hellos": self.truncated,
            "versions": dict(self.versions.most_common()),
            "offered_max_versions": dict(self.offered.most_common()),
            "server_names": [
                {"name": name, "count": int(count), "possible_undercount": int(error)}
                for name, count, _, error in self.server_names.top(TOP)
            ],
        }


class Aggregator:
    """Consumes the core's events; everything it keeps is bounded."""

    def __init__(self, gap_threshold: float, longest_gaps: int):
        self.core = core_module()
        self.gap_threshold = gap_threshold
        self.timeline = Timeline()
        self.problems: list[Problem] = []
        self.problem_count = 0
        self.interfaces: list[dict] = []
        # connections
        self.finished = 0
        self.endings: Counter = Counter()
        self.durations = Histogram(TIME_EDGES_NS, "ns")
        self.requests = Histogram(COUNT_EDGES, "requests")
        self.handshakes = Histogram(TIME_EDGES_NS, "ns")
        self.syn_to_synack = Histogram(TIME_EDGES_NS, "ns")
        self.handshake_counts: Counter = Counter()
        self.server_ports: Counter = Counter()  # at most 65536 keys
        self.guessed_ports: Counter = Counter()
        self.total_requests = 0
        self.total_responses = 0
        self.reset_connections = 0
        self.client_bytes = 0
        self.server_bytes = 0
        self.hosts = HeavyHitters(2000)
        self.top_connections = TopN(TOP)
        self.retransmitting = TopN(TOP)
        # gaps: the longest, a count by who and before what, and their labels
        self.gaps = TopN(longest_gaps)
        self.gap_count = 0
        self.gap_seconds = 0.0
        self.gap_kinds: Counter = Counter()
        self.gap_wait: Counter = Counter()  # seconds by silent side
        self.labels: dict[int, str] = {}
        self.unlabelled: dict[int, list[tuple]] = {}
        # TLS
        self.tls = TlsFigures()
        # the session id of each ClientHello still waiting for its ServerHello
        self.hellos: dict[int, bytes] = {}

    def take(self, events: list[tuple]) -> None:
        core = self.core
        for event in events:
            kind = event[0]
            if kind == core.EV_CONN:
                self._connection(event[1:])
            elif kind == core.EV_GAP:
                self._gap(*event[1:])
            elif kind == core.EV_SECOND:
                _, second, packets, size, connections, retransmissions = event
                self.timeline.add(
                    second,
                    packets=packets,
                    bytes=size,
                    connections=connections,
                    retransmissions=retransmissions,
                )
            elif kind == core.EV_TLS:
                self._tls(*event[1:])
            elif kind == core.EV_PROBLEM:
                self.problem_count += 1
                if len(self.problems) < MAX_PROBLEMS:
                    self.problems.append(Problem(event[1], event[2]))
            elif kind == core.EV_IFACE:
                if len(self.interfaces) < MAX_INTERFACES:
                    _, index, linktype, units = event
                    self.interfaces.append(
                        {
                            "index": index,
                            "linktype": linktype,
                            "link": LINK_TYPES.get(linktype, f"link type {linktype}"),
                            "resolution_ns": 1e9 / units,
                        }
                    )

    def _gap(self, stream: int, at_ns: int, ns: int, silent: int, before: int) -> None:
        seconds = ns / 1e9
        side, what = SIDES[silent], BEFORE[before]
        self.gap_count += 1
        self.gap_seconds += seconds
        self.gap_kinds[(side, what)] += 1
        self.gap_wait[side] += seconds
        if self.gaps.add(seconds, (stream, at_ns, seconds, side, what)):
            self.unlabelled.setdefault(stream, [])
            if len(self.unlabelled) > 4 * self.gaps.n:
                live = {item[0] for item in self.gaps}
                self.unlabelled = {k: v for k, v in self.unlabelled.items() if k in live}
                self.labels = {k: v for k, v in self.labels.items() if k in live}

    def _connection(self, row: tuple) -> None:
        c = dict(zip(CONNECTION_FIELDS, row, strict=True))
        self.finished += 1
        self.endings[ENDINGS[c["ended"]]] += 1
        label = (
            f"{endpoint(c['client'], c['client_port'])} -> "
            f"{endpoint(c['server'], c['server_port'])}"
        )
        if c["id"] in self.unlabelled:
            del self.unlabelled[c["id"]]
            self.labels[c["id"]] = label
        self.durations.add(c["last_ns"] - c["first_ns"])
        self.requests.add(c["requests"])
        self.total_requests += c["requests"]
        self.total_responses += c["responses"]
        if c["rst_packets"]:
            self.reset_connections += 1
        self.client_bytes += c["client_bytes"]
        self.server_bytes += c["server_bytes"]
        if c["server_guessed"]:
            self.guessed_ports[c["server_port"]] += 1
        else:
            self.server_ports[c["server_port"]] += 1
        if c["syn_ns"] == NO_TIME:
            self.handshake_counts["start_not_captured"] += 1
        elif c["synack_ns"] == NO_TIME:
            self.handshake_counts["no_syn_ack"] += 1
        elif c["handshake_ack_ns"] == NO_TIME:
            self.handshake_counts["no_final_ack"] += 1
        else:
            self.handshake_counts["completed"] += 1
            self.handshakes.add(c["handshake_ack_ns"] - c["syn_ns"])
        if c["syn_ns"] != NO_TIME and c["synack_ns"] != NO_TIME:
            self.syn_to_synack.add(max(0, c["synack_ns"] - c["syn_ns"]))
        size = c["client_bytes"] + c["server_bytes"]
        packets = c["client_packets"] + c["server_packets"]
        self.hosts.add(c["client"], size, packets, 1)
        self.hosts.add(c["server"], size, packets, 1)
        summary = (c, label)
        self.top_connections.add(size, summary)
        if c["retransmissions"]:
            self.retransmitting.add(c["retransmissions"], summary)
        hello = self.hellos.pop(c["id"], None)
        if hello is not None:
            self.tls.unanswered += 1

    def _tls(self, stream: int, role: int, ts_ns: int, data: bytes, complete: int) -> None:
        figures = self.tls
        if role == 0:
            hello = tls.parse_client_hello(data)
            if hello is None:
                return
            figures.client_hellos += 1
            figures.truncated += hello.truncated
            self.timeline.add(ts_ns // 1_000_000_000, tls_handshakes=1)
            if hello.server_name:
                figures.server_names.add(hello.server_name)
            figures.offered[tls.version_name(max(hello.offered_versions, default=0))] += 1
            self.hellos[stream] = hello.session_id
        else:
            server = tls.parse_server_hello(data)
            if server is None:
                return
            figures.server_hellos += 1
            figures.truncated += server.truncated
            client = self.hellos.pop(stream, None)
            if server.hello_retry:
                figures.hello_retries += 1
                return
            figures.versions[tls.version_name(server.version)] += 1
            resumed = tls.is_resumption(client, server)
            if resumed is None:
                figures.resumption_unknown += 1
            elif resumed:
                figures.resumed += 1
            else:
                figures.full += 1

    def gap_list(self) -> list[Gap]:
        return [
            Gap(self.labels.get(stream, f"stream {stream}"), stream, at_ns, seconds, side, what)
            for stream, at_ns, seconds, side, what in self.gaps.items()
        ]
