"""The service process a person named: threads, command line, affinity, cgroup limits."""

from collectors.parsers.common import basename


def _jvm_options(cmdline: str) -> str:
    return " ".join(word for word in cmdline.split() if word.startswith(("-X", "-server")))


def _cpu_quota(max_value: str) -> float | str:
    """cgroup v2 `cpu.max` (`200000 100000`) as cores, or "max"."""
    quota, _, period = max_value.partition(" ")
    if quota == "max":
        return "max"
    return round(int(quota) / int(period or 100000), 2)


def parse_service(text: str, *, request=None, exit_status=0, **_) -> dict:
    name = request.service if request else ""
    if not name:
        return {}
    if exit_status == 3 or text.startswith("no process"):
        return {"service.name": name, "service.found": False}
    if not any(line.startswith("count=") for line in text.splitlines()):
        raise ValueError("no process count in the output")
    facts = {"service.name": name, "service.found": True}
    v1 = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        status_key, status_sep, status_value = line.partition(":")
        if sep and key == "count":
            facts["service.count"] = int(value)
        elif sep and key == "pid":
            facts["service.pid"] = int(value)
        elif sep and key == "cmdline":
            cmdline = " ".join(value.split())
            facts["service.cmdline"] = cmdline
            facts["service.jvm_options"] = _jvm_options(cmdline)
        elif sep and key == "cgroup":
            version, _, path = value.partition(" ")
            facts["service.cgroup.version"] = version
            facts["service.cgroup.path"] = path
        elif status_sep and status_key in ("Threads", "Cpus_allowed_list"):
            target = "service.threads" if status_key == "Threads" else "service.cpu_affinity"
            value = status_value.strip()
            facts[target] = int(value) if value.isdigit() else value
        elif status_sep and status_key.startswith("/"):
            file, value = basename(status_key), status_value.strip()
            if file == "cpu.max":
                facts["service.cgroup.cpu_quota"] = _cpu_quota(value)
            elif file == "cpu.weight":
                facts["service.cgroup.cpu_weight"] = int(value)
            elif file in ("cpuset.cpus.effective", "cpuset.cpus"):
                facts["service.cgroup.cpuset"] = value
            elif file in ("memory.max", "memory.limit_in_bytes"):
                limit = int(value) if value.isdigit() else value
                # cgroup v1 writes "no limit" as a page-aligned huge number.
                facts["service.cgroup.memory_max"] = (
                    "max"
                    if value == "max" or (isinstance(limit, int) and limit >= 2**62)
                    else limit
                )
            elif file in ("cpu.cfs_quota_us", "cpu.cfs_period_us"):
                v1[file] = int(value)
            elif file == "cpu.shares":
                facts["service.cgroup.cpu_shares"] = int(value)
        elif status_sep and status_key == "cpu.stat":
            stat, _, count = status_value.strip().partition(" ")
            count = int(count)
            if stat == "throttled_time":  # v1 counts nanoseconds
                stat, count = "throttled_usec", count // 1000
            facts[f"service.cgroup.{stat}"] = count
    if "cpu.cfs_quota_us" in v1:
        quota, period = v1["cpu.cfs_quota_us"], v1.get("cpu.cfs_period_us", 100000)
        facts["service.cgroup.cpu_quota"] = "max" if quota < 0 else round(quota / period, 2)
    periods = facts.get("service.cgroup.nr_periods")
    if periods:
        facts["service.cgroup.throttled_ratio"] = round(
            facts.get("service.cgroup.nr_throttled", 0) / periods, 4
        )
    return facts
