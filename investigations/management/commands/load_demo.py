"""Demo data: one lived-in investigation, so a newcomer sees what a case looks like, and two
closed ones before it, so that its similar past cases show something real.

Each is modelled on a real incident, told in our own words. The main one (a VM against a
container on identical hardware; resolved, not closed) goes through the same parsers and
services as real evidence: wrk results imported as a ladder on both sides, and one host per
side with a facts snapshot, from the files in demo/ (written for the demo, not measured:
demo/README.md); its root cause is the knowledge base's CPU governor entry, confirmed with
the governor finding. The hosts have documentation addresses (RFC 5737), no credential and
no trusted host key: nothing is ever contacted.

The closed ones (PAST_CASES: too many vCPUs for a lock-bound service; short-lived TLS
connections to object storage) have no hosts at all: their CPU profiles are imported onto
the sides from demo/, and the findings the story's other figures give (a CPU count, a
capture's connection and handshake rates) are raised by the same rules and recorded by the
findings service. Their root causes are confirmed, their postmortems written, and they are
closed by the demo user, who leads the demo team.

Each case loads once, found by its title; what an older demo lacks is added on the next run.
"""

import hashlib
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from collectors.facts import parse_facts
from investigations.analysis.capture_rules import connection_churn, tls_handshakes
from investigations.analysis.rules.cpu import cpu_count
from investigations.choices import (
    ActionKind,
    CollectionKind,
    Direction,
    EventKind,
    EvidenceKind,
    FindingStatus,
    HostRole,
    HostTransport,
    ImportFormat,
    ItemStatus,
    NodeState,
    ProfileFormat,
    Severity,
    SideKind,
    Status,
)
from investigations.models import Finding, Host, Investigation, Postmortem, RootCause, Team
from investigations.runs.capture import Captured
from investigations.services.baselines import baseline_import
from investigations.services.checklist import checklist_item_update
from investigations.services.collections import (
    artifact_store,
    collection_complete_if_done,
    collection_request,
    target_claim,
)
from investigations.services.facts import facts_refresh, facts_store
from investigations.services.findings import PairVerdicts, finding_set_status, findings_record
from investigations.services.inventory import host_create, member_add
from investigations.services.investigations import (
    investigation_create,
    investigation_set_status,
    investigation_update,
)
from investigations.services.knowledge import case_root_cause_confirm
from investigations.services.ladder_imports import ladder_import
from investigations.services.path import path_from_text, path_node_set_state, path_node_update
from investigations.services.postmortem import action_item_create, postmortem_update
from investigations.services.profiles import profile_import
from investigations.services.teams import team_create
from investigations.services.timeline import timeline_entry_add

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "perfcase-demo"
DEMO_TEAM = "Demo team"
DEMO_TITLE = "Containers serve half the TPS of VMs on the same hardware"

# The evidence files: wrk-<side>-c<connections>.txt and facts-<side>-<host>.txt.
DEMO_DIR = Path(__file__).resolve().parent / "demo"
# One service host per side: (name, address, its probe output in DEMO_DIR). The addresses
# are in 192.0.2.0/24 (RFC 5737, documentation only). SSH without a credential or a trusted
# host key: a collection from them fails before it connects.
DEMO_HOSTS = {
    "a": ("order-api-container-host", "192.0.2.10", "facts-a-container-host.txt"),
    "b": ("order-api-vm", "192.0.2.20", "facts-b-vm.txt"),
}

