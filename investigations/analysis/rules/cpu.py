"""Rules about the processor: its model and layout, its clock and what governs it."""

from django.utils.translation import gettext_noop as _

from collectors.phrase import Phrase
from investigations.analysis.rules.base import Verdict, differs, rule, show, simple_rule
from investigations.choices import FindingSeverity as Severity


@rule("cpu.governor", "cpu.governor_uniform", "cpu.governors")
def governor(a: dict, b: dict) -> list[Verdict]:
    ga, gb = a.get("cpu.governor"), b.get("cpu.governor")
    slow = [side for side, g in (("A", ga), ("B", gb)) if g not in (None, "performance")]
    if not slow:
        return []
    both = len(slow) == 2
    if both and ga != gb:
        title = Phrase(
            _("CPU frequency governor is '%(a)s' on side A and '%(b)s' on side B"), a=ga, b=gb
        )
    elif both:
        title = Phrase(_("CPU frequency governor is '%(governor)s' on both sides"), governor=ga)
    else:
        title = Phrase(
            _("CPU frequency governor is '%(governor)s' on side %(side)s"),
            governor=ga if slow[0] == "A" else gb,
            side=slow[0],
        )
    explanation = (
        _(
            "A governor other than 'performance' lets the kernel lower the CPU clock when it "
            "thinks the machine is idle, and raise it late under load. On the same hardware "
            "this alone can halve throughput of CPU-bound work and stretch garbage-collection "
            "pauses."
        )
        if both
        else _(
            "A governor other than 'performance' lets the kernel lower the CPU clock when it "
            "thinks the machine is idle, and raise it late under load. On the same hardware "
            "this alone can halve throughput of CPU-bound work and stretch garbage-collection "
            "pauses. The two sides differ here, which makes it a prime suspect."
        )
    )
    return [
        Verdict(
            rule="cpu_governor",
            root_cause="cpu-governor-powersave",
            severity=Severity.MEDIUM if both and ga == gb else Severity.HIGH,
            title=title,
            explanation=Phrase(explanation),
            recommendation=Phrase(
                _(
                    "Set it with `cpupower frequency-set -g performance`, and make it survive "
                    "reboots with a tuned profile (throughput-performance or "
                    "latency-performance). Add an alert on the governor (node_exporter exports "
                    "node_cpu_scaling_governor) so that it cannot come back unseen."
                )
            ),
            side_a=show(a.get("cpu.governors") if ga == "mixed" else ga),
            side_b=show(b.get("cpu.governors") if gb == "mixed" else gb),
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
            root_cause="cpu-governor-powersave",
            severity=Severity.MEDIUM,
            title=Phrase(_("CPU clock sits near its minimum on side %(side)s"), side=slow[0]),
            explanation=Phrase(
                _(
                    "The current frequency is close to the lowest the CPU can run at, while the "
                    "other side runs faster. With a power-saving governor, or power limits in "
                    "the firmware, the cores stay slow."
                )
            ),
            recommendation=Phrase(
                _("Check the governor and the BIOS power profile (set it to performance).")
            ),
            side_a=f"{show(a.get('cpu.mhz.current'))} MHz (min {show(a.get('cpu.mhz.min'))})",
            side_b=f"{show(b.get('cpu.mhz.current'))} MHz (min {show(b.get('cpu.mhz.min'))})",
        )
    ]


