"""investigations.analysis: diff_facts and the finding rules, pure functions on fact dicts.

The two sides start as the same real snapshot (the probe script's output captured on a real
machine, tests/collectors/data) and then differ only in the keys a test changes: the values
put there are what the parsers make of real hosts (this machine, the EPYC 7451, Opteron and
Intel dumps of shared/fixtures/hosts, real kernel command lines). A test that needs a fact
on both sides sets it on both, with this machine's value, rather than count on the capture.
"""

import fnmatch
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from collectors.catalog import CATEGORY_ORDER, VOLATILE
from collectors.facts import FactsRequest, parse_facts, split_sections
from collectors.parsers import PARSERS
from collectors.parsers.system import parse_cmdline
from investigations.analysis.diff import (
    DIFFERS,
    ONLY_A,
    ONLY_B,
    SAME,
    diff_facts,
    values_equal,
)
from investigations.analysis.diff import VOLATILE as VOLATILE_KIND
from investigations.analysis.rules import RULES, evaluate, generic_differences
from investigations.choices import FindingSeverity as Severity

DATA = Path(__file__).resolve().parent.parent / "collectors" / "data"
# A Debian 12 KVM guest with redis-server running (see tests/collectors/data/README.md).
BASE_RAW = (DATA / "facts-debian12-kvm-redis.txt").read_bytes()
BASE_SNAPSHOT = parse_facts(BASE_RAW, FactsRequest(service="redis-server", paths=("/work", "/tmp")))
BASE = BASE_SNAPSHOT.facts
RULE_BY_NAME = {function.__name__: function for function in RULES}


def side(**changes) -> dict:
    """The base snapshot with some keys changed (a value of None removes the key)."""
    facts = dict(BASE)
    for key, value in changes.items():
        key = key.replace("__", ".")
        if value is None:
            facts.pop(key, None)
        else:
            facts[key] = value
    return facts


def with_keys(**changes) -> dict:
    return {key.replace("__", "."): value for key, value in changes.items()}


# --- diff_facts ------------------------------------------------------------------------------


def test_the_base_snapshot_is_a_real_one():
    assert list(split_sections(BASE_RAW)) == list(PARSERS)
    # Every probe answered but tuned (not installed) and lscpu (not needed on x86).
    assert {name for name, s in BASE_SNAPSHOT.probes.items() if s.status != "ok"} == {
        "tuned", "lscpu"}
    assert BASE["kernel.release"] == "6.18.44-fc-v669"
    assert BASE["service.name"] == "redis-server"
    assert (BASE["cpu.model"], BASE["cpu.count"], BASE["virt.type"]) == ("AMD EPYC", 2, "kvm")
    assert BASE["cgroup.version"] == "hybrid"
    assert "cpu.governor" not in BASE and BASE["cpu.scaling_driver"] == "none"
    assert len(BASE) > 120


def test_a_snapshot_against_itself_has_no_difference():
    rows = diff_facts(BASE, dict(BASE))

    assert {row.key for row in rows} == set(BASE)
    assert {row.kind for row in rows} == {SAME, VOLATILE_KIND}
    assert not [row for row in rows if row.counted]


def test_two_real_snapshots_of_the_same_machine_differ_only_by_what_was_asked():
    plain = parse_facts((DATA / "facts-debian12-kvm.txt").read_bytes()).facts
    rows = diff_facts(plain, BASE)

    assert not [row for row in rows if row.kind in (DIFFERS, ONLY_A)]
    only_b = {row.key for row in rows if row.kind == ONLY_B}
    assert only_b
    assert all(key.startswith(("service.", "storage.mount./work.", "storage.mount./tmp."))
               for key in only_b)
    # Taken seconds apart: the uptime moved, and it does not count.
    uptime = next(row for row in rows if row.key == "system.uptime_seconds")
    assert uptime.a != uptime.b and uptime.kind == VOLATILE_KIND and not uptime.counted


def test_the_five_kinds():
    a = side(net__core__somaxconn=4096, mm__swappiness=60, tuned__profile=None)
    b = side(net__core__somaxconn=128, mm__swappiness=None, tuned__profile="balanced",
             system__hostname="db-7")
    rows = {row.key: row for row in diff_facts(a, b)}

    assert rows["kernel.release"].kind == SAME
    assert rows["net.core.somaxconn"].kind == DIFFERS
    assert (rows["net.core.somaxconn"].a, rows["net.core.somaxconn"].b) == (4096, 128)
    assert rows["mm.swappiness"].kind == ONLY_A
    assert (rows["mm.swappiness"].a, rows["mm.swappiness"].b) == (60, None)
    assert rows["tuned.profile"].kind == ONLY_B
    assert (rows["tuned.profile"].a, rows["tuned.profile"].b) == (None, "balanced")
    assert rows["system.hostname"].kind == VOLATILE_KIND
    assert [key for key, row in rows.items() if row.counted] == ["net.core.somaxconn"]