# (minutes after the start, kind, action, what happened)
DEMO_TIMELINE = [
    (0, EventKind.NOTE, "", "Traffic surge after the campaign went live; many API calls time out."),
    (6, EventKind.ACTION, ActionKind.RATE_LIMIT, "Rate limit on the public API gateway."),
    (
        14,
        EventKind.ACTION,
        ActionKind.RESTART,
        "Restarted the service. VM instances came back; container instances failed to start "
        "and were taken out of traffic.",
    ),
    (25, EventKind.ACTION, ActionKind.SCALE_OUT, "Scaled out both the VM and the container pools."),
    (31, EventKind.NOTE, "", "Two new container instances unhealthy; removed from the pool."),
    (
        55,
        EventKind.ACTION,
        ActionKind.RATE_LIMIT,
        "Error rate normal for 20 minutes: rate limit lifted.",
    ),
    (80, EventKind.NOTE, "", "Second, larger surge. Timeouts again."),
    (83, EventKind.ACTION, ActionKind.RATE_LIMIT, "Rate limit back on."),
    (
        90,
        EventKind.ACTION,
        ActionKind.SCALE_OUT,
        "Scaled out again. Some deployments failed, more of them on containers; container "
        "instances spend seconds in full GC while requests pile up.",
    ),
    (
        130,
        EventKind.NOTE,
        "",
        "Found a code bug that triggers a full GC at start-up on every instance.",
    ),
    (150, EventKind.ACTION, ActionKind.FIX, "Deployed the fix for the start-up full GC."),
    (
        175,
        EventKind.NOTE,
        "",
        "Load test on one instance of each: the container does half the TPS of the VM and its "
        "average response time is higher. Same hardware model, same image.",
    ),
    (
        230,
        EventKind.NOTE,
        "",
        "lscpu on the container host: current MHz sits at the minimum. scaling_governor is "
        "'powersave' there and 'performance' on the VM host.",
    ),
    (
        240,
        EventKind.ACTION,
        ActionKind.FIX,
        "Set the governor to performance on the container hosts (cpupower frequency-set -g "
        "performance); containers now match or beat the VMs.",
    ),
    (
        300,
        EventKind.NOTE,
        "",
        "Follow-up: export the governor from node_exporter and alert when a host is not on "
        "'performance'; benchmark both platforms before the next launch.",
    ),
]


# The demo case's root cause: a knowledge-base entry shipped with Perfcase (migration 0013),
# confirmed with the governor finding as its evidence.
DEMO_ROOT_CAUSE = "cpu-governor-powersave"
# Said on closing a past case whose knowledge-base entry has been deleted.
PAST_CLOSE_REASON = "Closed with the fix verified; its knowledge-base entry is no longer there."
DEMO_FIX = (
    "Governor set to performance on every container host (cpupower frequency-set -g "
    "performance, kept across reboots by the tuned profile); the containers then matched the "
    "VMs."
)

# The demo case's write-up, in our own words, and what the team set out to do after it.
DEMO_POSTMORTEM = {
    "summary": (
        "The order API in containers served half the TPS of the same API on VMs of the same "
        "hardware model. The container hosts ran the 'powersave' CPU frequency governor, so "
        "their cores stayed near the minimum clock under load; a full GC at start-up that "
        "the slower side never caught up with made it look like an application problem."
    ),
    "impact": (
        "About four hours of halved checkout throughput on the container side during the "
        "migration rehearsal; no data lost, the VMs kept serving."
    ),
    "fix": DEMO_FIX,
    "verification": (
        "The same ladder (50 to 400 concurrent users) re-run after the change: both sides "
        "within 5 % at every step, the knee moved past 300 users on the containers."
    ),
    "lessons": (
        "Compare host facts before load-testing: the governor differed from the first "
        "collection. A setting that falls back silently after a reboot needs an alert, not "
        "a runbook line."
    ),
}
DEMO_ACTIONS = [
    # (title, done, due in days from the load)
    ("Alert when node_cpu_scaling_governor is not 'performance' on any node", False, 7),
    ("Keep the performance governor in the container hosts' tuned profile", True, None),
    ("Fix the full GC the order API runs at start-up", False, 21),
]


