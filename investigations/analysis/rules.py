"""Finding rules over two hosts' facts: each names a root cause that host facts can reveal.

A rule is a function (a, b) -> list[Verdict], where a and b are the fact dicts of side A and
side B of one host pair. Every named rule also declares the keys it covers, so that the
generic rule reports only the differences no named rule explains.
"""

import fnmatch
from dataclasses import dataclass

from investigations.analysis.diff import DIFFERS, diff_facts, values_equal
from investigations.choices import FindingSeverity as Severity


@dataclass(frozen=True)
class Verdict:
    rule: str
    severity: str
    title: str
    explanation: str
    recommendation: str
    side_a: str
    side_b: str
    subject: str = ""


def _show(value) -> str:
    if value is None:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _differs(key: str, a: dict, b: dict) -> bool:
    return key in a and key in b and not values_equal(key, a[key], b[key])


RULES = []


def rule(*covers: str):
    """Register a rule and the fact keys it explains (fnmatch patterns)."""

    def register(function):
        function.covers = covers
        RULES.append(function)
        return function

    return register


@rule("cpu.governor", "cpu.governor_uniform", "cpu.governors")
def governor(a: dict, b: dict) -> list[Verdict]:
    ga, gb = a.get("cpu.governor"), b.get("cpu.governor")
    slow = [side for side, g in (("A", ga), ("B", gb)) if g not in (None, "performance")]
    if not slow:
        return []
    both = len(slow) == 2
    if both and ga != gb:
        title = f"CPU frequency governor is '{ga}' on side A and '{gb}' on side B"
    else:
        where = "both sides" if both else f"side {slow[0]}"
        title = f"CPU frequency governor is '{ga if slow[0] == 'A' else gb}' on {where}"
    return [
        Verdict(
            rule="cpu_governor",
            severity=Severity.MEDIUM if both and ga == gb else Severity.HIGH,
            title=title,
            explanation=(
                "A governor other than 'performance' lets the kernel lower the CPU clock when "
                "it thinks the machine is idle, and raise it late under load. On the same "
                "hardware this alone can halve throughput of CPU-bound work and stretch "
                "garbage-collection pauses."
                + (
                    " The two sides differ here, which makes it a prime suspect."
                    if not both
                    else ""
                )
            ),
            recommendation=(
                "Set it with `cpupower frequency-set -g performance`, and make it survive "
                "reboots with a tuned profile (throughput-performance or latency-performance). "
                "Add an alert on the governor (node_exporter exports "
                "node_cpu_scaling_governor) so that it cannot come back unseen."
            ),
            side_a=_show(a.get("cpu.governors") if ga == "mixed" else ga),
            side_b=_show(b.get("cpu.governors") if gb == "mixed" else gb),
        )
    ]


@rule("cpu.mhz.current")
def clock_at_minimum(a: dict, b: dict) -> list[Verdict]:
    def at_minimum(facts):
        current, low, high = (
            facts.get(k) for k in ("cpu.mhz.current", "cpu.mhz.min", "cpu.mhz.max")
        )
        if not all(isinstance(v, int | float) for v in (current, low, high)) or high <= low:
            return False
        return current <= low + 0.1 * (high - low)

    slow = [side for side, facts in (("A", a), ("B", b)) if at_minimum(facts)]
    if len(slow) != 1:
        return []
    return [
        Verdict(
            rule="cpu_clock_at_minimum",
            severity=Severity.MEDIUM,
            title=f"CPU clock sits near its minimum on side {slow[0]}",
            explanation=(
                "The current frequency is close to the lowest the CPU can run at, while the "
                "other side runs faster. With a power-saving governor, or power limits in the "
                "firmware, the cores stay slow."
            ),
            recommendation="Check the governor and the BIOS power profile (set it to performance).",
            side_a=f"{_show(a.get('cpu.mhz.current'))} MHz (min {_show(a.get('cpu.mhz.min'))})",
            side_b=f"{_show(b.get('cpu.mhz.current'))} MHz (min {_show(b.get('cpu.mhz.min'))})",
        )
    ]