cpu_boost = simple_rule(
    "cpu.boost",
    "cpu_boost",
    Severity.MEDIUM,
    _("CPU turbo boost differs"),
    _(
        "With boost off, cores stay at their base clock: single-threaded and latency-bound work "
        "runs slower by the ratio of boost to base frequency."
    ),
    _(
        "Enable boost in the BIOS or through /sys/devices/system/cpu/cpufreq/boost "
        "(intel_pstate/no_turbo on Intel), unless predictable clocks matter more here."
    ),
    root_cause="cpu-governor-powersave",
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
    if not differs("cpu.model", a, b):
        return []
    return [
        Verdict(
            rule="cpu_model",
            root_cause="cpu-model-mismatch",
            severity=Severity.HIGH,
            title=Phrase(_("CPU models differ")),
            explanation=Phrase(
                _(
                    "The same instance type or size can come with different CPU generations; a "
                    "spread of 5 to 20 percent between 'identical' machines is common, more for "
                    "older models."
                )
            ),
            recommendation=Phrase(
                _(
                    "Pin the instance family or hardware model, and check it when machines are "
                    "provisioned."
                )
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
    return f"{show(facts.get('cpu.model'))}{clock}"


@rule("cpu.microcode")
def microcode(a: dict, b: dict) -> list[Verdict]:
    """Only meaningful on the same CPU model: different models have different microcode."""
    if differs("cpu.model", a, b) or not differs("cpu.microcode", a, b):
        return []
    return [
        Verdict(
            rule="microcode",
            root_cause="cpu-model-mismatch",
            severity=Severity.LOW,
            title=Phrase(_("CPU microcode versions differ on the same CPU model")),
            explanation=Phrase(
                _(
                    "Microcode updates change which vulnerability mitigations the CPU offers "
                    "and can change performance of branch-heavy and syscall-heavy work."
                )
            ),
            recommendation=Phrase(
                _("Update the microcode (intel-microcode / amd64-microcode, or the BIOS).")
            ),
            side_a=show(a["cpu.microcode"]),
            side_b=show(b["cpu.microcode"]),
        )
    ]


@rule("cpu.sockets", "cpu.cores_per_socket", "cpu.threads_per_core", "cpu.online", "cpu.processors")
def cpu_topology(a: dict, b: dict) -> list[Verdict]:
    """The same number of CPUs, laid out differently (the count itself has its own rule)."""
    keys = ["cpu.sockets", "cpu.cores_per_socket", "cpu.threads_per_core"]
    if differs("cpu.count", a, b) or not any(differs(k, a, b) for k in keys):
        return []

    def layout(facts):
        return " × ".join(f"{show(facts.get(k))} {k.rsplit('.', 1)[1]}" for k in keys)

    return [
        Verdict(
            rule="cpu_topology",
            severity=Severity.MEDIUM,
            title=Phrase(_("The same number of CPUs is laid out differently")),
            explanation=Phrase(
                _(
                    "Sockets, cores and hyper-threads are not equal: two threads of one core "
                    "share its execution units, and CPUs on two sockets share no cache."
                )
            ),
            recommendation=Phrase(
                _("Compare like for like, or pin the service to one socket's cores.")
            ),
            side_a=layout(a),
            side_b=layout(b),
        )
    ]


@rule("cpu.mhz.scaling_max")
def frequency_cap(a: dict, b: dict) -> list[Verdict]:
    if differs("cpu.model", a, b) or not differs("cpu.mhz.scaling_max", a, b):
        return []
    return [
        Verdict(
            rule="frequency_cap",
            root_cause="cpu-governor-powersave",
            severity=Severity.MEDIUM,
            title=Phrase(_("The highest allowed CPU frequency differs on the same CPU model")),
            explanation=Phrase(
                _(
                    "scaling_max_freq caps the clock below what the CPU can do: a power or "
                    "thermal policy, or a hand-made setting, slows one side."
                )
            ),
            recommendation=Phrase(
                _("Compare cpupower frequency-info on both sides and lift the cap.")
            ),
            side_a=f"{show(a['cpu.mhz.scaling_max'])} MHz",
            side_b=f"{show(b['cpu.mhz.scaling_max'])} MHz",
        )
    ]


cpu_count = simple_rule(
    "cpu.count",
    "cpu_count",
    Severity.MEDIUM,
    _("The sides have different numbers of CPUs"),
    _(
        "More CPUs are not always faster: an application that does not scale to them spends the "
        "extra cores on lock contention (futex, spin-unlock hot in profiles) and runs thousands "
        "of threads, and can be slower on the bigger machine."
    ),
    _("Compare like for like, or right-size the bigger side (fewer vCPUs, or CPU pinning)."),
    root_cause="too-many-vcpus",
)
scaling_driver = simple_rule(
    "cpu.scaling_driver",
    "scaling_driver",
    Severity.LOW,
    _("CPU frequency scaling drivers differ"),
    _(
        "intel_pstate and acpi-cpufreq (or a hypervisor's driver) pick frequencies differently, "
        "even with the same governor."
    ),
    _("Compare `cpupower frequency-info` on both sides."),
    also_covers=("cpu.intel_pstate",),
    root_cause="cpu-governor-powersave",
)
smt = simple_rule(
    "cpu.smt",
    "smt",
    Severity.MEDIUM,
    _("Simultaneous multithreading is set differently"),
    _("With SMT off, each core runs one thread: fewer logical CPUs, but no sibling contention."),
    _("Align SMT on both sides before comparing."),
)
idle_driver = simple_rule(
    "cpu.idle_driver",
    "idle_driver",
    Severity.LOW,
    _("CPU idle drivers differ"),
    _("Deep idle states save power but take longer to wake from, adding latency to bursts."),
    _("Compare the C-states allowed (intel_idle.max_cstate, processor.max_cstate)."),
    root_cause="cpu-governor-powersave",
)


@rule("cpu.vulnerabilities.*")
def vulnerabilities(a: dict, b: dict) -> list[Verdict]:
    keys = sorted(
        k for k in set(a) & set(b) if k.startswith("cpu.vulnerabilities.") and differs(k, a, b)
    )
    if not keys:
        return []
    names = ", ".join(k.rsplit(".", 1)[1] for k in keys)
    return [
        Verdict(
            rule="vulnerabilities",
            root_cause="cpu-vulnerability-mitigations",
            severity=Severity.MEDIUM,
            title=Phrase(_("CPU vulnerability mitigations differ (%(names)s)"), names=names),
            explanation=Phrase(
                _(
                    "The kernels report different states for these CPU vulnerabilities: one "
                    "side pays for a mitigation the other does not (or its CPU is not "
                    "affected). Mitigations slow system calls, context switches and "
                    "small-packet networking."
                )
            ),
            recommendation=Phrase(
                _(
                    "Compare /sys/devices/system/cpu/vulnerabilities on both sides and the "
                    "kernel command line; align kernel and microcode."
                )
            ),
            side_a="\n".join(f"{k.rsplit('.', 1)[1]}: {a.get(k, 'not reported')}" for k in keys),
            side_b="\n".join(f"{k.rsplit('.', 1)[1]}: {b.get(k, 'not reported')}" for k in keys),
        )
    ]