@pytest.mark.parametrize(
    "key, value_a, value_b",
    [
        ("system.boot_id", "d73cd805-f64f-47ca-98b9-38b49ea9bc87",
         "1b4e28ba-2fa1-11d2-883f-0016d3cca427"),
        ("system.uptime_seconds", 4159.7, 9_123_456.7),
        ("system.load1", 0.14, 31.5),
        ("system.load5", 0.6, 28.0),
        ("system.load15", 1.16, 20.1),
        ("system.hostname", "vm", "pay-api-7"),
        ("service.pid", 2147, 31337),
        ("kernel.cmdline", "quiet", "quiet mitigations=off"),
        ("tools.perf", True, False),
        ("tools.tuned-adm", False, True),
        ("access.user", "root", "perfcase"),
        ("mem.available_kb", 23796264, 1_000_000),
        ("service.cgroup.nr_throttled", 0, 500),
    ],
)
def test_volatile_keys_are_shown_but_never_counted(key, value_a, value_b):
    for a, b in [
        (side(**{key.replace(".", "__"): value_a}), side(**{key.replace(".", "__"): value_b})),
        (side(**{key.replace(".", "__"): None}), side(**{key.replace(".", "__"): value_b})),
    ]:
        row = next(row for row in diff_facts(a, b) if row.key == key)
        assert row.kind == VOLATILE_KIND
        assert not row.counted
        assert row.b == value_b
        assert evaluate(a, b) == []


@pytest.mark.parametrize(
    "a, b, kind",
    [
        (2596.1, 2596.1, SAME),
        (2596.1, 2400.0, SAME),  # 7.6 %
        (1000.0, 1100.0, SAME),  # 10 % of the larger
        (1000.0, 1112.0, DIFFERS),  # just over
        (2893.7, 1200.0, DIFFERS),  # boosted EPYC against one at its minimum
        (2000, 2000.0, SAME),
    ],
)
def test_current_mhz_within_ten_percent_is_the_same(a, b, kind):
    rows = diff_facts(side(cpu__mhz__current=a), side(cpu__mhz__current=b))

    assert next(row.kind for row in rows if row.key == "cpu.mhz.current") == kind


@pytest.mark.parametrize(
    "b, kind",
    [
        (24684084, SAME),
        (24_300_000, SAME),  # 1.6 %: firmware reserves differ between equal machines
        (24_190_403, SAME),  # 2 % to the kB
        (24_000_000, DIFFERS),  # 2.8 %
        (16_380_000, DIFFERS),
    ],
)
def test_memory_total_within_two_percent_is_the_same(b, kind):
    rows = diff_facts(BASE, side(mem__total_kb=b))

    assert next(row.kind for row in rows if row.key == "mem.total_kb") == kind


def test_keys_without_a_tolerance_compare_exactly():
    assert not values_equal("net.core.somaxconn", 4096, 4097)
    assert not values_equal("limits.open_files", 20000, 20001)
    assert values_equal("net.core.somaxconn", 4096, 4096)
    assert not values_equal("mm.swappiness", 60, "60")


@pytest.mark.parametrize(
    "key, a, b",
    [
        ("storage.vda.rotational", True, 1),
        ("storage.vda.rotational", False, 0),
        ("irqbalance.running", 1, True),
        ("virt.hypervisor_flag", 0, False),
        ("cpu.mhz.current", True, 1.0),  # a key with a tolerance too
    ],
)
def test_booleans_are_not_numbers(key, a, b):
    # A parser that wrote 1 where another wrote True reports something else.
    assert not values_equal(key, a, b)
    row = next(row for row in diff_facts(side(**{key.replace(".", "__"): a}),
                                         side(**{key.replace(".", "__"): b})) if row.key == key)
    assert row.kind == DIFFERS


def test_equal_booleans_are_the_same():
    assert values_equal("storage.vda.rotational", True, True)
    assert values_equal("irqbalance.running", False, False)
    assert not values_equal("irqbalance.running", False, True)


