"""Host samples taken during a load step: vmstat (every second) and mpstat (per CPU).

Pure: the tools' text in, time series out. A series is a list with one entry a second; a
step keeps the series and their means.
"""

VMSTAT_COLUMNS = ("r", "b", "in", "cs", "us", "sy", "id", "wa", "st")
# mpstat's columns, without the %: user, nice, system, iowait, hard and soft interrupts,
# steal, guest, guest nice, idle.
MPSTAT_COLUMNS = ("usr", "nice", "sys", "iowait", "irq", "soft", "steal", "guest", "gnice", "idle")


def _text(data: str | bytes) -> str:
    """The tools' output as text, whether it came as text or bytes (numbers are ASCII)."""
    if isinstance(data, bytes | bytearray | memoryview):
        return bytes(data).decode("utf-8", "replace")
    return data


def parse_vmstat(text: str | bytes) -> list[dict[str, int]]:
    """`vmstat -n 1 N`: one dict a second (run queue, interrupts, context switches, CPU %).

    vmstat's first line averages since boot: it is left out.
    """
    text = _text(text)
    lines = [line.split() for line in text.splitlines() if line.strip()]
    header = next((i for i, words in enumerate(lines) if words[:2] == ["r", "b"]), None)
    if header is None:
        raise ValueError("no vmstat header line (r b swpd ...)")
    names = lines[header]
    samples = []
    for words in lines[header + 2 :]:
        if len(words) != len(names) or not all(word.isdigit() for word in words):
            continue
        row = dict(zip(names, (int(word) for word in words), strict=True))
        samples.append({name: row[name] for name in VMSTAT_COLUMNS if name in row})
    return samples


def parse_mpstat(text: str | bytes) -> list[dict[str, dict[str, float]]]:
    """`LC_ALL=C mpstat -P ALL 1 N`: one {cpu: {usr, sys, soft, steal, ...}} a second.

    "all" is the whole host; "0", "1", ... each CPU. The closing Average: block is left out
    (a step that was stopped early has none): average_per_cpu() takes the mean instead.
    """
    text = _text(text)
    series: list[dict[str, dict[str, float]]] = []
    names: list[str] | None = None
    for line in text.splitlines():
        words = line.split()
        if not words or words[0] == "Average:":
            continue
        if "CPU" in words:
            at = words.index("CPU")
            names = [name.lstrip("%") for name in words[at + 1 :]]
            series.append({})
            continue
        if names is None or not series:
            continue
        # A time stamp of one or two words ("08:49:04", "08:49:04 AM"), the CPU, the values.
        values = words[-len(names) :]
        cpu = words[-len(names) - 1] if len(words) > len(names) else None
        try:
            numbers = [float(value) for value in values]
        except ValueError:
            continue
        if cpu is not None and (cpu == "all" or cpu.isdigit()):
            series[-1][cpu] = {
                name: number
                for name, number in zip(names, numbers, strict=True)
                if name in MPSTAT_COLUMNS
            }
    if names is None:
        raise ValueError("no mpstat header line (CPU %usr %nice ...)")
    return [entry for entry in series if entry]


def average(samples: list[dict[str, int]]) -> dict[str, float]:
    """The mean of each column over the samples (empty when there are none)."""
    if not samples:
        return {}
    keys = samples[0].keys()
    return {key: round(sum(s.get(key, 0) for s in samples) / len(samples), 2) for key in keys}


def average_per_cpu(series: list[dict[str, dict[str, float]]]) -> dict[str, dict[str, float]]:
    """The mean of each CPU's columns over an mpstat series."""
    cpus = {cpu for entry in series for cpu in entry}
    return {cpu: average([entry[cpu] for entry in series if cpu in entry]) for cpu in cpus}


def busiest_cpu(per_cpu: dict[str, dict[str, float]]) -> tuple[str, float] | None:
    """The single CPU with the least idle time, and how busy it was (% of that CPU).

    One CPU far busier than the host's mean is the mark of interrupts or one hot thread
    pinned to a core: the host average hides it.
    """
    cpus = {cpu: values for cpu, values in per_cpu.items() if cpu != "all" and "idle" in values}
    if not cpus:
        return None
    cpu = min(cpus, key=lambda name: (cpus[name]["idle"], int(name)))
    return cpu, round(100 - cpus[cpu]["idle"], 2)
