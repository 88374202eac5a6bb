"""The baseline pack: the same benchmarks on both sides (suite.py says which and how),
their outputs read by pure parsers (parsers.py), and what a host's check says (here)."""

from dataclasses import dataclass

from collectors.baseline.parsers import (
    BenchmarkOutputError,
    parse_benchmark,
    parse_import,
)
from collectors.baseline.suite import (
    BENCHMARKS,
    BY_KEY,
    GROUP_LABELS,
    GROUPS,
    SCRIPT,
    Benchmark,
    Metric,
    benchmark_argv,
    benchmarks_of,
    metric_of,
    validate_scratch_dir,
)

__all__ = [
    "BENCHMARKS",
    "BY_KEY",
    "GROUPS",
    "GROUP_LABELS",
    "SCRIPT",
    "Benchmark",
    "BenchmarkOutputError",
    "HostCheck",
    "Metric",
    "benchmark_argv",
    "benchmarks_of",
    "metric_of",
    "parse_benchmark",
    "parse_check",
    "parse_import",
    "probe_argv",
    "validate_scratch_dir",
]


@dataclass(frozen=True)
class HostCheck:
    cpus: int
    tools: frozenset[str]
    scratch_writable: bool
    direct_io: bool
    free_mb: int | None


def probe_argv(step: str, *words) -> list[str]:
    """The probe script's step with its words (the script goes on standard input)."""
    return ["sh", "-s", "--", step, *(str(word) for word in words)]


def parse_check(text: str) -> HostCheck:
    values: dict[str, str] = {}
    tools = set()
    for line in text.splitlines():
        key, _, value = line.partition("=")
        if key == "tool":
            tools.add(value.strip())
        elif key:
            values[key] = value.strip()
    cpus = values.get("cpus", "")
    free = values.get("free_mb", "")
    return HostCheck(
        cpus=int(cpus) if cpus.isdigit() and int(cpus) > 0 else 1,
        tools=frozenset(tools),
        scratch_writable=values.get("scratch") != "unwritable" and "direct" in values,
        direct_io=values.get("direct") == "yes",
        free_mb=int(free) if free.isdigit() else None,
    )