@pytest.mark.parametrize(
    "key, category",
    [
        ("cpu.vulnerabilities.spectre_v2", "Vulnerabilities"),
        ("kernel.mitigation_switches", "Vulnerabilities"),
        ("cpu.governor", "CPU"),
        ("cpu.mhz.current", "CPU"),
        ("numa.nodes", "Memory and NUMA"),
        ("mem.total_kb", "Memory and NUMA"),
        ("mm.thp.enabled", "Memory and NUMA"),
        ("kernel.release", "System"),
        ("os.name", "System"),
        ("virt.type", "Virtualisation"),
        ("cgroup.version", "Virtualisation"),
        ("clocksource.current", "Clock"),
        ("net.core.somaxconn", "Network"),
        ("net.if.eth0.rx_queues", "Network"),
        ("storage.vda.scheduler", "Storage"),
        ("storage.mount./work.fstype", "Storage"),
        ("limits.open_files", "Limits"),
        ("service.cgroup.cpu_quota", "Service"),
        ("irqbalance.running", "Tuning"),
        ("tools.perf", "Tools and access"),
        ("access.user", "Tools and access"),
        ("something.new", "Other"),
    ],
)
def test_categories(key, category):
    rows = diff_facts({key: 1}, {key: 1})

    assert rows[0].category == category


def test_rows_are_ordered_by_category_then_key():
    a = side(tuned__profile="balanced", something__new=1)
    b = side(net__core__somaxconn=128)
    rows = diff_facts(a, b)
    order = [(CATEGORY_ORDER.index(row.category), row.key) for row in rows]

    assert order == sorted(order)
    assert rows[0].category == "Vulnerabilities"
    assert rows[-1].key == "something.new"
    categories = list(dict.fromkeys(row.category for row in rows))
    assert categories == [c for c in CATEGORY_ORDER if c in categories]
    assert len(rows) == len(set(a) | set(b))


# --- the named rules -------------------------------------------------------------------------


@dataclass
class Case:
    a: dict  # keys changed on side A
    b: dict  # keys changed on side B (the healthy side)
    rule: str
    severity: str
    title: str  # part of the title
    side_a: str  # part of side_a
    side_b: str
    subject: str = ""
    extra: dict = field(default_factory=dict)


# Realistic values: what the parsers made of the dumps and of real command lines.
OPTERON_6328 = {  # vmware_fpe
    "cpu.model": "AMD Opteron(tm) Processor 6328", "cpu.vendor": "AuthenticAMD",
    "cpu.family": 21, "cpu.model_number": 2, "cpu.stepping": 0,
    "cpu.mhz.min": 1400.0, "cpu.mhz.max": 3200.0,
}
EPYC_7451 = {  # x86_64-epyc_7451
    "cpu.model": "AMD EPYC 7451 24-Core Processor", "cpu.vendor": "AuthenticAMD",
    "cpu.family": 23, "cpu.model_number": 1, "cpu.stepping": 2,
    "cpu.mhz.min": 1200.0, "cpu.mhz.max": 2300.0,
}
EPYC_VULNERABILITIES = {
    "cpu.vulnerabilities.spec_store_bypass":
        "Mitigation: Speculative Store Bypass disabled via prctl and seccomp",
    "cpu.vulnerabilities.spectre_v2":
        "Mitigation: Full AMD retpoline, IBPB: conditional, STIBP: disabled, RSB filling",
}
MITIGATIONS_OFF = parse_cmdline(
    "BOOT_IMAGE=/vmlinuz-4.19.91 root=UUID=0f3a5c9e ro quiet mitigations=off nopti"
)
MITIGATIONS_ON = parse_cmdline("BOOT_IMAGE=/vmlinuz-4.19.91 root=UUID=7d1e2f3a ro quiet")

