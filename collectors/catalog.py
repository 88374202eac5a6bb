"""What the fact keys mean for a comparison: their category, whether they always differ
between machines (volatile), and how close two numbers must be to count as equal."""

import fnmatch
import re

from collectors.phrase import gettext_noop as _

# First matching prefix wins. The names are shown as headings, translated where shown.
CATEGORIES = [
    ("cpu.vulnerabilities.", _("Vulnerabilities")),
    ("kernel.mitigation", _("Vulnerabilities")),
    ("cpu.", _("CPU")),
    ("numa.", _("Memory and NUMA")),
    ("mem.", _("Memory and NUMA")),
    ("swap.", _("Memory and NUMA")),
    ("hugepages.", _("Memory and NUMA")),
    ("mm.", _("Memory and NUMA")),
    ("kernel.", _("System")),
    ("os.", _("System")),
    ("system.", _("System")),
    ("virt.", _("Virtualisation")),
    ("dmi.", _("Virtualisation")),
    ("cgroup.", _("Virtualisation")),
    ("clocksource.", _("Clock")),
    ("net.", _("Network")),
    ("storage.", _("Storage")),
    ("limits.", _("Limits")),
    ("service.", _("Service")),
    ("tuned.", _("Tuning")),
    ("irqbalance.", _("Tuning")),
    ("tools.", _("Tools and access")),
    ("access.", _("Tools and access")),
]
CATEGORY_ORDER = list(dict.fromkeys(category for _prefix, category in CATEGORIES)) + [_("Other")]

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


def glob_matcher(patterns):
    """One compiled test for "the key matches any of these fnmatch patterns": the rules ask
    it of every fact of every host pair, so a loop of fnmatch calls would dominate them."""
    if not patterns:
        return lambda key: False
    match = re.compile("|".join(fnmatch.translate(pattern) for pattern in patterns)).match
    return lambda key: match(key) is not None


_VOLATILE = glob_matcher(VOLATILE)
_TOLERANCE = [(glob_matcher([pattern]), tolerance) for pattern, tolerance in TOLERANCE.items()]


def category_of(key: str) -> str:
    for prefix, category in CATEGORIES:
        if key.startswith(prefix):
            return category
    return CATEGORY_ORDER[-1]


def is_volatile(key: str) -> bool:
    return _VOLATILE(key)


def tolerance_of(key: str) -> float:
    for matches, tolerance in _TOLERANCE:
        if matches(key):
            return tolerance
    return 0.0
