"""Side by side: the figures of one side's capture, and how two sides compare.

`SideSummary.of(analysis)` picks the figures an engineer compares at the knee (from a
CaptureAnalysis or its stored `as_dict()`); `compare(a, b)` gives, for each, both values,
the ratio a/b and which side is better, knowing for each figure whether lower or higher is
better (or neither, for plain volume). Labels are marked for translation and translated
where they are shown.

A figure counted over the whole capture (a total, or a rate per second of it) says as much
about how long the capture ran as about the side: 20 requests captured over 4 s and the same
20 over 0.3 s make "new connections per second" differ thirteen times. Such figures get a
verdict only when both captures ran about as long (DURATIONS_ALIKE); otherwise the figures per
request, per connection and per packet compare the sides.
"""

from dataclasses import dataclass, fields

from collectors.phrase import gettext_noop as _

# Within this relative difference two values are "about equal" (as in a baseline table).
SAME_WITHIN = 0.05
# Two captures ran "about as long" within this relative difference of their durations.
DURATIONS_ALIKE = 0.1
# Why a figure with a better direction has no verdict (Comparison.no_verdict).
DURATIONS_DIFFER = "durations_differ"


@dataclass(frozen=True)
class Figure:
    name: str
    label: str
    better: str | None  # "lower", "higher" or None (volume: neither is better)
    # A total or a rate over the whole capture: it grows or shrinks with the capture's length.
    over_capture: bool = False


FIGURES = (
    Figure("packets", _("packets"), None),
    Figure("bytes", _("bytes"), None),
    Figure("duration_s", _("capture duration (s)"), None),
    Figure("packets_per_s", _("packets per second"), "higher", over_capture=True),
    Figure("throughput_bps", _("throughput (bit/s)"), "higher", over_capture=True),
    Figure("connections", _("TCP connections"), None),
    Figure("connections_per_s", _("new connections per second"), "lower", over_capture=True),
    Figure(
        "connections_per_s_peak",
        _("new connections in the busiest second"),
        "lower",
        over_capture=True,
    ),
    Figure("requests_per_connection", _("requests per connection"), "higher"),
    Figure("connection_seconds_mean", _("mean connection duration (s)"), None),
    Figure("handshake_ms_mean", _("mean TCP handshake (ms)"), "lower"),
    Figure("incomplete_handshakes", _("handshakes never completed"), "lower", over_capture=True),
    Figure("tls_handshakes", _("TLS handshakes (ClientHello)"), "lower", over_capture=True),
    Figure("tls_handshakes_per_s", _("TLS handshakes per second"), "lower", over_capture=True),
    Figure("tls_handshakes_per_request", _("TLS handshakes per request"), "lower"),
    Figure("tls_resumption_ratio", _("share of TLS handshakes resumed"), "higher"),
    Figure("retransmissions", _("retransmissions"), "lower", over_capture=True),
    Figure("retransmission_ratio", _("retransmissions per TCP packet"), "lower"),
    Figure("duplicate_acks", _("duplicate ACKs"), "lower", over_capture=True),
    Figure("zero_windows", _("zero windows"), "lower", over_capture=True),
    Figure("out_of_order", _("out-of-order segments"), "lower", over_capture=True),
    Figure("lost_segments", _("segments not captured"), "lower", over_capture=True),
    Figure("resets", _("connections reset"), "lower", over_capture=True),
    Figure("reset_ratio", _("share of connections reset"), "lower"),
    Figure("gaps", _("silences over the threshold"), "lower", over_capture=True),
    Figure("gaps_per_request", _("silences over the threshold per request"), "lower"),
    Figure(
        "client_wait_s",
        _("seconds the clients were silent (in gaps)"),
        "lower",
        over_capture=True,
    ),
    Figure(
        "server_wait_s",
        _("seconds the servers were silent (in gaps)"),
        "lower",
        over_capture=True,
    ),
    Figure("longest_gap_s", _("longest silence (s)"), "lower"),
    Figure("request_wait_ms_mean", _("mean client wait before a request (ms)"), "lower"),
    Figure("response_wait_ms_mean", _("mean server wait before a response (ms)"), "lower"),
)


