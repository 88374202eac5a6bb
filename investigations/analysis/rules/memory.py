"""Rules about memory: huge pages, NUMA placement and swapping."""

from investigations.analysis.rules.base import simple_rule
from investigations.choices import FindingSeverity as Severity

thp_enabled = simple_rule(
    "mm.thp.enabled",
    "thp_enabled",
    Severity.MEDIUM,
    "Transparent huge pages are set differently",
    "THP 'always' backs large heaps with 2 MB pages, which helps a JVM or other large-heap "
    "process through fewer TLB misses, but can add latency spikes to allocators such as "
    "Redis' or those of databases that advise against it.",
    "Choose per workload, the same on both sides: /sys/kernel/mm/transparent_hugepage/enabled "
    "(or transparent_hugepage= on the kernel command line to keep it across reboots).",
)
thp_defrag = simple_rule(
    "mm.thp.defrag",
    "thp_defrag",
    Severity.LOW,
    "Transparent huge page defragmentation is set differently",
    "With 'always', page faults may stall while the kernel compacts memory for huge pages.",
    "Align /sys/kernel/mm/transparent_hugepage/defrag on both sides (madvise is a safe default).",
)
numa_nodes = simple_rule(
    "numa.nodes",
    "numa_nodes",
    Severity.MEDIUM,
    "NUMA layouts differ",
    "On a machine with several NUMA nodes, memory on another node costs more to reach; a "
    "process spread across nodes runs slower than on a single-node machine.",
    "Pin the service to one node (numactl, cpuset) or compare machines with the same layout.",
    also_covers=("numa.node*",),
)
numa_balancing = simple_rule(
    "numa.balancing",
    "numa_balancing",
    Severity.LOW,
    "Automatic NUMA balancing differs",
    "NUMA balancing migrates pages and tasks between nodes; it helps some workloads and costs "
    "others page faults.",
    "Align kernel.numa_balancing on both sides.",
)
swappiness = simple_rule(
    "mm.swappiness",
    "swappiness",
    Severity.LOW,
    "vm.swappiness differs",
    "A higher swappiness swaps out anonymous memory sooner, which can add page faults under "
    "memory pressure.",
    "Align vm.swappiness on both sides.",
)
