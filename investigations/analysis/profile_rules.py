"""Finding rules over two CPU profiles of a host pair: what burns on one side only.

Pure: each side's folded stacks ({stack: weight}) in, Verdicts out. Both sides are compared
by percentages of their own total, never by raw counts (the sides ran for different times,
at different frequencies, on different numbers of CPUs).

A named rule is a kind of work recognised by its symbols (TLS and crypto, lock contention,
garbage collection, page faults, system calls and the network stack, the hypervisor): the
share of each side's samples whose stack holds such a frame. It fires when one side spends
much more on it than the other. Then any function whose own (self) share differs by more
than a threshold is a generic finding, ranked below.
"""

import re
from dataclasses import dataclass

from django.utils.translation import gettext_noop as _

from collectors.phrase import Phrase
from collectors.stacks import FoldedProfile, compare_profiles
from investigations.analysis.rules.base import Verdict
from investigations.choices import FindingSeverity as Severity

# A kind of work fires when one side spends at least this share of its CPU on it...
MIN_SHARE = 5.0
# ... and at least this many percentage points, or this many times, more than the other.
MIN_POINTS = 10.0
MIN_RATIO = 3.0
# A function's self share differing by this many percentage points is a generic finding.
FUNCTION_POINTS = 5.0
MAX_FUNCTION_FINDINGS = 10


@dataclass(frozen=True)
class WorkKind:
    rule: str
    root_cause: str  # the slug of its knowledge-base entry
    severity: str
    symbols: re.Pattern
    title: str
    explanation: str
    recommendation: str


def _symbols(*patterns: str) -> re.Pattern:
    return re.compile("|".join(patterns))


WORK_KINDS = [
    WorkKind(
        "profile_tls_crypto",
        "short-lived-tls-connections",
        Severity.HIGH,
        _symbols(
            r"libcrypto",
            r"libssl",
            r"boringssl",
            r"^crypto/",
            r"crypto/(ecdsa|ecdh|elliptic|rsa|aes|sha256|tls)",
            r"sun\.security",
            r"(?i:(?<![a-z])(ecdh|ecdsa|ec_?point|p256|nistz256|x25519|curve25519))",
            r"(?i:(?<![a-z])(rsa_|bn_mod_exp|bn_mul|rsaz))",
            r"(?i:(?<![a-z])(aes|aesni|gcm_|sha256_block|sha512_block|sha1_block))",
            r"(?i:(?<![a-z])(evp_|ssl3_|tls13?_|ssl_do_handshake))",
        ),
        _("TLS and cryptography take %(a)s of the CPU on side A and %(b)s on side B"),
        _(
            "Key exchange and signatures of new TLS handshakes cost a lot of CPU. One side "
            "spending far more on them usually opens many short-lived connections where the "
            "other reuses a few long-lived ones."
        ),
        _(
            "Reuse connections (keep-alive, one client, a connection pool) and allow session "
            "resumption; count new connections and handshakes on both sides with a packet "
            "capture."
        ),
    ),
    WorkKind(
        "profile_lock_contention",
        "too-many-vcpus",
        Severity.HIGH,
        _symbols(
            r"futex",
            r"__lll_lock_wait",
            r"pthread_mutex_(lock|unlock)",
            r"pthread_cond_",
            r"_raw_spin_(un)?lock",
            r"queued_spin_lock_slowpath",
            r"osq_lock",
            r"rwsem_",
            r"mutex_spin",
            r"Unsafe_Park",
            r"LockSupport\.park",
            r"runtime\.(lock|semacquire)",
        ),
        _("Lock contention takes %(a)s of the CPU on side A and %(b)s on side B"),
        _(
            "Threads spin or sleep on locks (futex waits, spin unlocks) instead of working: "
            "typical of an application running on more CPUs than it scales to, or of a hot "
            "lock such as synchronous logging."
        ),
        _(
            "Compare the CPU counts and the threads of the service on both sides; try fewer "
            "cores or CPU pinning, and look for the lock in a thread dump."
        ),
    ),
    WorkKind(
        "profile_garbage_collection",
        "gc-pressure",
        Severity.MEDIUM,
        _symbols(
            r"^(GC Thread|G1 |VM Thread|GC task|ZWorker|ShenandoahGC)",
            r"G1ParScanThreadState|G1ParEvacuate|PSPromotionManager|PSScavenge",
            r"ZMark|ShenandoahMark|CollectedHeap",
            r"gcBgMarkWorker|runtime\.gcDrain|runtime\.scanobject|runtime\.markroot",
        ),
        _("Garbage collection takes %(a)s of the CPU on side A and %(b)s on side B"),
        _(
            "The runtime spends its time collecting garbage: a smaller heap, another collector "
            "or its flags, or more allocation under this load on one side."
        ),
        _("Compare heap sizes and collector flags on both sides, and the GC logs."),
    ),
    WorkKind(
        "profile_page_faults",
        "transparent-huge-pages",
        Severity.MEDIUM,
        _symbols(
            r"clear_page",
            r"do_anonymous_page",
            r"handle_mm_fault",
            r"do_page_fault|exc_page_fault",
            r"compact_zone|isolate_migratepages|khugepaged|do_huge_pmd",
        ),
        _("Page faults and memory compaction take %(a)s of the CPU on side A and %(b)s on side B"),
        _(
            "The kernel spends the time handing out and clearing pages, or compacting memory "
            "for huge pages: transparent huge page settings, a different allocator or memory "
            "pressure on one side."
        ),
        _(
            "Compare transparent huge pages (enabled, defrag) and memory on both sides; "
            "pre-touch or size the heap."
        ),
    ),
    WorkKind(
        "profile_syscalls_network",
        "cpu-vulnerability-mitigations",
        Severity.MEDIUM,
        _symbols(
            r"entry_SYSCALL|do_syscall_64",
            r"tcp_(sendmsg|recvmsg|v4_rcv|ack)",
            r"__sys_(sendto|recvfrom|sendmsg|recvmsg)",
            r"sock_(sendmsg|recvmsg)",
            r"ip_(output|rcv|finish_output)",
            r"net_rx_action|__netif_receive_skb|napi_",
            r"ep_poll|epoll_wait",
        ),
        _("System calls and the network stack take %(a)s of the CPU on side A and %(b)s on side B"),
        _(
            "More time in the kernel's entry and network paths: smaller reads and writes, "
            "more packets or connections, costlier system calls (vulnerability mitigations), "
            "or another kernel."
        ),
        _(
            "Compare the kernels and their mitigations, the NIC queues, and the packets and "
            "connections in a capture."
        ),
    ),
    WorkKind(
        "profile_hypervisor",
        "hypervisor-overhead",
        Severity.MEDIUM,
        _symbols(
            r"\bpv_|paravirt",
            r"\bkvm_|\bxen_|\bhv_|\bvmx_",
            r"__pv_queued_spin",
            r"kvm_clock|pvclock",
        ),
        _("Hypervisor paths take %(a)s of the CPU on side A and %(b)s on side B"),
        _(
            "Paravirtual spin locks, clocks and hypercalls show a guest waiting on its "
            "hypervisor: a busy host or an overcommitted VM."
        ),
        _("Compare steal time on both sides; for latency-critical work prefer dedicated hosts."),
    ),
]