CASES = {
    "governor": Case(
        a=with_keys(cpu__governor="powersave", cpu__governor_uniform=True,
                    cpu__governors="powersave×8"),
        b=with_keys(cpu__governor="performance", cpu__governor_uniform=True,
                    cpu__governors="performance×8"),
        rule="cpu_governor", severity=Severity.HIGH,
        title="'powersave' on side A", side_a="powersave", side_b="performance",
    ),
    "clock_at_minimum": Case(
        a=with_keys(cpu__mhz__current=1200.0, cpu__mhz__min=1200.0, cpu__mhz__max=2300.0),
        b=with_keys(cpu__mhz__current=2893.7, cpu__mhz__min=1200.0, cpu__mhz__max=2300.0),
        rule="cpu_clock_at_minimum", severity=Severity.MEDIUM,
        title="on side A", side_a="1200.0 MHz (min 1200.0)", side_b="2893.7 MHz (min 1200.0)",
    ),
    "cpu_boost": Case(
        a={"cpu.boost": "disabled"}, b={"cpu.boost": "enabled"},
        rule="cpu_boost", severity=Severity.MEDIUM, title="boost",
        side_a="disabled", side_b="enabled",
    ),
    "thp_enabled": Case(
        a={"mm.thp.enabled": "always"}, b={"mm.thp.enabled": "madvise"},
        rule="thp_enabled", severity=Severity.MEDIUM, title="huge pages",
        side_a="always", side_b="madvise",
    ),
    "thp_defrag": Case(
        a={"mm.thp.defrag": "always"}, b={"mm.thp.defrag": "madvise"},
        rule="thp_defrag", severity=Severity.LOW, title="defragmentation",
        side_a="always", side_b="madvise",
    ),
    "mitigation_switches": Case(
        # Only the switches: kernel.cmdline_settings, which also holds them, is compared on
        # its own (see test_mitigations_off_on_one_side_from_real_command_lines).
        a={key: MITIGATIONS_ON[key] for key in ("kernel.cmdline", "kernel.mitigation_switches")},
        b={key: MITIGATIONS_OFF[key] for key in ("kernel.cmdline", "kernel.mitigation_switches")},
        rule="mitigation_switches", severity=Severity.HIGH, title="mitigations",
        side_a="", side_b="mitigations=off nopti",
    ),
    "kernel_release": Case(
        a={"kernel.release": "3.10.0-1160.el7.x86_64"}, b={"kernel.release": "6.18.44-fc-v669"},
        rule="kernel_release", severity=Severity.MEDIUM, title="Kernel releases",
        side_a="3.10.0-1160.el7.x86_64", side_b="6.18.44-fc-v669",
    ),
    "cpu_model": Case(
        # The family, stepping and clock range go with the model: one finding, not eight.
        a=OPTERON_6328, b=EPYC_7451,
        rule="cpu_model", severity=Severity.HIGH, title="CPU models",
        side_a="AMD Opteron(tm) Processor 6328, 1400-3200 MHz",
        side_b="AMD EPYC 7451 24-Core Processor, 1200-2300 MHz",
    ),
    "microcode": Case(
        # The EPYC dump's microcode against an older release (hand-made value) of it.
        a={**EPYC_7451, "cpu.microcode": "0x8001213"},
        b={**EPYC_7451, "cpu.microcode": "0x8001227"},
        rule="microcode", severity=Severity.LOW, title="microcode",
        side_a="0x8001213", side_b="0x8001227",
    ),
    "cpu_topology": Case(
        # This machine's 2 CPUs (1 socket, 2 cores, no SMT) against 2 CPUs that are one
        # core's two threads, as a 2-vCPU cloud instance presents them.
        a={"cpu.count": 2, "cpu.sockets": 1, "cpu.cores_per_socket": 2,
           "cpu.threads_per_core": 1, "cpu.online": "0-1", "cpu.processors": 2},
        b={"cpu.count": 2, "cpu.sockets": 1, "cpu.cores_per_socket": 1,
           "cpu.threads_per_core": 2, "cpu.online": "0,1", "cpu.processors": 2},
        rule="cpu_topology", severity=Severity.MEDIUM, title="laid out differently",
        side_a="1 sockets × 2 cores_per_socket × 1 threads_per_core",
        side_b="1 sockets × 1 cores_per_socket × 2 threads_per_core",
    ),
    "frequency_cap": Case(
        # The EPYC dump, and the same with scaling_max_freq lowered (hand-made, as root would).
        a={**EPYC_7451, "cpu.mhz.scaling_max": 1800.0},
        b={**EPYC_7451, "cpu.mhz.scaling_max": 2300.0},
        rule="frequency_cap", severity=Severity.MEDIUM, title="highest allowed CPU frequency",
        side_a="1800.0 MHz", side_b="2300.0 MHz",
    ),
    "scaling_driver": Case(
        # The Intel laptop dump's intel_pstate against the EPYC dump's acpi-cpufreq.
        a={"cpu.scaling_driver": "intel_pstate", "cpu.intel_pstate": "active"},
        b={"cpu.scaling_driver": "acpi-cpufreq", "cpu.intel_pstate": "off"},
        rule="scaling_driver", severity=Severity.LOW, title="scaling drivers",
        side_a="intel_pstate", side_b="acpi-cpufreq",
    ),
    "cpu_count": Case(
        a={"cpu.count": 96}, b={"cpu.count": 16},
        rule="cpu_count", severity=Severity.MEDIUM, title="numbers of CPUs",
        side_a="96", side_b="16",
    ),
    "virtualisation": Case(
        a={"virt.type": "vmware"}, b={"virt.type": "none"},
        rule="virtualisation", severity=Severity.MEDIUM, title="virtualisation",
        side_a="vmware", side_b="none",
    ),
    "container": Case(
        a={"virt.container": "docker"}, b={"virt.container": "none"},
        rule="container", severity=Severity.LOW, title="container",
        side_a="docker", side_b="none",
    ),
    "numa_nodes": Case(
        # The EPYC dump's 8 nodes of 12 CPUs against this machine's one node of 2.
        a={"numa.nodes": 8, "numa.node0.cpu_count": 12, "numa.node0.mem_kb": 5990604},
        b={"numa.nodes": 1, "numa.node0.cpu_count": 2, "numa.node0.mem_kb": 24684084},
        rule="numa_nodes", severity=Severity.MEDIUM, title="NUMA",
        side_a="8", side_b="1",
    ),
    "numa_balancing": Case(
        a={"numa.balancing": 1}, b={"numa.balancing": 0},
        rule="numa_balancing", severity=Severity.LOW, title="NUMA balancing",
        side_a="1", side_b="0",
    ),
    "tuned_profile": Case(
        a={"tuned.profile": "powersave"}, b={"tuned.profile": "throughput-performance"},
        rule="tuned_profile", severity=Severity.MEDIUM, title="tuned",
        side_a="powersave", side_b="throughput-performance",
    ),
    "swappiness": Case(
        a={"mm.swappiness": 60}, b={"mm.swappiness": 10},
        rule="swappiness", severity=Severity.LOW, title="swappiness",
        side_a="60", side_b="10",
    ),
    "smt": Case(
        a={"cpu.smt": "on"}, b={"cpu.smt": "off"},
        rule="smt", severity=Severity.MEDIUM, title="multithreading",
        side_a="on", side_b="off",
    ),
    "idle_driver": Case(
        a={"cpu.idle_driver": "intel_idle"}, b={"cpu.idle_driver": "acpi_idle"},
        rule="idle_driver", severity=Severity.LOW, title="idle drivers",
        side_a="intel_idle", side_b="acpi_idle",
    ),
    "jvm_options": Case(
        a={"service.jvm_options": "-server -Xms2g -Xmx2g -XX:+UseParallelGC"},
        b={"service.jvm_options": "-server -Xms4g -Xmx4g -XX:+UseG1GC"},
        rule="jvm_options", severity=Severity.MEDIUM, title="JVM options",
        side_a="-XX:+UseParallelGC", side_b="-XX:+UseG1GC",
    ),
    "vulnerabilities": Case(
        a={"cpu.vulnerabilities.spec_store_bypass": "Vulnerable",
           "cpu.vulnerabilities.spectre_v2": BASE["cpu.vulnerabilities.spectre_v2"]},
        b=EPYC_VULNERABILITIES,
        rule="vulnerabilities", severity=Severity.MEDIUM,
        title="(spec_store_bypass, spectre_v2)",
        side_a="spec_store_bypass: Vulnerable\nspectre_v2: Mitigation: Retpolines",
        side_b="spec_store_bypass: Mitigation: Speculative Store Bypass disabled via prctl "
        "and seccomp\nspectre_v2: Mitigation: Full AMD retpoline",
    ),
    "clocksource": Case(
        a={"clocksource.current": "hpet"}, b={"clocksource.current": "tsc"},
        rule="clocksource", severity=Severity.HIGH, title="(hpet is slow)",
        side_a="hpet", side_b="tsc",
    ),
    "cgroup_cpu": Case(
        a={"service.cgroup.cpu_quota": 2.0}, b={"service.cgroup.cpu_quota": "max"},
        rule="cgroup_cpu_limit", severity=Severity.HIGH, title="CPU quota",
        side_a="2.0", side_b="max", subject="service.cgroup.cpu_quota",
    ),
    "nic_queues": Case(
        a={"net.if.eth0.rx_queues": 1, "net.if.eth0.tx_queues": 1},
        b={"net.if.eth0.rx_queues": 8, "net.if.eth0.tx_queues": 8},
        rule="nic_queues", severity=Severity.MEDIUM, title="queues",
        side_a="eth0: rx 1, tx 1", side_b="eth0: rx 8, tx 8",
    ),
}