@dataclass(frozen=True)
class PastCase:
    """A closed demo case: what people wrote of it, in our own words after a real incident."""

    title: str
    days_ago: int
    severity: str
    tags: list
    symptom: dict  # investigation_create's symptom fields
    sides: dict  # investigation_create's side fields
    notes: str
    path: list  # lines of the one-line path grammar
    node_states: list  # (label, state, note)
    timeline: list  # (minutes after the start, kind, action, what happened)
    profiles: dict  # side -> the file in DEMO_DIR imported onto it as folded stacks
    # The rule verdicts the story's other figures give, recorded under their own pair key.
    verdicts: Callable[[], list[PairVerdicts]]
    root_cause: str  # the slug of a shipped knowledge-base entry
    evidence_rules: tuple  # the rules of the findings that prove it
    fix: str
    postmortem: dict
    action_items: list  # (title, done)
    checklist: list  # (key, status, notes or the reason it does not apply)
    mitigated: int  # minutes after the start
    resolved: int


def _vcpu_verdicts() -> list[PairVerdicts]:
    """The VM's CPU count against the physical server's, as the cpu_count rule reads it."""
    return [
        PairVerdicts("story:facts", None, None, cpu_count({"cpu.count": 56}, {"cpu.count": 24}))
    ]


def _tls_verdicts() -> list[PairVerdicts]:
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
    return [PairVerdicts("story:capture", None, None, verdicts)]


