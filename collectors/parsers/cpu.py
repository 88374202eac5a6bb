"""CPU model and topology, frequency scaling, idle states, vulnerabilities, NUMA."""

from collections import Counter

from collectors.parsers.common import basename, cpu_list_count, path_values

_LSCPU_KEYS = {
    "Model name": ("cpu.model", str),
    "Vendor ID": ("cpu.vendor", str),
    "CPU family": ("cpu.family", int),
    "Model": ("cpu.model_number", int),
    "Stepping": ("cpu.stepping", int),
    "CPU(s)": ("cpu.count", int),
    "On-line CPU(s) list": ("cpu.online", str),
    "Thread(s) per core": ("cpu.threads_per_core", int),
    "Core(s) per socket": ("cpu.cores_per_socket", int),
    "Socket(s)": ("cpu.sockets", int),
    "CPU max MHz": ("cpu.mhz.max", float),
    "CPU min MHz": ("cpu.mhz.min", float),
    "NUMA node(s)": ("numa.nodes", int),
    "Hypervisor vendor": ("virt.hypervisor_vendor", str),
    "Frequency boost": ("cpu.boost", str),
    "Microcode version": ("cpu.microcode", str),
}


def parse_lscpu(text: str, **_) -> dict:
    facts = {}
    for line in text.splitlines():
        key, sep, value = line.strip().partition(":")
        value = value.strip()
        if not sep or not value or key not in _LSCPU_KEYS:
            continue
        name, kind = _LSCPU_KEYS[key]
        try:
            facts[name] = kind(value)
        except ValueError:
            continue  # e.g. "Model: -" on some ARM systems
    if "cpu.count" not in facts:
        raise ValueError("lscpu printed no CPU(s) line")
    return facts


def _cpuinfo_blocks(text: str) -> list[dict[str, str]]:
    blocks, current = [], {}
    for line in text.splitlines():
        if not line.strip():
            if current:
                blocks.append(current)
                current = {}
            continue
        key, sep, value = line.partition(":")
        if sep:
            current[key.strip()] = value.strip()
    if current:
        blocks.append(current)
    return [block for block in blocks if "processor" in block]