def _pair(case: Case) -> tuple[dict, dict]:
    return {**BASE, **case.a}, {**BASE, **case.b}


def test_every_named_rule_has_a_case():
    assert set(RULE_BY_NAME) == set(CASES)


def test_the_base_snapshot_against_itself_finds_nothing():
    assert evaluate(BASE, dict(BASE)) == []


@pytest.mark.parametrize("name", list(CASES))
def test_each_named_rule_fires_on_a_realistic_pair(name):
    case = CASES[name]
    a, b = _pair(case)

    verdicts = RULE_BY_NAME[name](a, b)

    assert len(verdicts) == 1, verdicts
    verdict = verdicts[0]
    assert verdict.rule == case.rule
    assert verdict.severity == case.severity
    assert case.title in verdict.title
    assert case.side_a in verdict.side_a
    assert case.side_b in verdict.side_b
    assert verdict.subject == case.subject
    assert verdict.explanation and verdict.recommendation
    # evaluate() reports it, and no key this rule explains shows up again as generic.
    found = evaluate(a, b)
    assert verdict in found
    covered = {key for key in set(case.a) | set(case.b)}
    assert not [v for v in found if v.rule == "fact_differs" and v.subject in covered]


@pytest.mark.parametrize("name", list(CASES))
def test_each_named_rule_is_quiet_when_the_sides_agree(name):
    case = CASES[name]
    a, b = _pair(case)

    assert RULE_BY_NAME[name](b, dict(b)) == []
    if name != "governor":  # a slow governor on both sides is a finding of its own
        assert RULE_BY_NAME[name](a, dict(a)) == []