PAST_CASES = [
    PastCase(
        title="Quote service in containers on 56-vCPU VMs serves less than on 24-core servers",
        days_ago=41,
        severity=Severity.SEV3,
        tags=["cpu", "containers", "locks", "vm"],
        symptom={
            "symptom_metric": "QPS of the quote API through the whole call chain",
            "symptom_unit": "req/s",
            "symptom_load": "the customer's load test plan, same on both sides",
            "symptom_value_a": 8200,
            "symptom_value_b": 12600,
            "symptom_direction": Direction.HIGHER_IS_BETTER,
        },
        sides={
            "side_a_label": "container on a 56-vCPU VM",
            "side_a_kind": SideKind.CONTAINER,
            "side_b_label": "24-core physical server",
            "side_b_kind": SideKind.BARE_METAL,
        },
        notes=(
            "Moving to the cloud, the customer expected the bigger VMs to be faster than "
            "their physical servers. The quote service sizes its thread pools from the number "
            "of cores it sees, so on 56 vCPUs it ran thousands of threads that spent their "
            "time on futex waits instead of work."
        ),
        path=["loadgen -> gateway:api-proxy -> order-service -> quote-service"],
        node_states=[
            ("loadgen", NodeState.RULED_OUT, "The same test plan and load machines for both."),
            (
                "api-proxy",
                NodeState.RULED_OUT,
                "More CPU for the proxy changed nothing; it idles at half its limit.",
            ),
            (
                "order-service",
                NodeState.RULED_OUT,
                "More CPU for the order service changed little.",
            ),
            (
                "quote-service",
                NodeState.SUSPECT,
                "Pinned at 400 % CPU during the test; more CPU for it raises the QPS.",
            ),
        ],
        timeline=[
            (
                0,
                EventKind.NOTE,
                "",
                "Customer's load test: the call chain in containers on cloud VMs reaches "
                "clearly less QPS than on their physical servers, though the VMs have more "
                "cores and memory.",
            ),
            (
                40,
                EventKind.NOTE,
                "",
                "Compared the software: same kernel line, same JVM options and heap sizes, "
                "same image on both sides.",
            ),
            (
                75,
                EventKind.NOTE,
                "",
                "Per hop: the quote service's container sits at 400 % CPU, the proxy and the "
                "order service have headroom. Only more CPU for the quote service helps.",
            ),
            (
                95,
                EventKind.NOTE,
                "",
                "Switched the container to host networking: no change. Not the network.",
            ),
            (
                130,
                EventKind.NOTE,
                "",
                "Moved the VM to a bigger type with more and faster cores: no gain either, "
                "so it is not a matter of raw capacity.",
            ),
            (
                170,
                EventKind.NOTE,
                "",
                "perf top on the VM: _raw_spin_unlock_irqrestore above 10 %. strace on the "
                "service: threads waiting on futex. Over 2,000 Java threads, several times "
                "as many as on the physical server.",
            ),
            (
                220,
                EventKind.ACTION,
                ActionKind.FIX,
                "Pinned the container to dedicated CPUs (kubelet's static CPU manager "
                "policy): QPS up to about 13,000.",
            ),
            (
                260,
                EventKind.NOTE,
                "",
                "Control: a VM with 24 vCPUs like the physical server, no pinning: about "
                "13,500 QPS. The core count itself was the problem.",
            ),
        ],
        profiles={
            "a": "profile-a-quote-service.folded.txt",
            "b": "profile-b-quote-service.folded.txt",
        },
        verdicts=_vcpu_verdicts,
        root_cause="too-many-vcpus",
        evidence_rules=("profile_lock_contention", "cpu_count"),
        fix=(
            "The quote service runs on 24-vCPU VMs, or pinned to dedicated CPUs where it "
            "shares a bigger node."
        ),
        postmortem={
            "summary": (
                "The quote service served about a third less on 56-vCPU VMs than on 24-core "
                "physical servers. It starts threads by the core count; on the big VMs they "
                "contended on locks and the CPU went to futex waits and spin-unlocks."
            ),
            "impact": "The cloud migration was held back for two weeks; no production impact.",
            "fix": (
                "VMs sized like the physical servers (24 vCPUs); where that is not possible, "
                "the container pinned to dedicated CPUs."
            ),
            "verification": (
                "The same load test on a 24-vCPU VM reached about 13,500 QPS, above the "
                "physical server; pinned on the big VM, about 13,000."
            ),
            "lessons": (
                "More cores are not more speed for a service that does not scale to them: "
                "test how it scales with cores before choosing an instance size, and look at "
                "thread counts and lock time when the bigger machine is slower."
            ),
        },
        action_items=[
            ("Size the quote service's VMs at 24 vCPUs in the migration plan", True),
            ("Cap the service's thread pools instead of deriving them from the core count", False),
        ],
        checklist=[
            (
                "sides_match",
                ItemStatus.DONE,
                "Same kernel line, JVM options, heap sizes and image on both sides; only the "
                "core count differs.",
            ),
            (
                "ladder",
                ItemStatus.NOT_APPLICABLE,
                "The customer ran their own load test plan; its figures are in the timeline.",
            ),
            (
                "host_at_knee",
                ItemStatus.DONE,
                "top and perf top on the VM under load: 400 % CPU, 2,000+ threads, spin "
                "unlocks and futex hot (see the profiles).",
            ),
            (
                "packets_at_knee",
                ItemStatus.NOT_APPLICABLE,
                "Host networking changed nothing: the network was ruled out without captures.",
            ),
            (
                "pairs",
                ItemStatus.NOT_APPLICABLE,
                "The hosts were the customer's; the evidence was gathered there and imported.",
            ),
        ],
        mitigated=220,
        resolved=260,
    ),
    PastCase(
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
                "Load balancer, elastic IP, ingress and database: none near a limit on "
                "either side.",
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
        verdicts=_tls_verdicts,
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
    ),
]


