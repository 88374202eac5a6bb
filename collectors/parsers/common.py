"""Small readers shared by the parsers."""


def path_values(text: str) -> dict[str, str]:
    """`grep -H . FILES` output: {path: value}. Paths never contain ':' here."""
    values = {}
    for line in text.splitlines():
        path, sep, value = line.partition(":")
        if sep and path and " " not in path:
            values[path] = value.strip()
    return values


def key_values(text: str, sep: str = "=") -> dict[str, str]:
    """`key=value` lines (the first separator splits)."""
    values = {}
    for line in text.splitlines():
        key, found, value = line.partition(sep)
        if found:
            values[key.strip()] = value.strip()
    return values


def basename(path: str) -> str:
    return path.rstrip("/").rsplit("/", 1)[-1]


def number(value: str) -> int | float | str:
    """An int or float when the text is one, else the text itself."""
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def selected(value: str) -> str:
    """The [bracketed] choice of a sysfs list such as `always [madvise] never`."""
    start, end = value.find("["), value.find("]")
    if start == -1 or end < start:
        return value.strip()
    return value[start + 1 : end]


def cpu_list_count(value: str) -> int:
    """How many CPUs a list such as `0-5,48-53` names."""
    count = 0
    for part in value.strip().split(","):
        if not part:
            continue
        low, _, high = part.partition("-")
        count += int(high) - int(low) + 1 if high else 1
    return count