def test_a_simple_rule_needs_the_fact_on_both_sides():
    a, b = side(tuned__profile="powersave"), side(tuned__profile=None)

    assert RULE_BY_NAME["tuned_profile"](a, b) == []


# governor


def governor(value, summary=None) -> dict:
    return with_keys(cpu__governor=value, cpu__governor_uniform=value != "mixed",
                     cpu__governors=summary or f"{value}×8")


def test_governor_powersave_on_side_b_only():
    (verdict,) = RULE_BY_NAME["governor"](side(**governor("performance")),
                                          side(**governor("powersave")))

    assert verdict.severity == Severity.HIGH
    assert "side B" in verdict.title and "'powersave'" in verdict.title
    # A uniform governor is shown by name; the per-CPU summary only for "mixed".
    assert (verdict.side_a, verdict.side_b) == ("performance", "powersave")


def test_governor_powersave_on_both_sides_is_medium():
    (verdict,) = RULE_BY_NAME["governor"](side(**governor("powersave")),
                                          side(**governor("powersave")))

    assert verdict.severity == Severity.MEDIUM
    assert "both sides" in verdict.title


def test_governor_mixed_against_performance():
    # As the parser reports the EPYC dump with six CPUs switched to powersave.
    mixed = governor("mixed", "performance×90, powersave×6")
    (verdict,) = RULE_BY_NAME["governor"](side(**mixed), side(**governor("performance")))

    assert verdict.severity == Severity.HIGH
    assert "'mixed' on side A" in verdict.title
    assert verdict.side_a == "performance×90, powersave×6"


def test_two_different_slow_governors_are_both_named():
    (verdict,) = RULE_BY_NAME["governor"](side(**governor("powersave")),
                                          side(**governor("ondemand")))

    assert verdict.severity == Severity.HIGH
    assert (verdict.side_a, verdict.side_b) == ("powersave", "ondemand")
    # The title must not say both sides run powersave when side B runs ondemand.
    assert "ondemand" in verdict.title or "both sides" not in verdict.title


def test_governor_against_a_vm_without_cpufreq():
    # The base snapshot is a KVM guest: no cpufreq, no governor at all.
    assert "cpu.governor" not in BASE
    assert RULE_BY_NAME["governor"](BASE, side(**governor("performance"))) == []
    (verdict,) = RULE_BY_NAME["governor"](BASE, side(**governor("powersave")))
    assert "side B" in verdict.title and verdict.side_a == "—"


# clock at minimum


def clock(current, low=1200.0, high=2300.0) -> dict:
    return with_keys(cpu__mhz__current=current, cpu__mhz__min=low, cpu__mhz__max=high)


@pytest.mark.parametrize(
    "a, b, fires_on",
    [
        (clock(1200.0), clock(2893.7), "A"),
        (clock(2893.7), clock(1250.0), "B"),  # within 10 % of the range above the minimum
        (clock(1200.0), clock(1200.0), None),  # both: the governor rule says it
        (clock(2300.0), clock(2893.7), None),
        (clock(1500.0), clock(2300.0), None),  # 27 % up the range
        (with_keys(cpu__mhz__current=1200.0), clock(2300.0), None),  # no range known
    ],
)
def test_clock_at_minimum(a, b, fires_on):
    verdicts = RULE_BY_NAME["clock_at_minimum"](side(**a), side(**b))

    if fires_on is None:
        assert verdicts == []
    else:
        assert [v.title for v in verdicts] == [
            f"CPU clock sits near its minimum on side {fires_on}"
        ]


