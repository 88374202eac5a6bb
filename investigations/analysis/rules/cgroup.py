"""Rules about the service's cgroup: the CPU it may use, and how often it ran out."""

from django.utils.translation import gettext_noop as _

from collectors.phrase import Phrase
from investigations.analysis.rules.base import Verdict, differs, rule, show
from investigations.choices import FindingSeverity as Severity


@rule("service.cgroup.cpu_quota", "service.cgroup.cpuset", "service.cgroup.throttled_ratio")
def cgroup_cpu(a: dict, b: dict) -> list[Verdict]:
    verdicts = []
    for key, title in (
        ("service.cgroup.cpu_quota", _("The service's cgroup CPU quota differs")),
        ("service.cgroup.cpuset", _("The service's cgroup CPU set differs")),
    ):
        if differs(key, a, b):
            verdicts.append(
                Verdict(
                    rule="cgroup_cpu_limit",
                    root_cause="cgroup-cpu-throttling",
                    subject=key,
                    severity=Severity.HIGH,
                    title=Phrase(title),
                    explanation=Phrase(
                        _(
                            "The service is limited to a different amount of CPU, or to "
                            "different cores, on the two sides. A quota caps it; a cpuset "
                            "spread over many host cores costs cache locality and shows as low "
                            "user CPU with high futex time."
                        )
                    ),
                    recommendation=Phrase(
                        _(
                            "Give both sides the same limits; for latency-critical pods use "
                            "the kubelet static CPU manager (pinned, exclusive cores)."
                        )
                    ),
                    side_a=show(a[key]),
                    side_b=show(b[key]),
                )
            )
    ratio = "service.cgroup.throttled_ratio"
    ra, rb = a.get(ratio, 0) or 0, b.get(ratio, 0) or 0
    if max(ra, rb) >= 0.05 and abs(ra - rb) >= 0.05:
        side = "A" if ra > rb else "B"
        verdicts.append(
            Verdict(
                rule="cgroup_throttling",
                root_cause="cgroup-cpu-throttling",
                severity=Severity.HIGH,
                title=Phrase(_("The service is CPU-throttled on side %(side)s"), side=side),
                explanation=Phrase(
                    _(
                        "The cgroup's CPU quota ran out in a share of its scheduling periods: "
                        "the service was stopped until the next period, which shows as latency "
                        "spikes even when average CPU use looks low."
                    )
                ),
                recommendation=Phrase(
                    _("Raise or remove the CPU limit (keep the request), or pin cores.")
                ),
                side_a=f"{ra:.1%} of periods throttled",
                side_b=f"{rb:.1%} of periods throttled",
            )
        )
    return verdicts
