"""Block devices (rotational, scheduler, write cache) and the mounts that matter."""

from collectors.parsers.common import basename, selected


def parse_block(text: str, **_) -> dict:
    facts = {}
    device = None
    for line in text.splitlines():
        if line.startswith("dev="):
            device = line[4:].strip()
            continue
        path, sep, value = line.partition(":")
        if not sep or device is None:
            continue
        name, value, prefix = basename(path), value.strip(), f"storage.{device}"
        if name == "rotational":
            facts[f"{prefix}.rotational"] = value == "1"
        elif name == "scheduler":
            facts[f"{prefix}.scheduler"] = selected(value)
        elif name == "write_cache":
            facts[f"{prefix}.write_cache"] = value
        elif name in ("nr_requests", "read_ahead_kb") and value.isdigit():
            facts[f"{prefix}.{name}"] = int(value)
        elif name == "size" and value.isdigit():
            facts[f"{prefix}.size_gb"] = round(int(value) * 512 / 1e9, 1)
    return facts


def _unescape(field: str) -> str:
    # /proc/mounts writes space, tab, newline and backslash as octal escapes.
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        field = field.replace(code, char)
    return field


def parse_mounts(text: str, *, request=None, **_) -> dict:
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 4:
            mounts.append((_unescape(fields[1]), fields[0], fields[2], fields[3]))
    if not mounts:
        raise ValueError("no mounts")
    facts = {}
    cgroup_types = {fstype for point, _, fstype, _ in mounts if point == "/sys/fs/cgroup"}
    unified = any(point == "/sys/fs/cgroup/unified" for point, *_ in mounts)
    if "cgroup2" in cgroup_types:
        facts["cgroup.version"] = "v2"
    elif cgroup_types:
        facts["cgroup.version"] = "hybrid" if unified else "v1"
    wanted = ["/", *(request.paths if request else ())]
    for path in wanted:
        # The mount a path lives on: the longest mount point that contains it (last wins,
        # as later mounts hide earlier ones).
        best = None
        for point, device, fstype, options in mounts:
            inside = path == point or path.startswith(point.rstrip("/") + "/") or point == "/"
            if inside and (best is None or len(point) >= len(best[0])):
                best = (point, device, fstype, options)
        if best is None:
            continue
        prefix = f"storage.mount.{path}"
        facts[f"{prefix}.mount_point"] = best[0]
        facts[f"{prefix}.fstype"] = best[2]
        facts[f"{prefix}.options"] = best[3]
    return facts
