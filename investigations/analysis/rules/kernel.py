"""Rules about the kernel: its release, how it was booted and tuned, the clock it reads."""

from django.utils.translation import gettext_noop as _

from collectors.phrase import Phrase
from investigations.analysis.rules.base import Verdict, differs, rule, show, simple_rule
from investigations.choices import FindingSeverity as Severity

mitigation_switches = simple_rule(
    "kernel.mitigation_switches",
    "mitigation_switches",
    Severity.HIGH,
    _("CPU vulnerability mitigations are switched differently on the kernel command line"),
    _(
        "Mitigations such as page-table isolation and retpolines make every system call and "
        "context switch dearer. A side booted with mitigations=off (or nopti, spectre_v2=off) "
        "does small-packet networking and syscall-heavy work noticeably faster."
    ),
    _(
        "Decide deliberately: turn mitigations off only where no untrusted code runs, and then "
        "on both sides. Otherwise compare with the same mitigations on."
    ),
    root_cause="cpu-vulnerability-mitigations",
)
kernel_release = simple_rule(
    "kernel.release",
    "kernel_release",
    Severity.MEDIUM,
    _("Kernel releases differ"),
    _(
        "Kernels differ in the network stack, the scheduler and default mitigations; an old kernel "
        "has been seen to cut small-packet TCP throughput and raise latency markedly."
    ),
    _("Run the same kernel on both sides, or measure the effect of the upgrade in isolation."),
    root_cause="old-kernel",
)
tuned_profile = simple_rule(
    "tuned.profile",
    "tuned_profile",
    Severity.MEDIUM,
    _("tuned profiles differ"),
    _(
        "A tuned profile sets the governor, energy bias, THP and many sysctls at once: different "
        "profiles usually mean different CPU clocks and latencies."
    ),
    _("Use the same profile on both sides (throughput-performance or latency-performance)."),
    root_cause="cpu-governor-powersave",
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
            root_cause="slow-clocksource",
            severity=Severity.HIGH if slow else Severity.MEDIUM,
            title=Phrase(_("Clock sources differ (%(slow)s is slow)"), slow=", ".join(sorted(slow)))
            if slow
            else Phrase(_("Clock sources differ")),
            explanation=Phrase(
                _(
                    "Every timestamp an application takes reads the clock source. 'tsc' is "
                    "read without leaving user space; hpet and acpi_pm need a system call and "
                    "an I/O access, which makes time-heavy code (logging, tracing, JVMs) much "
                    "slower."
                )
            ),
            recommendation=Phrase(
                _(
                    "Prefer tsc where it is stable (constant_tsc, nonstop_tsc flags), or "
                    "kvm-clock in KVM guests; set clocksource= on the kernel command line."
                )
            ),
            side_a=show(ca),
            side_b=show(cb),
        )
    ]