@dataclass(frozen=True)
class SideSummary:
    """The figures of one side (see FIGURES); None where the capture cannot tell."""

    packets: int
    bytes: int
    duration_s: float
    packets_per_s: float | None
    throughput_bps: float | None
    connections: int
    connections_per_s: float | None
    connections_per_s_peak: float
    requests_per_connection: float | None
    connection_seconds_mean: float | None
    handshake_ms_mean: float | None
    incomplete_handshakes: int
    tls_handshakes: int
    tls_handshakes_per_s: float | None
    tls_handshakes_per_request: float | None
    tls_resumption_ratio: float | None
    retransmissions: int
    retransmission_ratio: float | None
    duplicate_acks: int
    zero_windows: int
    out_of_order: int
    lost_segments: int
    resets: int
    reset_ratio: float | None
    gaps: int
    gaps_per_request: float | None
    client_wait_s: float
    server_wait_s: float
    longest_gap_s: float | None
    request_wait_ms_mean: float | None
    response_wait_ms_mean: float | None

    @classmethod
    def of(cls, analysis) -> "SideSummary":
        """The figures of a CaptureAnalysis, or of its as_dict() as stored."""
        data = analysis if isinstance(analysis, dict) else analysis.as_dict()
        connection = data["connection"]
        tls = data["tls"]
        answered = tls["full_handshakes"] + tls["resumptions"]
        tcp = data["decode"]["tcp"]
        connections = data["connections"]
        hellos = data["tls_handshakes"]
        # A ClientHello is itself a burst of client payload, counted among the requests.
        requests = max(connection["requests"] - hellos, 0)

        def ms(value: float | None) -> float | None:
            return None if value is None else value * 1000

        return cls(
            packets=data["packets"],
            bytes=data["bytes"],
            duration_s=data["duration_s"],
            packets_per_s=data["packets_per_s"],
            throughput_bps=data["throughput_bps"],
            connections=data["connections"],
            connections_per_s=data["connections_per_s"],
            connections_per_s_peak=data["connections_per_s_peak"],
            requests_per_connection=requests / connections if connections else None,
            connection_seconds_mean=connection["duration"]["mean"],
            handshake_ms_mean=ms(connection["handshake"]["mean"]),
            incomplete_handshakes=connection["incomplete_handshakes"],
            tls_handshakes=data["tls_handshakes"],
            tls_handshakes_per_s=data["tls_handshakes_per_s"],
            tls_handshakes_per_request=hellos / requests if requests > 0 else None,
            tls_resumption_ratio=tls["resumptions"] / answered if answered else None,
            retransmissions=data["retransmissions"],
            retransmission_ratio=data["retransmissions"] / tcp if tcp else None,
            duplicate_acks=data["duplicate_acks"],
            zero_windows=data["zero_windows"],
            out_of_order=data["out_of_order"],
            lost_segments=data["lost_segments"],
            resets=data["resets"],
            reset_ratio=data["resets"] / connections if connections else None,
            gaps=data["gap_count"],
            gaps_per_request=data["gap_count"] / requests if requests > 0 else None,
            client_wait_s=data["wait_seconds"]["client"],
            server_wait_s=data["wait_seconds"]["server"],
            longest_gap_s=max((g["seconds"] for g in data["gaps"]), default=None),
            request_wait_ms_mean=ms(data["request_wait"]["mean"]),
            response_wait_ms_mean=ms(data["response_wait"]["mean"]),
        )

    def as_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self)}


@dataclass(frozen=True)
class Comparison:
    figure: str
    label: str
    a: float | None
    b: float | None
    ratio: float | None  # a / b; None when b is 0 or either is unknown
    better: str | None  # "a", "b", "same" (within SAME_WITHIN), or None (volume, unknown)
    # Why a figure that has a better direction got no verdict: DURATIONS_DIFFER, or None.
    no_verdict: str | None = None

    def as_dict(self) -> dict:
        return {
            "figure": self.figure,
            "label": self.label,
            "a": self.a,
            "b": self.b,
            "ratio": self.ratio,
            "better": self.better,
            "no_verdict": self.no_verdict,
        }


def _better(figure: Figure, a: float | None, b: float | None) -> str | None:
    if figure.better is None or a is None or b is None:
        return None
    if a == b or abs(a - b) <= SAME_WITHIN * max(abs(a), abs(b)):
        return "same"
    lower_wins = figure.better == "lower"
    return "a" if (a < b) == lower_wins else "b"


def durations_alike(a: float | None, b: float | None) -> bool:
    """Two captures ran about as long (within DURATIONS_ALIKE of each other)."""
    if a is None or b is None:
        return False
    return a == b or abs(a - b) <= DURATIONS_ALIKE * max(abs(a), abs(b))


def compare(a, b) -> list[Comparison]:
    """Each figure of side a against side b. a and b are SideSummary, CaptureAnalysis or
    its as_dict(). A figure over the whole capture has no verdict where the captures' lengths
    differ (see the module's docstring)."""
    if not isinstance(a, SideSummary):
        a = SideSummary.of(a)
    if not isinstance(b, SideSummary):
        b = SideSummary.of(b)
    alike = durations_alike(a.duration_s, b.duration_s)
    rows = []
    for figure in FIGURES:
        va, vb = getattr(a, figure.name), getattr(b, figure.name)
        ratio = va / vb if va is not None and vb else None
        # Neither side saw any: that holds however long each ran.
        if figure.over_capture and figure.better and not alike and (va or vb):
            better, why = None, DURATIONS_DIFFER
        else:
            better, why = _better(figure, va, vb), None
        rows.append(Comparison(figure.name, figure.label, va, vb, ratio, better, why))
    return rows
