"""Finding rules over two packet captures of a host pair: what the network shows on one side
only.

Pure: each side's analysis (collectors.capture's as_dict) in, Verdicts out. Every rule
compares figures per request, per connection or per packet, never counts or rates per second:
the sides were captured for their own durations (a capture of 20 requests over 4 s and one of
the same 20 requests over 0.3 s open connections at very different rates per second, and say
nothing about either side by it). A knowledge-base entry about TLS is named only where the
capture saw TLS handshakes.
"""

from statistics import median

from django.utils.translation import gettext_noop as _

from collectors.phrase import Phrase
from investigations.analysis.rules.base import Verdict
from investigations.choices import FindingSeverity as Severity

# One side "opens a connection for (nearly) every request": at most this many requests per
# connection, over at least this many connections, where the other side makes this many
# times as many requests on each of its connections.
CHURN_REQUESTS = 2.0
CHURN_CONNECTIONS = 10
CHURN_RATIO = 3.0
# A side "speaks TLS" when at least this share of its connections began with a ClientHello.
TLS_SHARE = 0.5
# TLS handshakes per request worth naming, and how much more than the other side. A quarter:
# the requests counted hold the client's own handshake flight after its hello (its Finished,
# a burst of its own), and a service's capture holds the requests it serves beside those it
# sends; a service opening a TLS connection for each call to its dependency shows about one
# handshake for three requests (rebuilt case `tls-per-request`).
HANDSHAKES_PER_REQUEST = 0.25
HANDSHAKE_RATIO = 3.0
# Pauses: at least this share of a side's requests preceded by pauses of one length.
PAUSE_SHARE = 0.2
SIMILAR = 0.25  # within 25 % of their median
MIN_PAUSES = 5
# Retransmissions worth naming (share of packets) when the other side has a third of it.
RETRANSMISSION_SHARE = 0.01
# Handshakes "slow" at this p90, this many times the other side's.
SLOW_HANDSHAKE_S = 0.01
SLOW_RATIO = 3.0


def _share(value) -> str:
    return f"{100 * value:.1f} %"


def _seconds(value) -> str:
    return f"{value * 1000:,.0f} ms" if value < 1 else f"{value:,.2f} s"


def _one_sided(a: float, b: float, *, least: float, ratio: float) -> str | None:
    """ "A" or "B": the side whose value is at least `least` and `ratio` times the other's."""
    for side, mine, theirs in (("A", a, b), ("B", b, a)):
        if mine >= least and mine >= ratio * theirs:
            return side
    return None


def _requests(analysis: dict) -> int:
    return analysis.get("connection", {}).get("requests") or 0


def _hellos(analysis: dict) -> int:
    return analysis.get("tls", {}).get("client_hellos") or 0


def _connections(analysis: dict) -> int:
    return analysis.get("connections") or 0


def requests_per_connection(analysis: dict) -> float | None:
    """The requests a connection carries on average, the ClientHellos left out (each is a
    burst of client payload, counted among the requests); None without connections."""
    connections = _connections(analysis)
    if connections:
        return max(_requests(analysis) - _hellos(analysis), 0) / connections
    return analysis.get("connection", {}).get("requests_per_connection", {}).get("mean")


def handshakes_per_request(analysis: dict) -> float:
    """TLS handshakes (ClientHellos) per request, the hellos themselves not counted as
    requests; 0 where the capture saw no TLS."""
    hellos = _hellos(analysis)
    return hellos / max(_requests(analysis) - hellos, 1) if hellos else 0.0


def speaks_tls(analysis: dict) -> bool:
    """The capture saw TLS handshakes on most of its connections (or on some, where it does
    not say how many connections it saw)."""
    hellos, connections = _hellos(analysis), _connections(analysis)
    return hellos > 0 and (not connections or hellos >= TLS_SHARE * connections)


def _churning(analysis: dict, other: dict) -> bool:
    mine, theirs = requests_per_connection(analysis), requests_per_connection(other)
    if not mine or theirs is None or mine > CHURN_REQUESTS:
        return False
    if "connections" in analysis and _connections(analysis) < CHURN_CONNECTIONS:
        return False
    return theirs >= CHURN_RATIO * mine


def _per_connection(analysis: dict) -> str:
    value = requests_per_connection(analysis)
    return "—" if value is None else f"{value:,.1f} req/conn"


