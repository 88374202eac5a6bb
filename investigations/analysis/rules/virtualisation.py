"""Rules about what the host runs on: a hypervisor, a container."""

from django.utils.translation import gettext_noop as _

from investigations.analysis.rules.base import simple_rule
from investigations.choices import FindingSeverity as Severity

virtualisation = simple_rule(
    "virt.type",
    "virtualisation",
    Severity.MEDIUM,
    _("The sides run on different virtualisation"),
    _(
        "A hypervisor adds overhead to CPU and memory access, and a busy host steals time from its "
        "guests (the 'st' column of vmstat)."
    ),
    _(
        "Compare steal time on both sides; for latency-critical work prefer bare metal or "
        "dedicated hosts."
    ),
    root_cause="hypervisor-overhead",
)
container = simple_rule(
    "virt.container",
    "container",
    Severity.LOW,
    _("One side runs in a container"),
    _(
        "Containers share the host's kernel; their CPU and memory limits, and how their CPUs are "
        "scheduled across the host's cores, decide their speed."
    ),
    _("Compare the service's cgroup limits and throttling on both sides."),
    root_cause="container-cpus-spread",
)
