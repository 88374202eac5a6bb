"""The named rules, in the order they run.

The order is kept from when all rules lived in one module: evaluate() sorts verdicts by
severity with a stable sort, so among equally severe findings this order is the order shown.
"""

from investigations.analysis.rules import cgroup, cpu, kernel, memory, network, service
from investigations.analysis.rules import virtualisation as virt

RULES = [
    cpu.governor,
    cpu.clock_at_minimum,
    cpu.cpu_boost,
    memory.thp_enabled,
    memory.thp_defrag,
    kernel.mitigation_switches,
    kernel.kernel_release,
    cpu.cpu_model,
    cpu.microcode,
    cpu.cpu_topology,
    cpu.frequency_cap,
    cpu.cpu_count,
    virt.virtualisation,
    virt.container,
    cpu.scaling_driver,
    memory.numa_nodes,
    memory.numa_balancing,
    kernel.tuned_profile,
    memory.swappiness,
    cpu.smt,
    cpu.idle_driver,
    service.jvm_options,
    cpu.vulnerabilities,
    kernel.clocksource,
    cgroup.cgroup_cpu,
    network.nic_queues,
]
