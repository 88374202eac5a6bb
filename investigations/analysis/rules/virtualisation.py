"""Rules about what the host runs on: a hypervisor, a container."""

from investigations.analysis.rules.base import simple_rule
from investigations.choices import FindingSeverity as Severity

virtualisation = simple_rule(
    "virt.type",
    "virtualisation",
    Severity.MEDIUM,
    "The sides run on different virtualisation",
    "A hypervisor adds overhead to CPU and memory access, and a busy host steals time from its "
    "guests (the 'st' column of vmstat).",
    "Compare steal time on both sides; for latency-critical work prefer bare metal or "
    "dedicated hosts.",
)
container = simple_rule(
    "virt.container",
    "container",
    Severity.LOW,
    "One side runs in a container",
    "Containers share the host's kernel; their CPU and memory limits, and how their CPUs are "
    "scheduled across the host's cores, decide their speed.",
    "Compare the service's cgroup limits and throttling on both sides.",
)