def connection_churn(a: dict, b: dict) -> list[Verdict]:
    """One side opens a connection for (nearly) every request where the other reuses its
    connections: compared per connection, whatever the captures' lengths."""
    found = [
        (side, mine, theirs)
        for side, mine, theirs in (("A", a, b), ("B", b, a))
        if _churning(mine, theirs)
    ]
    if not found:
        return []
    side, mine, theirs = found[0]
    tls = speaks_tls(mine)
    return [
        Verdict(
            rule="capture_connection_churn",
            # A TLS cause only from TLS seen: plain TCP churn names no knowledge-base entry.
            root_cause="short-lived-tls-connections" if tls else "",
            severity=Severity.HIGH if tls else Severity.MEDIUM,
            title=Phrase(
                _(
                    "Side %(side)s makes %(mine)s requests per connection where the other "
                    "makes %(theirs)s"
                ),
                side=side,
                mine=f"{requests_per_connection(mine):,.1f}",
                theirs=f"{requests_per_connection(theirs):,.1f}",
            ),
            explanation=Phrase(
                _(
                    "Many short-lived connections on one side, few long-lived ones on the "
                    "other: every new connection pays the TCP (and TLS) handshake, in round "
                    "trips and in CPU, and load balancers and NAT have their own limits on new "
                    "connections."
                )
            ),
            recommendation=Phrase(
                _(
                    "Reuse connections: keep-alive, one HTTP client or a connection pool for "
                    "the whole process; compare the client libraries and their settings."
                )
            ),
            side_a=_per_connection(a),
            side_b=_per_connection(b),
        )
    ]


def tls_handshakes(a: dict, b: dict) -> list[Verdict]:
    pa, pb = handshakes_per_request(a), handshakes_per_request(b)
    side = _one_sided(pa, pb, least=HANDSHAKES_PER_REQUEST, ratio=HANDSHAKE_RATIO)
    if side is None:
        return []
    return [
        Verdict(
            rule="capture_tls_handshakes",
            root_cause="short-lived-tls-connections",
            severity=Severity.HIGH,
            title=Phrase(
                _("TLS handshakes per request: %(a)s on side A, %(b)s on side B"),
                a=f"{pa:.2f}",
                b=f"{pb:.2f}",
            ),
            explanation=Phrase(
                _(
                    "A full TLS handshake costs the server an elliptic-curve or RSA operation "
                    "and the client a round trip or two; one side handshaking for most "
                    "requests spends its CPU on cryptography (a CPU profile shows it)."
                )
            ),
            recommendation=Phrase(
                _(
                    "Keep TLS connections open and reuse them; allow session resumption "
                    "(tickets) on the server."
                )
            ),
            side_a=f"{pa:.2f}",
            side_b=f"{pb:.2f}",
        )
    ]


def _pauses(analysis: dict) -> tuple[float, float] | None:
    """(the typical length, the share of requests preceded by it) of the pauses before
    requests, when enough are of one length; else None."""
    pauses = [
        gap["seconds"]
        for gap in analysis.get("gaps", [])
        if gap.get("silent") == "client" and gap.get("before") == "request"
    ]
    if len(pauses) < MIN_PAUSES or not _requests(analysis):
        return None
    typical = median(pauses)
    similar = [p for p in pauses if abs(p - typical) <= SIMILAR * typical]
    return typical, len(similar) / _requests(analysis)


def request_pauses(a: dict, b: dict) -> list[Verdict]:
    found = {"A": _pauses(a), "B": _pauses(b)}
    verdicts = []
    for side, other in (("A", "B"), ("B", "A")):
        mine = found[side]
        if mine is None or mine[1] < PAUSE_SHARE:
            continue
        theirs = found[other][1] if found[other] else 0.0
        if theirs >= mine[1] / 2:
            continue
        verdicts.append(
            Verdict(
                rule="capture_request_pauses",
                root_cause="client-waits-before-requests",
                subject=side,
                severity=Severity.HIGH,
                title=Phrase(
                    _("Side %(side)s pauses %(length)s before %(share)s of its client requests"),
                    side=side,
                    length=_seconds(mine[0]),
                    share=_share(min(mine[1], 1.0)),
                ),
                explanation=Phrase(
                    _(
                        "The client waits about the same time before sending each request: "
                        "something on the client side (a pool waiting for a connection, a "
                        "lock, a timer, a DNS lookup, a slow library call) delays every "
                        "request by a fixed amount, which adds straight to the latency."
                    )
                ),
                recommendation=Phrase(
                    _(
                        "Profile the client at that moment, and look for connection-pool "
                        "waits, Nagle/delayed-ACK interplay (about 40 or 200 ms) and timers "
                        "of that length in its configuration."
                    )
                ),
                side_a=_pause_text(found["A"]),
                side_b=_pause_text(found["B"]),
            )
        )
    return verdicts