class Command(BaseCommand):
    help = "Create the demo user, team and investigations (idempotent; DEBUG only)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError(
                "The demo user has a published password: load_demo runs only with DEBUG on."
            )
        User = get_user_model()
        user, created = User.objects.get_or_create(username=DEMO_USERNAME)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        team = Team.objects.filter(name=DEMO_TEAM).first() or team_create(user=user, name=DEMO_TEAM)
        loaded = False
        for past in PAST_CASES:
            if not Investigation.objects.filter(team=team, title=past.title).exists():
                self._load_past(team, user, past)
                loaded = True
        demo = Investigation.objects.filter(team=team, title=DEMO_TITLE).first()
        if demo is None:
            self._load(team, user)
            loaded = True
        else:
            # A demo loaded before it had its root cause and its write-up.
            if not demo.case_root_causes.exists():
                loaded = self._root_cause(demo, user) or loaded
            if not Postmortem.objects.filter(investigation=demo).exists():
                self._postmortem(demo, user)
                loaded = True
            if not demo.baseline_results.exists():
                self._baseline(demo, user)
                loaded = True
        if not loaded:
            self.stdout.write("Demo data already loaded.")
            return
        self.stdout.write(self.style.SUCCESS("Demo data loaded."))

    @transaction.atomic
    def _load(self, team: Team, user) -> None:
        start = timezone.now().replace(second=0, microsecond=0) - timedelta(days=2)
        investigation = investigation_create(
            team=team,
            user=user,
            title=DEMO_TITLE,
            severity=Severity.SEV2,
            tags=["cpu", "governor", "containers"],
            symptom_metric="TPS of the order API, single instance",
            symptom_unit="req/s",
            symptom_load="200 concurrent users, 4 vCPU / 8 GB instances",
            symptom_value_a=1150,
            symptom_value_b=2300,
            symptom_direction=Direction.HIGHER_IS_BETTER,
            started_at=start,
            detected_at=start + timedelta(minutes=2),
            notes=(
                "Root cause: the CPU frequency governor of the container hosts was "
                "'powersave', so their cores ran at the minimum clock. A start-up full GC "
                "bug made it visible: the slower side could not catch up under load."
            ),
            side_a_label="container",
            side_a_kind=SideKind.CONTAINER,
            side_b_label="VM",
            side_b_kind=SideKind.VM,
        )
        for minutes, kind, action, summary in DEMO_TIMELINE:
            timeline_entry_add(
                investigation=investigation,
                user=user,
                kind=kind,
                action=action,
                summary=summary,
                occurred_at=start + timedelta(minutes=minutes),
            )
        hosts = self._hosts(team, investigation, user)
        self._path(investigation, user, hosts)
        self._facts(investigation, user)
        self._ladder(investigation, user)
        self._baseline(investigation, user)
        self._checklist(investigation, user)
        self._root_cause(investigation, user)
        self._postmortem(investigation, user)
        investigation = investigation_update(
            investigation=investigation,
            user=user,
            mitigated_at=start + timedelta(minutes=150),
            resolved_at=start + timedelta(minutes=240),
        )
        investigation_set_status(investigation=investigation, user=user, status=Status.RESOLVED)

    def _baseline(self, investigation, user) -> None:
        """The service hosts' sysbench results, imported as a baseline of both sides."""
        for side in ("a", "b"):
            baseline_import(
                investigation=investigation,
                user=user,
                side_key=side,
                role=HostRole.SERVICE,
                files=[
                    (name, (DEMO_DIR / name).read_bytes())
                    for name in (
                        f"baseline-{side}-sysbench-cpu.txt",
                        f"baseline-{side}-sysbench-memory-read.txt",
                    )
                ],
            )

    def _postmortem(self, investigation, user) -> None:
        """The demo case's write-up and its action items."""
        postmortem_update(investigation=investigation, user=user, **DEMO_POSTMORTEM)
        today = timezone.localdate()
        for title, done, due_in in DEMO_ACTIONS:
            action_item_create(
                investigation=investigation,
                user=user,
                title=title,
                owner=user,
                due=today + timedelta(days=due_in) if due_in else None,
                done=done,
            )

    def _root_cause(self, investigation, user) -> bool:
        """The governor entry of the knowledge base, confirmed with the governor finding
        and the fix; False if the entry is not there (deleted from the knowledge base)."""
        root_cause = RootCause.objects.filter(slug=DEMO_ROOT_CAUSE).first()
        if root_cause is None:
            return False
        evidence = [
            {"kind": EvidenceKind.FINDING, "id": pk}
            for pk in Finding.objects.filter(
                investigation=investigation, rule="cpu_governor"
            ).values_list("pk", flat=True)
        ]
        case_root_cause_confirm(
            investigation=investigation,
            user=user,
            root_cause=root_cause,
            evidence=evidence,
            fix=DEMO_FIX,
        )
        return True

    @transaction.atomic
    def _load_past(self, team: Team, user, past: PastCase) -> None:
        """A closed case: told, evidenced, its root cause confirmed, written up, closed."""
        start = timezone.now().replace(second=0, microsecond=0) - timedelta(days=past.days_ago)
        investigation = investigation_create(
            team=team,
            user=user,
            title=past.title,
            severity=past.severity,
            tags=past.tags,
            started_at=start,
            detected_at=start,
            notes=past.notes,
            **past.symptom,
            **past.sides,
        )
        for minutes, kind, action, summary in past.timeline:
            timeline_entry_add(
                investigation=investigation,
                user=user,
                kind=kind,
                action=action,
                summary=summary,
                occurred_at=start + timedelta(minutes=minutes),
            )
        for line in past.path:
            path_from_text(investigation=investigation, user=user, text=line)
        nodes = {node.label: node for node in investigation.path_nodes.all()}
        for label, state, note in past.node_states:
            path_node_set_state(node=nodes[label], user=user, state=state, note=note)
        for side, name in past.profiles.items():
            profile_import(
                investigation=investigation,
                user=user,
                side_key=side,
                format=ProfileFormat.FOLDED,
                files=[(name, (DEMO_DIR / name).read_bytes())],
            )
        findings_record(investigation=investigation, pairs=past.verdicts())
        for key, status, text in past.checklist:
            reason = {"na_reason": text} if status == ItemStatus.NOT_APPLICABLE else {"notes": text}
            checklist_item_update(
                item=investigation.checklist.get(key=key), user=user, status=status, **reason
            )
        root_cause = RootCause.objects.filter(slug=past.root_cause).first()
        if root_cause is not None:
            proof = Finding.objects.filter(
                investigation=investigation, rule__in=past.evidence_rules
            )
            for found in proof:
                finding_set_status(finding=found, user=user, status=FindingStatus.CONFIRMED)
            case_root_cause_confirm(
                investigation=investigation,
                user=user,
                root_cause=root_cause,
                evidence=[
                    {"kind": EvidenceKind.FINDING, "id": pk}
                    for pk in proof.values_list("pk", flat=True)
                ],
                fix=past.fix,
            )
        postmortem_update(investigation=investigation, user=user, **past.postmortem)
        for title, done in past.action_items:
            action_item_create(
                investigation=investigation, user=user, title=title, owner=user, done=done
            )
        investigation = investigation_update(
            investigation=investigation,
            user=user,
            mitigated_at=start + timedelta(minutes=past.mitigated),
            resolved_at=start + timedelta(minutes=past.resolved),
        )
        investigation_set_status(
            investigation=investigation,
            user=user,
            status=Status.CLOSED,
            # Only if the knowledge base lost the entry: a case closes with its root cause.
            reason="" if root_cause is not None else PAST_CLOSE_REASON,
        )

    def _hosts(self, team: Team, investigation, user) -> dict[str, Host]:
        """The service host of each side, placed on it: the environments pair up."""
        hosts = {}
        for side, (name, address, _) in DEMO_HOSTS.items():
            # Kept from an earlier demo whose investigation was deleted: host names are unique.
            host = Host.objects.filter(team=team, name=name).first() or host_create(
                team=team,
                name=name,
                address=address,
                port=22,
                username="deploy",
                transport=HostTransport.SSH,
            )
            member_add(
                investigation=investigation,
                user=user,
                host=host,
                side_key=side,
                role=HostRole.SERVICE,
            )
            hosts[side] = host
        return hosts

    def _facts(self, investigation, user) -> None:
        """A facts snapshot per host, stored as a collection stores it: the request makes
        the targets; each is claimed here at once and given the probe output shipped in
        DEMO_DIR, so the run the request enqueues finds nothing left to claim and connects
        to nothing. The rules then raise their findings from these facts."""
        collection = collection_request(
            investigation=investigation, user=user, kind=CollectionKind.FACTS
        )
        for target in collection.targets.all():
            claimed = target_claim(target_id=target.pk, seconds=60)
            raw = (DEMO_DIR / DEMO_HOSTS[claimed.side.key][2]).read_bytes()
            facts_store(
                target=claimed,
                snapshot=parse_facts(raw),
                attempt=claimed.attempts,
                refresh=False,
            )
            captured = _captured(f"facts-{claimed.host.name}-{claimed.side.key}.txt", raw)
            try:
                artifact_store(target=claimed, captured=captured)
            finally:
                captured.close()
        facts_refresh(investigation=investigation)
        collection_complete_if_done(collection_id=collection.pk)

    def _ladder(self, investigation, user) -> None:
        """The wrk results of both sides, imported onto one ladder: A first, then B."""
        ladder = None
        for side in ("a", "b"):
            files = [
                (path.name, path.read_bytes())
                for path in sorted(DEMO_DIR.glob(f"wrk-{side}-c*.txt"))
            ]
            ladder = ladder_import(
                investigation=investigation,
                user=user,
                side_key=side,
                format=ImportFormat.WRK,
                files=files,
                ladder=ladder,
            )

    def _path(self, investigation, user, hosts: dict[str, Host]) -> None:
        nodes = {
            node.label: node
            for node in path_from_text(
                investigation=investigation,
                user=user,
                text="loadgen -> lb:slb -> gateway -> order-api -[mysql:3306, long]-> db:mysql",
            )
        }
        path_node_update(
            node=nodes["order-api"],
            user=user,
            spec_a="container, 4 vCPU / 8 GB, same image",
            spec_b="VM, 4 vCPU / 8 GB, same image",
            hosts_a=[hosts["a"]],
            hosts_b=[hosts["b"]],
        )
        for label, note in (
            ("loadgen", "The same load test plan and machine for both sides."),
            ("slb", "New connections and bandwidth far below the instance's limits."),
            ("gateway", "Gateway CPU under 30 % during the surge."),
            ("mysql", "Same database for both pools; its latency flat during the test."),
        ):
            path_node_set_state(node=nodes[label], user=user, state=NodeState.RULED_OUT, note=note)
        path_node_set_state(
            node=nodes["order-api"],
            user=user,
            state=NodeState.SUSPECT,
            note="The container pool serves half the TPS of the VM pool at the same load.",
        )

    def _checklist(self, investigation, user) -> None:
        """The path, the pairs and the ladder are done by their evidence already (the
        services refresh the checklist), as the root cause is once confirmed; the sides do
        not match while the findings are open. Set by hand here: only what a person's
        judgement settles."""
        checklist_item_update(
            item=investigation.checklist.get(key="ladder"),
            user=user,
            notes="One instance of each, wrk -t4 -d60s --latency, 50 to 400 connections.",
        )
        for key, status, notes in (
            (
                "host_at_knee",
                ItemStatus.DONE,
                "Host facts of both service hosts: the container host runs the 'powersave' "
                "governor at its 1500 MHz minimum, the VM host 'performance' (see the "
                "findings on the CPU governor and clock).",
            ),
        ):
            checklist_item_update(
                item=investigation.checklist.get(key=key), user=user, status=status, notes=notes
            )


def _captured(name: str, raw: bytes) -> Captured:
    """A shipped output as the runner's capture would hold it, to keep as an artifact."""
    file = tempfile.TemporaryFile()
    file.write(raw)
    return Captured(
        name=name,
        file=file,
        size=len(raw),
        sha256=hashlib.sha256(raw).hexdigest(),
        truncated=False,
        exit_status=0,
    )
