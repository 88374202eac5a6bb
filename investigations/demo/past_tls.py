"""A closed demo case: short-lived TLS connections to object storage. Its CPU profiles are
imported onto the sides; the figures of its captures raise the capture rules' findings."""

from investigations.analysis.capture_rules import connection_churn, tls_handshakes
from investigations.choices import (
    ActionKind,
    Direction,
    EventKind,
    ItemStatus,
    NodeState,
    Severity,
    SideKind,
)
from investigations.demo.past_case import PastCase
from investigations.selectors.findings import STORY_PAIR
from investigations.services.findings import PairVerdicts


def _verdicts() -> list[PairVerdicts]:
    """The figures of the captures on port 443 of both sides, as the capture rules read them:
    ours opens a connection per upload and handshakes for nearly every request; theirs keeps
    a handful open."""
    ours = {
        "connections_per_s": 182.0,
        "connection": {"requests": 21400, "requests_per_connection": {"mean": 1.1}},
        "tls": {"client_hellos": 10150},
    }
    theirs = {
        "connections_per_s": 0.4,
        "connection": {"requests": 26800, "requests_per_connection": {"mean": 640.0}},
        "tls": {"client_hellos": 42},
    }
    verdicts = connection_churn(ours, theirs) + tls_handshakes(ours, theirs)
    return [PairVerdicts(f"{STORY_PAIR}capture", None, None, verdicts)]


TLS_CASE = PastCase(
    title="File API at 500 users: 2.6x the latency of the other cloud",
    days_ago=17,
    severity=Severity.SEV2,
    tags=["tls", "latency", "object-storage", "kubernetes"],
    symptom={
        "symptom_metric": "average latency of the file upload API",
        "symptom_unit": "ms",
        "symptom_load": "500 concurrent users",
        "symptom_value_a": 1380,
        "symptom_value_b": 540,
        "symptom_direction": Direction.LOWER_IS_BETTER,
    },
    sides={
        "side_a_label": "our Kubernetes",
        "side_a_kind": SideKind.CONTAINER,
        "side_b_label": "the other cloud",
        "side_b_kind": SideKind.CONTAINER,
    },
    notes=(
        "A customer compared our managed Kubernetes with another provider's before "
        "moving. Both runs kept the containers near 95 % CPU; ours spent most of it on TLS "
        "handshakes, because the upload code made a new object-storage client for every "
        "file here and reused one there."
    ),
    path=[
        "loadgen -> lb:elb -> nat:eip -> gateway:ingress -> file-api "
        "-[https:443, short]-> object_storage:obs",
        "file-api -[mysql:3306, long]-> db:mysql",
    ],
    node_states=[
        ("loadgen", NodeState.RULED_OUT, "The same test plan and load machines for both."),
        ("elb", NodeState.RULED_OUT, "New connections per second far below its size."),
        ("eip", NodeState.RULED_OUT, "Bandwidth under a third of the limit on both sides."),
        ("ingress", NodeState.RULED_OUT, "Ingress CPU under 40 % during the test."),
        (
            "mysql",
            NodeState.RULED_OUT,
            "The database answers fast; the waits are on the client side.",
        ),
        (
            "obs",
            NodeState.RULED_OUT,
            "Object storage answers within its usual latency on both sides.",
        ),
        (
            "file-api",
            NodeState.SUSPECT,
            "More CPU per request than the other cloud at every load.",
        ),
    ],
    timeline=[
        (
            0,
            EventKind.NOTE,
            "",
            "Load test at 500 concurrent users: the file API averages about 1.4 s with us "
            "and about 0.55 s at the other cloud. Containers near 95 % CPU on both sides.",
        ),
        (
            25,
            EventKind.NOTE,
            "",
            "Drew both paths from the load generator to the database and object storage; "
            "compared sizes, deployment files and the jar inside the image: the same.",
        ),
        (
            50,
            EventKind.NOTE,
            "",
            "Load balancer, elastic IP, ingress and database: none near a limit on either side.",
        ),
        (
            80,
            EventKind.NOTE,
            "",
            "Our logs show slow database calls. A capture of port 3306 in the container: "
            "the client often waits about 0.2 s before its next query, four queries per "
            "request. The database is quick; the client is short of CPU.",
        ),
        (
            110,
            EventKind.NOTE,
            "",
            "Stepped the load down: at every step our containers use more CPU than theirs "
            "for the same load. Interrupts about the same.",
        ),
        (
            150,
            EventKind.NOTE,
            "",
            "CPU profiles: most of our CPU goes to elliptic-curve code of the JDK's "
            "crypto library, i.e. TLS handshakes. Over 10,000 HTTPS connections to object "
            "storage during the test with us, a handful with them.",
        ),
        (
            190,
            EventKind.ACTION,
            ActionKind.FIX,
            "Developers found a new object-storage client built for every upload in the "
            "code for our storage. One client per process now: at 500 users we are "
            "slightly faster than the other cloud.",
        ),
    ],
    profiles={"a": "profile-a-file-api.folded.txt", "b": "profile-b-file-api.folded.txt"},
    verdicts=_verdicts,
    root_cause="short-lived-tls-connections",
    evidence_rules=(
        "profile_tls_crypto",
        "capture_connection_churn",
        "capture_tls_handshakes",
    ),
    fix="One object-storage client per process, reused for every upload (keep-alive).",
    postmortem={
        "summary": (
            "At 500 users the file API took 2.6 times as long with us as at the other "
            "cloud. Our containers spent their CPU on TLS handshakes: the upload code "
            "built a new object-storage client, so a new HTTPS connection, per file."
        ),
        "impact": "A customer's move was delayed by a week of benchmarking.",
        "fix": "One client per process, shared by every upload, with keep-alive.",
        "verification": (
            "The same 500-user test: average latency now slightly below the other "
            "cloud's; HTTPS connections to object storage down from over 10,000 to a few."
        ),
        "lessons": (
            "When both sides are CPU-bound, ask what the CPU is doing before blaming the "
            "network: slow database calls were a symptom of a starved client. Count new "
            "connections early; a profile shows handshakes at once."
        ),
    },
    action_items=[
        ("Add connection reuse to the object-storage SDK's examples", True),
        ("Alert when a service opens more than 50 new TLS connections a second", False),
    ],
    checklist=[
        (
            "sides_match",
            ItemStatus.DONE,
            "Same sizes, deployment files and jar on both sides.",
        ),
        (
            "ladder",
            ItemStatus.NOT_APPLICABLE,
            "The load was stepped down by hand on the customer's side; the figures are "
            "in the timeline.",
        ),
        (
            "host_at_knee",
            ItemStatus.DONE,
            "Stepped load: our CPU higher at every step; interrupts the same.",
        ),
        (
            "packets_at_knee",
            ItemStatus.DONE,
            "Captures of ports 3306 and 443 in the container (see the findings).",
        ),
        (
            "pairs",
            ItemStatus.NOT_APPLICABLE,
            "The hosts were the customer's; the evidence was gathered there and imported.",
        ),
    ],
    mitigated=190,
    resolved=230,
)