def _pause_text(found) -> str:
    return f"{_seconds(found[0])}, {_share(min(found[1], 1.0))}" if found else "—"


def retransmissions(a: dict, b: dict) -> list[Verdict]:
    def rate(analysis: dict) -> float:
        packets = analysis.get("packets") or 0
        return (analysis.get("retransmissions") or 0) / packets if packets else 0.0

    verdicts = []
    ra, rb = rate(a), rate(b)
    side = _one_sided(ra, rb, least=RETRANSMISSION_SHARE, ratio=3.0)
    if side is not None:
        verdicts.append(
            Verdict(
                rule="capture_retransmissions",
                root_cause="packet-loss-retransmissions",
                severity=Severity.HIGH,
                title=Phrase(
                    _("Retransmissions on side %(side)s: %(rate)s of its packets"),
                    side=side,
                    rate=_share(ra if side == "A" else rb),
                ),
                explanation=Phrase(
                    _(
                        "Lost or late segments are sent again after a timeout or duplicate "
                        "ACKs: each costs the connection at least a round trip and shrinks "
                        "its congestion window."
                    )
                ),
                recommendation=Phrase(
                    _(
                        "Look for drops on the path of that side: NIC and kernel counters "
                        "(ethtool -S, nstat), a saturated link or load balancer, MTU problems."
                    )
                ),
                side_a=f"{_share(ra)} ({a.get('retransmissions') or 0})",
                side_b=f"{_share(rb)} ({b.get('retransmissions') or 0})",
            )
        )
    za, zb = a.get("zero_windows") or 0, b.get("zero_windows") or 0
    if (za > 0) != (zb > 0):
        side = "A" if za else "B"
        verdicts.append(
            Verdict(
                rule="capture_zero_windows",
                root_cause="slow-receiver-zero-window",
                severity=Severity.MEDIUM,
                title=Phrase(
                    _("Zero windows on side %(side)s only: %(count)s"),
                    side=side,
                    count=za or zb,
                ),
                explanation=Phrase(
                    _(
                        "A receiver advertised a window of zero: it could not take data as "
                        "fast as it came (a slow reader, a full socket buffer), and the sender "
                        "stopped."
                    )
                ),
                recommendation=Phrase(
                    _(
                        "Find the slow reader on that side (which end sent the zero window) "
                        "and compare socket buffer sizes (net.ipv4.tcp_rmem)."
                    )
                ),
                side_a=str(za),
                side_b=str(zb),
            )
        )
    return verdicts


def slow_handshakes(a: dict, b: dict) -> list[Verdict]:
    def p90(analysis: dict) -> float:
        return analysis.get("connection", {}).get("handshake", {}).get("p90") or 0.0

    ha, hb = p90(a), p90(b)
    side = _one_sided(ha, hb, least=SLOW_HANDSHAKE_S, ratio=SLOW_RATIO)
    if side is None:
        return []
    return [
        Verdict(
            rule="capture_slow_handshakes",
            root_cause="slow-tcp-handshakes",
            severity=Severity.MEDIUM,
            title=Phrase(
                _("TCP handshakes take %(a)s on side A and %(b)s on side B (p90)"),
                a=_seconds(ha),
                b=_seconds(hb),
            ),
            explanation=Phrase(
                _(
                    "The SYN, SYN/ACK, ACK exchange is one round trip: slow handshakes on one "
                    "side mean a longer path, a busy accept queue (somaxconn, the backlog) or "
                    "SYNs dropped and sent again."
                )
            ),
            recommendation=Phrase(
                _(
                    "Compare the round trip (ping) and the listen backlog of both sides; look "
                    "for SYN retransmissions in the capture."
                )
            ),
            side_a=_seconds(ha),
            side_b=_seconds(hb),
        )
    ]


RULES = [connection_churn, tls_handshakes, request_pauses, retransmissions, slow_handshakes]


def evaluate_captures(a: dict, b: dict) -> list[Verdict]:
    """Every verdict for one pair of captures' analyses."""
    return [verdict for rule in RULES for verdict in rule(a, b)]