# vulnerabilities


def test_vulnerabilities_only_one_side_reports_are_not_differences():
    # A newer kernel lists more vulnerability files: the extra ones are not compared.
    older = {key: value for key, value in BASE.items()
             if key != "cpu.vulnerabilities.vmscape"}

    assert RULE_BY_NAME["vulnerabilities"](BASE, older) == []


def test_vulnerabilities_list_every_differing_name():
    a, b = _pair(CASES["vulnerabilities"])
    (verdict,) = RULE_BY_NAME["vulnerabilities"](a, b)

    assert verdict.title == "CPU vulnerability mitigations differ (spec_store_bypass, spectre_v2)"
    assert verdict.side_a.splitlines()[0] == "spec_store_bypass: Vulnerable"
    assert len(verdict.side_a.splitlines()) == len(verdict.side_b.splitlines()) == 2


# clock source


def test_clocksource_tsc_against_kvm_clock_is_medium():
    (verdict,) = RULE_BY_NAME["clocksource"](side(clocksource__current="kvm-clock"), BASE)

    assert verdict.severity == Severity.MEDIUM
    assert verdict.title == "Clock sources differ"
    assert (verdict.side_a, verdict.side_b) == ("kvm-clock", "tsc")


@pytest.mark.parametrize("slow", ["hpet", "acpi_pm"])
def test_a_slow_clocksource_on_side_b_is_high(slow):
    (verdict,) = RULE_BY_NAME["clocksource"](BASE, side(clocksource__current=slow))

    assert verdict.severity == Severity.HIGH
    assert f"({slow} is slow)" in verdict.title


# cgroup


def test_cgroup_cpuset_differs():
    (verdict,) = RULE_BY_NAME["cgroup_cpu"](side(service__cgroup__cpuset="0-3"), BASE)

    assert verdict.rule == "cgroup_cpu_limit"
    assert verdict.severity == Severity.HIGH
    assert verdict.subject == "service.cgroup.cpuset"
    assert (verdict.side_a, verdict.side_b) == ("0-3", "0-1")


def test_cgroup_quota_and_cpuset_both_differ():
    a = side(service__cgroup__cpu_quota=2.0, service__cgroup__cpuset="0-3")
    verdicts = RULE_BY_NAME["cgroup_cpu"](a, BASE)

    assert [v.subject for v in verdicts] == ["service.cgroup.cpu_quota", "service.cgroup.cpuset"]


@pytest.mark.parametrize(
    "ratio_a, ratio_b, expected",
    [
        (0.3, 0.0, "A"),
        (0.0, 0.3, "B"),
        (0.3, 0.28, None),  # both throttled alike
        (0.03, 0.0, None),  # under 5 % of periods
    ],
)
def test_cgroup_throttling(ratio_a, ratio_b, expected):
    a = side(service__cgroup__throttled_ratio=ratio_a)
    b = side(service__cgroup__throttled_ratio=ratio_b)
    verdicts = RULE_BY_NAME["cgroup_cpu"](a, b)

    if expected is None:
        assert verdicts == []
        return
    (verdict,) = verdicts
    assert verdict.rule == "cgroup_throttling"
    assert verdict.severity == Severity.HIGH
    assert verdict.title == f"The service is CPU-throttled on side {expected}"
    assert verdict.side_a == f"{ratio_a:.1%} of periods throttled"
    assert verdict.side_b == f"{ratio_b:.1%} of periods throttled"


def test_throttling_against_a_side_that_reports_none():
    # The real redis-server ran no period under a quota: no ratio on side B at all.
    assert "service.cgroup.throttled_ratio" not in BASE
    (verdict,) = RULE_BY_NAME["cgroup_cpu"](side(service__cgroup__throttled_ratio=0.3), BASE)

    assert verdict.title == "The service is CPU-throttled on side A"
    assert verdict.side_b == "0.0% of periods throttled"


# NIC queues


def test_nic_queues_ignore_interfaces_that_are_down():
    a = side(net__interfaces="eth0 eth1", net__if__eth1__state="down",
             net__if__eth1__rx_queues=16, net__if__eth1__tx_queues=16)

    assert RULE_BY_NAME["nic_queues"](a, BASE) == []


def test_nic_queues_compare_the_busiest_interface_whatever_its_name():
    b = {key.replace("net.if.eth0.", "net.if.ens5."): value for key, value in BASE.items()}
    b["net.interfaces"] = "ens5"
    b["net.if.ens5.rx_queues"] = b["net.if.ens5.tx_queues"] = 4

    (verdict,) = RULE_BY_NAME["nic_queues"](BASE, b)
    assert verdict.side_a == "eth0: rx 1, tx 1"
    assert verdict.side_b == "ens5: rx 4, tx 4"
    assert RULE_BY_NAME["nic_queues"](BASE, {**b, "net.if.ens5.rx_queues": 1,
                                             "net.if.ens5.tx_queues": 1}) == []