def _percent(value: float) -> str:
    return f"{value:.1f} %"


def work_shares(weights: dict, kinds=WORK_KINDS) -> dict[str, float]:
    """{rule: percent of the profile's weight in stacks that hold a frame of that kind}, each
    stack counted once per kind however many of its frames match."""
    total = sum(weights.values())
    shares = dict.fromkeys((kind.rule for kind in kinds), 0.0)
    if not total:
        return shares
    for stack, weight in weights.items():
        frames = stack.split(";")
        for kind in kinds:
            if any(kind.symbols.search(frame) for frame in frames):
                shares[kind.rule] += weight
    return {rule: 100 * value / total for rule, value in shares.items()}


def _differs(a: float, b: float) -> bool:
    high, low = max(a, b), min(a, b)
    return high >= MIN_SHARE and (high - low >= MIN_POINTS or high >= MIN_RATIO * low + MIN_SHARE)


def evaluate_profiles(a: FoldedProfile, b: FoldedProfile) -> list[Verdict]:
    """Every verdict for one pair of profiles: the kinds of work first, then the functions."""
    verdicts = []
    shares_a, shares_b = work_shares(a.weights), work_shares(b.weights)
    for kind in WORK_KINDS:
        pa, pb = shares_a[kind.rule], shares_b[kind.rule]
        if _differs(pa, pb):
            verdicts.append(
                Verdict(
                    rule=kind.rule,
                    root_cause=kind.root_cause,
                    severity=kind.severity,
                    title=Phrase(kind.title, a=_percent(pa), b=_percent(pb)),
                    explanation=Phrase(kind.explanation),
                    recommendation=Phrase(kind.recommendation),
                    side_a=_percent(pa),
                    side_b=_percent(pb),
                )
            )
    differing = [
        delta for delta in compare_profiles(a, b) if abs(delta.self_delta) >= FUNCTION_POINTS
    ][:MAX_FUNCTION_FINDINGS]
    for delta in differing:
        verdicts.append(
            Verdict(
                rule="profile_function",
                subject=delta.name[:255],
                severity=Severity.INFO,
                title=Phrase(
                    _("%(function)s: %(a)s of the CPU on side A, %(b)s on side B (self)"),
                    function=delta.name,
                    a=_percent(delta.self_a),
                    b=_percent(delta.self_b),
                ),
                explanation=Phrase(
                    _(
                        "This function's own share of the samples differs between the sides "
                        "by more than %(points)s percentage points."
                    ),
                    points=f"{FUNCTION_POINTS:g}",
                ),
                recommendation=Phrase(
                    _("Open the differential flame graph of the pair to see where it is called.")
                ),
                side_a=_percent(delta.self_a),
                side_b=_percent(delta.self_b),
            )
        )
    return verdicts
