"""Pure parsers, one per probe of collectors/probes/facts.sh: text in, {fact key: value} out.

Each takes the probe's output and keyword arguments `request` (the FactsRequest) and
`exit_status`; each raises ValueError (or lets IndexError/KeyError escape) on output it
cannot read, which parse_facts records as unparseable.
"""

import math

from collectors.parsers import cpu, memory, network, service, storage, system

PARSERS = {
    "uname": system.parse_uname,
    "os_release": system.parse_os_release,
    "cmdline": system.parse_cmdline,
    "uptime": system.parse_uptime,
    "access": system.parse_access,
    "virt": system.parse_virt,
    "lscpu": cpu.parse_lscpu,
    "cpuinfo": cpu.parse_cpuinfo,
    "cpu_topology": cpu.parse_cpu_topology,
    "cpufreq": cpu.parse_cpufreq,
    "cpuidle": cpu.parse_cpuidle,
    "vulnerabilities": cpu.parse_vulnerabilities,
    "meminfo": memory.parse_meminfo,
    "thp": memory.parse_thp,
    "vm_sysctls": memory.parse_vm_sysctls,
    "numa": cpu.parse_numa,
    "clocksource": system.parse_clocksource,
    "net_sysctls": network.parse_net_sysctls,
    "net_interfaces": network.parse_net_interfaces,
    "ethtool": network.parse_ethtool,
    "block": storage.parse_block,
    "mounts": storage.parse_mounts,
    "limits": system.parse_limits,
    "tuned": system.parse_tuned,
    "irqbalance": system.parse_irqbalance,
    "tools": system.parse_tools,
    "service": service.parse_service,
}


def finish(facts: dict) -> dict:
    """Whole-snapshot touches once every probe is parsed: interfaces without a driver
    (bridges, veth, ifb) are left out, since every host has its own set of them; numbers
    that are not finite (a `nan` in /proc) are dropped, as JSON cannot hold them."""
    physical = set(str(facts.get("net.interfaces", "")).split())
    if "virt.type" not in facts and "virt.hypervisor_flag" in facts:
        # No systemd-detect-virt and no telling DMI: the CPU flag still says whether a
        # hypervisor is underneath.
        facts["virt.type"] = "unknown-hypervisor" if facts["virt.hypervisor_flag"] else "none"
    return {
        key: value
        for key, value in facts.items()
        if (not key.startswith("net.if.") or key.split(".")[2] in physical)
        and not (isinstance(value, float) and not math.isfinite(value))
    }