def _simple(
    key: str,
    rule_name: str,
    severity: str,
    title: str,
    explanation: str,
    recommendation: str,
    *,
    also_covers: tuple[str, ...] = (),
):
    """A rule that fires when one fact differs between the sides."""

    @rule(key, *also_covers)
    def check(a: dict, b: dict) -> list[Verdict]:
        if not _differs(key, a, b):
            return []
        return [
            Verdict(
                rule=rule_name,
                severity=severity,
                title=title,
                explanation=explanation,
                recommendation=recommendation,
                side_a=_show(a[key]),
                side_b=_show(b[key]),
            )
        ]

    check.__name__ = rule_name
    return check


_simple(
    "cpu.boost",
    "cpu_boost",
    Severity.MEDIUM,
    "CPU turbo boost differs",
    "With boost off, cores stay at their base clock: single-threaded and latency-bound work "
    "runs slower by the ratio of boost to base frequency.",
    "Enable boost in the BIOS or through /sys/devices/system/cpu/cpufreq/boost "
    "(intel_pstate/no_turbo on Intel), unless predictable clocks matter more here.",
)
_simple(
    "mm.thp.enabled",
    "thp_enabled",
    Severity.MEDIUM,
    "Transparent huge pages are set differently",
    "THP 'always' backs large heaps with 2 MB pages, which helps a JVM or other large-heap "
    "process through fewer TLB misses, but can add latency spikes to allocators such as "
    "Redis' or those of databases that advise against it.",
    "Choose per workload, the same on both sides: /sys/kernel/mm/transparent_hugepage/enabled "
    "(or transparent_hugepage= on the kernel command line to keep it across reboots).",
)
_simple(
    "mm.thp.defrag",
    "thp_defrag",
    Severity.LOW,
    "Transparent huge page defragmentation is set differently",
    "With 'always', page faults may stall while the kernel compacts memory for huge pages.",
    "Align /sys/kernel/mm/transparent_hugepage/defrag on both sides (madvise is a safe default).",
)
_simple(
    "kernel.mitigation_switches",
    "mitigation_switches",
    Severity.HIGH,
    "CPU vulnerability mitigations are switched differently on the kernel command line",
    "Mitigations such as page-table isolation and retpolines make every system call and "
    "context switch dearer. A side booted with mitigations=off (or nopti, spectre_v2=off) "
    "does small-packet networking and syscall-heavy work noticeably faster.",
    "Decide deliberately: turn mitigations off only where no untrusted code runs, and then "
    "on both sides. Otherwise compare with the same mitigations on.",
)
_simple(
    "kernel.release",
    "kernel_release",
    Severity.MEDIUM,
    "Kernel releases differ",
    "Kernels differ in the network stack, the scheduler and default mitigations; an old kernel "
    "has been seen to cut small-packet TCP throughput and raise latency markedly.",
    "Run the same kernel on both sides, or measure the effect of the upgrade in isolation.",
)


@rule(
    "cpu.model",
    "cpu.vendor",
    "cpu.family",
    "cpu.model_number",
    "cpu.stepping",
    "cpu.mhz.min",
    "cpu.mhz.max",
)
def cpu_model(a: dict, b: dict) -> list[Verdict]:
    """Different CPUs; their family, stepping and clock range follow from the model."""
    if not _differs("cpu.model", a, b):
        return []
    return [
        Verdict(
            rule="cpu_model",
            severity=Severity.HIGH,
            title="CPU models differ",
            explanation=(
                "The same instance type or size can come with different CPU generations; a "
                "5-20 % spread between 'identical' machines is common, more for older models."
            ),
            recommendation=(
                "Pin the instance family or hardware model, and check it when machines are "
                "provisioned."
            ),
            side_a=_cpu_summary(a),
            side_b=_cpu_summary(b),
        )
    ]


def _cpu_summary(facts: dict) -> str:
    low, high = facts.get("cpu.mhz.min"), facts.get("cpu.mhz.max")
    clock = (
        f", {low:g}-{high:g} MHz"
        if isinstance(low, int | float) and isinstance(high, int | float)
        else ""
    )
    return f"{_show(facts.get('cpu.model'))}{clock}"


