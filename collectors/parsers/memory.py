"""Memory size, huge pages, THP and the vm sysctls."""

from collectors.parsers.common import basename, path_values, selected

_MEMINFO = {
    "MemTotal": "mem.total_kb",
    "MemAvailable": "mem.available_kb",
    "SwapTotal": "swap.total_kb",
    "HugePages_Total": "hugepages.total",
    "Hugepagesize": "hugepages.size_kb",
}

_VM_SYSCTLS = {
    "swappiness": "mm.swappiness",
    "overcommit_memory": "mm.overcommit_memory",
    "zone_reclaim_mode": "mm.zone_reclaim_mode",
    "dirty_ratio": "mm.dirty_ratio",
    "dirty_background_ratio": "mm.dirty_background_ratio",
    "numa_balancing": "numa.balancing",
    "sched_autogroup_enabled": "kernel.sched_autogroup",
}


def parse_meminfo(text: str, **_) -> dict:
    facts = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key in _MEMINFO:
            facts[_MEMINFO[key]] = int(value.split()[0])
    if "mem.total_kb" not in facts:
        raise ValueError("no MemTotal")
    return facts


def parse_thp(text: str, **_) -> dict:
    values = {basename(path): value for path, value in path_values(text).items()}
    if "enabled" not in values:
        raise ValueError("no THP setting")
    facts = {"mm.thp.enabled": selected(values["enabled"])}
    if "defrag" in values:
        facts["mm.thp.defrag"] = selected(values["defrag"])
    return facts


def parse_vm_sysctls(text: str, **_) -> dict:
    facts = {}
    for path, value in path_values(text).items():
        name = _VM_SYSCTLS.get(basename(path))
        if name:
            facts[name] = int(value) if value.lstrip("-").isdigit() else value
    return facts
