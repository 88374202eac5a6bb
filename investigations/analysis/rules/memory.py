"""Rules about memory: huge pages, NUMA placement and swapping."""

from django.utils.translation import gettext_noop as _

from investigations.analysis.rules.base import simple_rule
from investigations.choices import FindingSeverity as Severity

thp_enabled = simple_rule(
    "mm.thp.enabled",
    "thp_enabled",
    Severity.MEDIUM,
    _("Transparent huge pages are set differently"),
    _(
        "THP 'always' backs large heaps with 2 MB pages, which helps a JVM or other large-heap "
        "process through fewer TLB misses, but can add latency spikes to allocators such as "
        "Redis' or those of databases that advise against it."
    ),
    _(
        "Choose per workload, the same on both sides: /sys/kernel/mm/transparent_hugepage/enabled "
        "(or transparent_hugepage= on the kernel command line to keep it across reboots)."
    ),
    root_cause="transparent-huge-pages",
)
thp_defrag = simple_rule(
    "mm.thp.defrag",
    "thp_defrag",
    Severity.LOW,
    _("Transparent huge page defragmentation is set differently"),
    _("With 'always', page faults may stall while the kernel compacts memory for huge pages."),
    _(
        "Align /sys/kernel/mm/transparent_hugepage/defrag on both sides (madvise is a safe "
        "default)."
    ),
    root_cause="transparent-huge-pages",
)
numa_nodes = simple_rule(
    "numa.nodes",
    "numa_nodes",
    Severity.MEDIUM,
    _("NUMA layouts differ"),
    _(
        "On a machine with several NUMA nodes, memory on another node costs more to reach; a "
        "process spread across nodes runs slower than on a single-node machine."
    ),
    _("Pin the service to one node (numactl, cpuset) or compare machines with the same layout."),
    also_covers=("numa.node*",),
    root_cause="numa-remote-memory",
)
numa_balancing = simple_rule(
    "numa.balancing",
    "numa_balancing",
    Severity.LOW,
    _("Automatic NUMA balancing differs"),
    _(
        "NUMA balancing migrates pages and tasks between nodes; it helps some workloads and costs "
        "others page faults."
    ),
    _("Align kernel.numa_balancing on both sides."),
    root_cause="numa-remote-memory",
)
swappiness = simple_rule(
    "mm.swappiness",
    "swappiness",
    Severity.LOW,
    _("vm.swappiness differs"),
    _(
        "A higher swappiness swaps out anonymous memory sooner, which can add page faults under "
        "memory pressure."
    ),
    _("Align vm.swappiness on both sides."),
)