# mitigation switches


def test_mitigations_off_on_one_side_from_real_command_lines():
    a, b = {**BASE, **MITIGATIONS_OFF}, {**BASE, **MITIGATIONS_ON}
    verdicts = [v for v in evaluate(a, b) if v.rule == "mitigation_switches"]

    assert MITIGATIONS_OFF["kernel.mitigation_switches"] == "mitigations=off nopti"
    assert [(v.severity, v.side_a, v.side_b) for v in verdicts] == [
        (Severity.HIGH, "mitigations=off nopti", "")
    ]
    # The same switches on both, with different disks: nothing to report.
    same = parse_cmdline("BOOT_IMAGE=/vmlinuz-4.19.91 root=UUID=7d1e2f3a ro quiet "
                         "mitigations=off nopti")
    assert RULE_BY_NAME["mitigation_switches"](a, {**BASE, **same}) == []


# --- the generic rule and the order ----------------------------------------------------------


def test_an_uncovered_difference_is_one_info_finding():
    verdicts = evaluate(side(net__core__somaxconn=4096), side(net__core__somaxconn=128))

    assert len(verdicts) == 1
    (verdict,) = verdicts
    assert verdict.rule == "fact_differs"
    assert verdict.severity == Severity.INFO
    assert verdict.subject == "net.core.somaxconn"
    assert verdict.title == "net.core.somaxconn differs"
    assert (verdict.side_a, verdict.side_b) == ("4096", "128")


def test_a_generic_boolean_is_shown_as_yes_or_no():
    (verdict,) = generic_differences(BASE, side(irqbalance__running=True))

    assert verdict.subject == "irqbalance.running"
    assert (verdict.side_a, verdict.side_b) == ("no", "yes")


def test_keys_a_named_rule_covers_never_appear_as_generic():
    a = side(**governor("powersave"), cpu__mhz__current=1200.0, clocksource__current="hpet",
             service__cgroup__cpu_quota=2.0, service__cgroup__cpuset="0-3",
             service__cgroup__throttled_ratio=0.3, net__if__eth0__rx_queues=4,
             net__if__eth0__tx_queues=4, mm__thp__enabled="always",
             **{"cpu.vulnerabilities.spectre_v2": "Vulnerable",
                "cpu.vulnerabilities.mds": "Vulnerable: Clear CPU buffers attempted"})
    b = side(**governor("performance"), cpu__mhz__current=2400.0)
    subjects = {v.subject for v in generic_differences(a, b)}
    named = {v.rule for v in evaluate(a, b)}

    assert subjects == set()
    assert {"cpu_governor", "clocksource", "cgroup_cpu_limit", "cgroup_throttling",
            "nic_queues", "thp_enabled", "vulnerabilities"} <= named


def test_volatile_differences_never_appear():
    a = side(system__hostname="pay-api-1", system__boot_id="1b4e28ba-2fa1-11d2-883f",
             system__uptime_seconds=12.5, system__load1=40.0, service__pid=4242,
             kernel__cmdline="quiet splash", tools__perf=False, access__uid=1000)

    assert evaluate(a, BASE) == []
    assert all(any(fnmatch.fnmatchcase(key, pattern) for pattern in VOLATILE)
               for key in ("system.hostname", "tools.perf", "kernel.cmdline"))


def test_evaluate_orders_by_severity_named_above_generic():
    a = side(cpu__model="AMD Opteron(tm) Processor 6328", kernel__release="3.10.0-1160",
             mm__swappiness=10, net__core__somaxconn=128, net__ipv4__tcp_congestion_control="cubic")
    verdicts = evaluate(a, side(mm__swappiness=60, net__core__somaxconn=4096))
    ranks = [Severity.rank(v.severity) for v in verdicts]

    assert ranks == sorted(ranks)
    assert [v.rule for v in verdicts][:3] == ["cpu_model", "kernel_release", "swappiness"]
    assert {v.subject for v in verdicts[3:]} == {"net.core.somaxconn",
                                                 "net.ipv4.tcp_congestion_control"}
    assert all(v.rule == "fact_differs" for v in verdicts[3:])
    first_generic = next(i for i, v in enumerate(verdicts) if v.rule == "fact_differs")
    assert all(v.rule != "fact_differs" for v in verdicts[:first_generic])