@rule("cpu.microcode")
def microcode(a: dict, b: dict) -> list[Verdict]:
    """Only meaningful on the same CPU model: different models have different microcode."""
    if _differs("cpu.model", a, b) or not _differs("cpu.microcode", a, b):
        return []
    return [
        Verdict(
            rule="microcode",
            severity=Severity.LOW,
            title="CPU microcode versions differ on the same CPU model",
            explanation=(
                "Microcode updates change which vulnerability mitigations the CPU offers and "
                "can change performance of branch-heavy and syscall-heavy work."
            ),
            recommendation="Update the microcode (intel-microcode / amd64-microcode, or the BIOS).",
            side_a=_show(a["cpu.microcode"]),
            side_b=_show(b["cpu.microcode"]),
        )
    ]


@rule("cpu.sockets", "cpu.cores_per_socket", "cpu.threads_per_core", "cpu.online", "cpu.processors")
def cpu_topology(a: dict, b: dict) -> list[Verdict]:
    """The same number of CPUs, laid out differently (the count itself has its own rule)."""
    keys = ["cpu.sockets", "cpu.cores_per_socket", "cpu.threads_per_core"]
    if _differs("cpu.count", a, b) or not any(_differs(k, a, b) for k in keys):
        return []

    def layout(facts):
        return " × ".join(f"{_show(facts.get(k))} {k.rsplit('.', 1)[1]}" for k in keys)

    return [
        Verdict(
            rule="cpu_topology",
            severity=Severity.MEDIUM,
            title="The same number of CPUs is laid out differently",
            explanation=(
                "Sockets, cores and hyper-threads are not equal: two threads of one core share "
                "its execution units, and CPUs on two sockets share no cache."
            ),
            recommendation="Compare like for like, or pin the service to one socket's cores.",
            side_a=layout(a),
            side_b=layout(b),
        )
    ]


@rule("cpu.mhz.scaling_max")
def frequency_cap(a: dict, b: dict) -> list[Verdict]:
    if _differs("cpu.model", a, b) or not _differs("cpu.mhz.scaling_max", a, b):
        return []
    return [
        Verdict(
            rule="frequency_cap",
            severity=Severity.MEDIUM,
            title="The highest allowed CPU frequency differs on the same CPU model",
            explanation=(
                "scaling_max_freq caps the clock below what the CPU can do: a power or thermal "
                "policy, or a hand-made setting, slows one side."
            ),
            recommendation="Compare cpupower frequency-info on both sides and lift the cap.",
            side_a=f"{_show(a['cpu.mhz.scaling_max'])} MHz",
            side_b=f"{_show(b['cpu.mhz.scaling_max'])} MHz",
        )
    ]


_simple(
    "cpu.count",
    "cpu_count",
    Severity.MEDIUM,
    "The sides have different numbers of CPUs",
    "More CPUs are not always faster: an application that does not scale to them spends the "
    "extra cores on lock contention (futex, spin-unlock hot in profiles) and runs thousands "
    "of threads, and can be slower on the bigger machine.",
    "Compare like for like, or right-size the bigger side (fewer vCPUs, or CPU pinning).",
)
_simple(
    "virt.type",
    "virtualisation",
    Severity.MEDIUM,
    "The sides run on different virtualisation",
    "A hypervisor adds overhead to CPU and memory access, and a busy host steals time from its "
    "guests (the 'st' column of vmstat).",
    "Compare steal time on both sides; for latency-critical work prefer bare metal or "
    "dedicated hosts.",
)
_simple(
    "virt.container",
    "container",
    Severity.LOW,
    "One side runs in a container",
    "Containers share the host's kernel; their CPU and memory limits, and how their CPUs are "
    "scheduled across the host's cores, decide their speed.",
    "Compare the service's cgroup limits and throttling on both sides.",
)
_simple(
    "cpu.scaling_driver",
    "scaling_driver",
    Severity.LOW,
    "CPU frequency scaling drivers differ",
    "intel_pstate and acpi-cpufreq (or a hypervisor's driver) pick frequencies differently, "
    "even with the same governor.",
    "Compare `cpupower frequency-info` on both sides.",
    also_covers=("cpu.intel_pstate",),
)
_simple(
    "numa.nodes",
    "numa_nodes",
    Severity.MEDIUM,
    "NUMA layouts differ",
    "On a machine with several NUMA nodes, memory on another node costs more to reach; a "
    "process spread across nodes runs slower than on a single-node machine.",
    "Pin the service to one node (numactl, cpuset) or compare machines with the same layout.",
    also_covers=("numa.node*",),
)
_simple(
    "numa.balancing",
    "numa_balancing",
    Severity.LOW,
    "Automatic NUMA balancing differs",
    "NUMA balancing migrates pages and tasks between nodes; it helps some workloads and costs "
    "others page faults.",
    "Align kernel.numa_balancing on both sides.",
)
_simple(
    "tuned.profile",
    "tuned_profile",
    Severity.MEDIUM,
    "tuned profiles differ",
    "A tuned profile sets the governor, energy bias, THP and many sysctls at once: different "
    "profiles usually mean different CPU clocks and latencies.",
    "Use the same profile on both sides (throughput-performance or latency-performance).",
)
_simple(
    "mm.swappiness",
    "swappiness",
    Severity.LOW,
    "vm.swappiness differs",
    "A higher swappiness swaps out anonymous memory sooner, which can add page faults under "
    "memory pressure.",
    "Align vm.swappiness on both sides.",
)
_simple(
    "cpu.smt",
    "smt",
    Severity.MEDIUM,
    "Simultaneous multithreading is set differently",
    "With SMT off, each core runs one thread: fewer logical CPUs, but no sibling contention.",
    "Align SMT on both sides before comparing.",
)
_simple(
    "cpu.idle_driver",
    "idle_driver",
    Severity.LOW,
    "CPU idle drivers differ",
    "Deep idle states save power but take longer to wake from, adding latency to bursts.",
    "Compare the C-states allowed (intel_idle.max_cstate, processor.max_cstate).",
)
_simple(
    "service.jvm_options",
    "jvm_options",
    Severity.MEDIUM,
    "The service's JVM options differ",
    "Heap size, garbage collector and their tuning flags change throughput and pause times.",
    "Run the same start-up flags on both sides.",
)


