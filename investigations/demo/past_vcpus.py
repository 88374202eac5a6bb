"""A closed demo case: too many vCPUs for a lock-bound service. Its CPU profiles are
imported onto the sides; the CPU count its story gives raises the cpu_count finding."""

from investigations.analysis.rules.cpu import cpu_count
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
    """The VM's CPU count against the physical server's, as the cpu_count rule reads it."""
    return [
        PairVerdicts(
            f"{STORY_PAIR}facts", None, None, cpu_count({"cpu.count": 56}, {"cpu.count": 24})
        )
    ]


VCPUS_CASE = PastCase(
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
    verdicts=_verdicts,
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
)
