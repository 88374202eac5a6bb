"""Rules about the kernel: its release, how it was booted and tuned, the clock it reads."""

from investigations.analysis.rules.base import Verdict, differs, rule, show, simple_rule
from investigations.choices import FindingSeverity as Severity

mitigation_switches = simple_rule(
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
kernel_release = simple_rule(
    "kernel.release",
    "kernel_release",
    Severity.MEDIUM,
    "Kernel releases differ",
    "Kernels differ in the network stack, the scheduler and default mitigations; an old kernel "
    "has been seen to cut small-packet TCP throughput and raise latency markedly.",
    "Run the same kernel on both sides, or measure the effect of the upgrade in isolation.",
)
tuned_profile = simple_rule(
    "tuned.profile",
    "tuned_profile",
    Severity.MEDIUM,
    "tuned profiles differ",
    "A tuned profile sets the governor, energy bias, THP and many sysctls at once: different "
    "profiles usually mean different CPU clocks and latencies.",
    "Use the same profile on both sides (throughput-performance or latency-performance).",
)

_SLOW_CLOCKSOURCES = {"hpet", "acpi_pm", "jiffies"}


@rule("clocksource.current")
def clocksource(a: dict, b: dict) -> list[Verdict]:
    ca, cb = a.get("clocksource.current"), b.get("clocksource.current")
    if not differs("clocksource.current", a, b):
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
            side_a=show(ca),
            side_b=show(cb),
        )
    ]