@rule("cpu.vulnerabilities.*")
def vulnerabilities(a: dict, b: dict) -> list[Verdict]:
    keys = sorted(
        k for k in set(a) & set(b) if k.startswith("cpu.vulnerabilities.") and _differs(k, a, b)
    )
    if not keys:
        return []
    names = ", ".join(k.rsplit(".", 1)[1] for k in keys)
    return [
        Verdict(
            rule="vulnerabilities",
            severity=Severity.MEDIUM,
            title=f"CPU vulnerability mitigations differ ({names})",
            explanation=(
                "The kernels report different states for these CPU vulnerabilities: one side "
                "pays for a mitigation the other does not (or its CPU is not affected). "
                "Mitigations slow system calls, context switches and small-packet networking."
            ),
            recommendation=(
                "Compare /sys/devices/system/cpu/vulnerabilities on both sides and the kernel "
                "command line; align kernel and microcode."
            ),
            side_a="\n".join(f"{k.rsplit('.', 1)[1]}: {a.get(k, 'not reported')}" for k in keys),
            side_b="\n".join(f"{k.rsplit('.', 1)[1]}: {b.get(k, 'not reported')}" for k in keys),
        )
    ]


_SLOW_CLOCKSOURCES = {"hpet", "acpi_pm", "jiffies"}


@rule("clocksource.current")
def clocksource(a: dict, b: dict) -> list[Verdict]:
    ca, cb = a.get("clocksource.current"), b.get("clocksource.current")
    if not _differs("clocksource.current", a, b):
        return []
    slow = {ca, cb} & _SLOW_CLOCKSOURCES
    return [
        Verdict(
            rule="clocksource",
            severity=Severity.HIGH if slow else Severity.MEDIUM,
            title="Clock sources differ"
            + (f" ({', '.join(sorted(slow))} is slow)" if slow else ""),
            explanation=(
                "Every timestamp an application takes reads the clock source. 'tsc' is read "
                "without leaving user space; hpet and acpi_pm need a system call and an I/O "
                "access, which makes time-heavy code (logging, tracing, JVMs) much slower."
            ),
            recommendation=(
                "Prefer tsc where it is stable (constant_tsc, nonstop_tsc flags), or kvm-clock "
                "in KVM guests; set clocksource= on the kernel command line."
            ),
            side_a=_show(ca),
            side_b=_show(cb),
        )
    ]