def parse_cpuinfo(text: str, **_) -> dict:
    processors = _cpuinfo_blocks(text)
    if not processors:
        raise ValueError("no processor entries")
    first = processors[0]
    facts = {"cpu.processors": len(processors)}
    for source, name, kind in [
        ("model name", "cpu.model", str),
        ("vendor_id", "cpu.vendor", str),
        ("cpu family", "cpu.family", int),
        ("model", "cpu.model_number", int),
        ("stepping", "cpu.stepping", int),
        ("microcode", "cpu.microcode", str),
    ]:
        if source in first:
            try:
                facts[name] = kind(first[source])
            except ValueError:
                pass
    if "flags" in first:
        facts["virt.hypervisor_flag"] = "hypervisor" in first["flags"].split()
    mhz = [float(p["cpu MHz"]) for p in processors if "cpu MHz" in p]
    if mhz:
        facts["cpu.mhz.current"] = round(sum(mhz) / len(mhz), 1)
    sockets = {p["physical id"] for p in processors if "physical id" in p}
    if sockets and "cpu cores" in first and "siblings" in first:
        cores, siblings = int(first["cpu cores"]), int(first["siblings"])
        facts["cpu.sockets"] = len(sockets)
        facts["cpu.cores_per_socket"] = cores
        facts["cpu.threads_per_core"] = max(1, siblings // max(1, cores))
    return facts


def parse_cpu_topology(text: str, **_) -> dict:
    """Online CPUs, SMT, and sockets/cores/threads from each CPU's topology files (as lscpu
    counts them: packages, distinct cores per package, CPUs per core)."""
    values = path_values(text)
    if "online" not in values:
        raise ValueError("no online CPU list")
    facts = {"cpu.count": cpu_list_count(values["online"]), "cpu.online": values["online"]}
    if "smt/control" in values:
        facts["cpu.smt"] = values["smt/control"]
    cpus: dict[str, dict[str, str]] = {}
    for path, value in values.items():
        cpu, _, file = path.partition("/topology/")
        if file in ("physical_package_id", "core_id"):
            cpus.setdefault(cpu, {})[file] = value
    complete = [c for c in cpus.values() if len(c) == 2]
    if complete:
        packages = {c["physical_package_id"] for c in complete}
        cores = {(c["physical_package_id"], c["core_id"]) for c in complete}
        facts["cpu.sockets"] = len(packages)
        facts["cpu.cores_per_socket"] = len(cores) // len(packages)
        facts["cpu.threads_per_core"] = len(complete) // len(cores)
    return facts


def _per_cpu(values: dict[str, str], name: str) -> list[str]:
    return [value for path, value in values.items() if basename(path) == name and "/" in path]


def _summary(counter: Counter) -> str:
    return ", ".join(f"{value}×{count}" for value, count in counter.most_common())


def parse_cpufreq(text: str, **_) -> dict:
    values = path_values(text)
    governors = Counter(_per_cpu(values, "scaling_governor"))
    drivers = Counter(_per_cpu(values, "scaling_driver"))
    facts = {}
    if not governors and not drivers:
        if any(path.startswith(("cpu", "intel_pstate/")) for path in values) or not text.strip():
            # Common in VMs: the hypervisor, not the guest, controls the frequency.
            return {"cpu.scaling_driver": "none"}
        raise ValueError("no cpufreq files in the output")
    if governors:
        uniform = len(governors) == 1
        facts["cpu.governor"] = next(iter(governors)) if uniform else "mixed"
        facts["cpu.governor_uniform"] = uniform
        facts["cpu.governors"] = _summary(governors)
    if drivers:
        facts["cpu.scaling_driver"] = drivers.most_common(1)[0][0]
    current = [int(v) for v in _per_cpu(values, "scaling_cur_freq") if v.isdigit()]
    if current:
        facts["cpu.mhz.current"] = round(sum(current) / len(current) / 1000, 1)
    for name, key in [("cpuinfo_min_freq", "cpu.mhz.min"), ("cpuinfo_max_freq", "cpu.mhz.max")]:
        found = [int(v) for v in _per_cpu(values, name) if v.isdigit()]
        if found:
            facts[key] = (min(found) if name.endswith("min_freq") else max(found)) / 1000
    capped = [int(v) for v in _per_cpu(values, "scaling_max_freq") if v.isdigit()]
    if capped:
        facts["cpu.mhz.scaling_max"] = min(capped) / 1000
    if "cpufreq/boost" in values:
        facts["cpu.boost"] = "enabled" if values["cpufreq/boost"] == "1" else "disabled"
    if "intel_pstate/no_turbo" in values:
        facts["cpu.boost"] = "disabled" if values["intel_pstate/no_turbo"] == "1" else "enabled"
    if "intel_pstate/status" in values:
        facts["cpu.intel_pstate"] = values["intel_pstate/status"]
    return facts


def parse_cpuidle(text: str, **_) -> dict:
    names = {
        "current_driver": "cpu.idle_driver",
        "current_governor": "cpu.idle_governor",
        "current_governor_ro": "cpu.idle_governor",
        "max_cstate": "cpu.intel_idle_max_cstate",
    }
    facts = {}
    for path, value in path_values(text).items():
        if basename(path) in names:
            facts[names[basename(path)]] = int(value) if value.isdigit() else value
    return facts


def parse_vulnerabilities(text: str, **_) -> dict:
    facts = {
        f"cpu.vulnerabilities.{basename(path)}": value
        for path, value in path_values(text).items()
        if "/vulnerabilities/" in path
    }
    if not facts:
        raise ValueError("no vulnerability files")
    return facts


def _cpumap_count(value: str) -> int:
    return sum(bin(int(word, 16)).count("1") for word in value.split(",") if word)


def parse_numa(text: str, **_) -> dict:
    if not text.strip():
        return {}
    nodes: dict[str, dict] = {}
    for path, value in path_values(text).items():
        node = path.split("/", 1)[0]
        if not node.startswith("node"):
            continue
        entry = nodes.setdefault(node, {})
        if path.endswith("/cpulist"):
            entry["cpus"] = value
            entry["count"] = cpu_list_count(value)
        elif path.endswith("/cpumap"):
            entry["count"] = _cpumap_count(value)
        elif path.endswith("/meminfo") and "MemTotal" in value:
            entry["mem_kb"] = int(value.split()[-2])
    if not nodes:
        raise ValueError("no NUMA nodes listed")
    facts = {"numa.nodes": len(nodes)}
    for node, entry in sorted(nodes.items(), key=lambda item: int(item[0][4:])):
        if "cpus" in entry:
            facts[f"numa.{node}.cpus"] = entry["cpus"]
        elif "count" in entry:
            facts[f"numa.{node}.cpu_count"] = entry["count"]
        if "mem_kb" in entry:
            facts[f"numa.{node}.mem_kb"] = entry["mem_kb"]
    return facts
