"""What the fact keys mean for a comparison: their category, whether they always differ
between machines (volatile), and how close two numbers must be to count as equal."""

import fnmatch

# First matching prefix wins.
CATEGORIES = [
    ("cpu.vulnerabilities.", "Vulnerabilities"),
    ("kernel.mitigation", "Vulnerabilities"),
    ("cpu.", "CPU"),
    ("numa.", "Memory and NUMA"),
    ("mem.", "Memory and NUMA"),
    ("swap.", "Memory and NUMA"),
    ("hugepages.", "Memory and NUMA"),
    ("mm.", "Memory and NUMA"),
    ("kernel.", "System"),
    ("os.", "System"),
    ("system.", "System"),
    ("virt.", "Virtualisation"),
    ("dmi.", "Virtualisation"),
    ("cgroup.", "Virtualisation"),
    ("clocksource.", "Clock"),
    ("net.", "Network"),
    ("storage.", "Storage"),
    ("limits.", "Limits"),
    ("service.", "Service"),
    ("tuned.", "Tuning"),
    ("irqbalance.", "Tuning"),
    ("tools.", "Tools and access"),
    ("access.", "Tools and access"),
]
CATEGORY_ORDER = list(dict.fromkeys(category for _, category in CATEGORIES)) + ["Other"]

# Facts that differ between any two machines, or from one minute to the next: shown, never
# counted as a difference.
VOLATILE = [
    "system.hostname",
    "system.boot_id",
    "system.uptime_seconds",
    "system.load*",
    "kernel.cmdline",
    "mem.available_kb",
    "service.pid",
    "service.cmdline",
    "service.cgroup.path",
    "service.cgroup.nr_periods",
    "service.cgroup.nr_throttled",
    "service.cgroup.throttled_usec",
    "access.*",
    "tools.*",
    "net.interfaces",
    "storage.mount.*.mount_point",
]

# Relative tolerance for numbers where exact equality means nothing.
TOLERANCE = {
    "cpu.mhz.current": 0.10,
    "mem.total_kb": 0.02,
    "numa.node*.mem_kb": 0.05,
    "storage.*.size_gb": 0.01,
}


def category_of(key: str) -> str:
    for prefix, category in CATEGORIES:
        if key.startswith(prefix):
            return category
    return "Other"


def is_volatile(key: str) -> bool:
    return any(fnmatch.fnmatchcase(key, pattern) for pattern in VOLATILE)


def tolerance_of(key: str) -> float:
    for pattern, tolerance in TOLERANCE.items():
        if fnmatch.fnmatchcase(key, pattern):
            return tolerance
    return 0.0