@rule("service.cgroup.cpu_quota", "service.cgroup.cpuset", "service.cgroup.throttled_ratio")
def cgroup_cpu(a: dict, b: dict) -> list[Verdict]:
    verdicts = []
    for key, label in (
        ("service.cgroup.cpu_quota", "CPU quota"),
        ("service.cgroup.cpuset", "CPU set"),
    ):
        if _differs(key, a, b):
            verdicts.append(
                Verdict(
                    rule="cgroup_cpu_limit",
                    subject=key,
                    severity=Severity.HIGH,
                    title=f"The service's cgroup {label} differs",
                    explanation=(
                        "The service is limited to a different amount of CPU, or to different "
                        "cores, on the two sides. A quota caps it; a cpuset spread over many "
                        "host cores costs cache locality and shows as low user CPU with high "
                        "futex time."
                    ),
                    recommendation=(
                        "Give both sides the same limits; for latency-critical pods use the "
                        "kubelet static CPU manager (pinned, exclusive cores)."
                    ),
                    side_a=_show(a[key]),
                    side_b=_show(b[key]),
                )
            )
    ratio = "service.cgroup.throttled_ratio"
    ra, rb = a.get(ratio, 0) or 0, b.get(ratio, 0) or 0
    if max(ra, rb) >= 0.05 and abs(ra - rb) >= 0.05:
        side = "A" if ra > rb else "B"
        verdicts.append(
            Verdict(
                rule="cgroup_throttling",
                severity=Severity.HIGH,
                title=f"The service is CPU-throttled on side {side}",
                explanation=(
                    "The cgroup's CPU quota ran out in a share of its scheduling periods: the "
                    "service was stopped until the next period, which shows as latency spikes "
                    "even when average CPU use looks low."
                ),
                recommendation="Raise or remove the CPU limit (keep the request), or pin cores.",
                side_a=f"{ra:.1%} of periods throttled",
                side_b=f"{rb:.1%} of periods throttled",
            )
        )
    return verdicts


def _nic_summary(facts: dict) -> dict[str, tuple]:
    names = str(facts.get("net.interfaces", "")).split()
    return {
        name: tuple(facts.get(f"net.if.{name}.{field}") for field in ("rx_queues", "tx_queues"))
        for name in names
        if facts.get(f"net.if.{name}.state", "up") == "up"
    }


@rule("net.if.*.rx_queues", "net.if.*.tx_queues")
def nic_queues(a: dict, b: dict) -> list[Verdict]:
    qa, qb = _nic_summary(a), _nic_summary(b)
    if not qa or not qb:
        return []
    most_a = max((sum(q for q in queues if q) for queues in qa.values()), default=0)
    most_b = max((sum(q for q in queues if q) for queues in qb.values()), default=0)
    if most_a == most_b:
        return []
    return [
        Verdict(
            rule="nic_queues",
            severity=Severity.MEDIUM,
            title="Network interfaces have different numbers of queues",
            explanation=(
                "With fewer receive and transmit queues, packet processing lands on fewer "
                "cores; at high packet rates one core saturates in softirq while others idle."
            ),
            recommendation=(
                "Compare `ethtool -l`, raise the channel count (`ethtool -L <if> combined N`) "
                "and check IRQ affinity (irqbalance)."
            ),
            side_a=", ".join(f"{n}: rx {q[0]}, tx {q[1]}" for n, q in sorted(qa.items())),
            side_b=", ".join(f"{n}: rx {q[0]}, tx {q[1]}" for n, q in sorted(qb.items())),
        )
    ]


def _covered(key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, cover) for function in RULES for cover in function.covers)


def generic_differences(a: dict, b: dict) -> list[Verdict]:
    """Every other non-volatile difference, one finding each, below the named ones."""
    return [
        Verdict(
            rule="fact_differs",
            subject=row.key,
            severity=Severity.INFO,
            title=f"{row.key} differs",
            explanation="No named rule covers this fact, but the two sides disagree on it.",
            recommendation="Check whether the difference is intended.",
            side_a=_show(row.a),
            side_b=_show(row.b),
        )
        for row in diff_facts(a, b)
        if row.kind == DIFFERS and not _covered(row.key)
    ]


def evaluate(a: dict, b: dict) -> list[Verdict]:
    """All verdicts for one host pair, most severe first."""
    verdicts = [verdict for function in RULES for verdict in function(a, b)]
    verdicts += generic_differences(a, b)
    return sorted(verdicts, key=lambda v: Severity.rank(v.severity))
