"""The baseline pack: which benchmarks, what each measures, and the command that runs it.

Every benchmark is defined once here (its group, tool, metrics with their unit and
direction, its command), so that the plan that runs it, the parsers that read it, the
table that compares it and the README say the same thing. Values a person typed (the
scratch directory) are checked against a strict grammar first and passed as words of
their own: nothing reaches a shell unquoted.
"""

import re
from dataclasses import dataclass
from pathlib import Path

from collectors.loadrun import STOPPABLE
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _

GROUPS = ("compute", "memory", "disk", "network")
GROUP_LABELS = {
    "compute": _("Compute"),
    "memory": _("Memory"),
    "disk": _("Disk"),
    "network": _("Network"),
}
DEFAULT_SECONDS, MAX_SECONDS = 5, 60
DEFAULT_REPEAT, MAX_REPEAT = 3, 9
DEFAULT_SCRATCH_DIR = "/var/tmp"
# The fio scratch file: big enough to leave the page cache behind with direct I/O, small
# enough for any /var/tmp.
DEFAULT_FILE_MB, MAX_FILE_MB = 256, 4096
SCHED_PIPE_LOOPS = 50_000
PING_COUNT = 10

SCRIPT = (STOPPABLE + (Path(__file__).parents[1] / "probes" / "baseline.sh").read_text()).encode()

# An absolute directory of plain path words: no spaces, no "..", nothing fio reads as syntax
# (fio splits file names at ":"). One character class under one quantifier: a pattern that
# nests quantifiers over the same characters backtracks exponentially on a refused value.
_DIRECTORY = re.compile(r"^/[A-Za-z0-9_.+/-]*\Z")
MAX_SCRATCH_DIR = 1024


def validate_scratch_dir(value: str) -> str:
    value = (value or "").strip() or DEFAULT_SCRATCH_DIR
    if len(value) > MAX_SCRATCH_DIR:
        raise ValueError(
            Phrase(
                _("A scratch directory has at most %(count)s characters."), count=MAX_SCRATCH_DIR
            )
        )
    words = f"{value}/"
    if not _DIRECTORY.match(value) or "//" in value or "/../" in words or "/./" in words:
        raise ValueError(
            Phrase(
                _(
                    "An absolute directory such as /var/tmp: letters, digits and _ . + - "
                    "between the slashes, no .. and no spaces."
                )
            )
        )
    if value.split("/")[1] in ("dev", "proc", "sys"):
        raise ValueError(Phrase(_("A directory on a filesystem, never under /dev, /proc or /sys.")))
    return value.rstrip("/") or "/"


@dataclass(frozen=True)
class Metric:
    key: str
    label: str  # marked for translation where it is read
    unit: str
    higher_is_better: bool


@dataclass(frozen=True)
class Benchmark:
    key: str
    group: str
    tool: str
    label: str
    metrics: tuple[Metric, ...]
    # How long one repetition runs, in the pack's seconds (its command's limit adds slack).
    runs_for: str = "seconds"  # "seconds", "fixed" (a fixed amount of work) or "fio"
    network: bool = False  # run from the load generator to the service of the same side
    imported: bool = False  # only read from files made elsewhere: the pack does not run it

    def seconds(self, seconds: int) -> int:
        """How long one repetition may take at most."""
        if self.runs_for == "fio":
            return 4 * seconds + 60  # four jobs, and laying out the file
        if self.runs_for == "fixed":
            return 60
        return seconds + 30


EVENTS = Metric("events_per_second", _("events a second"), "events/s", True)
BOGO = Metric("bogo_ops_per_second", _("bogo operations a second"), "bogo ops/s", True)
BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark("cpu_1", "compute", "sysbench", _("sysbench cpu, 1 thread"), (EVENTS,)),
    Benchmark("cpu_all", "compute", "sysbench", _("sysbench cpu, a thread per CPU"), (EVENTS,)),
    Benchmark(
        "sched_pipe",
        "compute",
        "perf",
        _("scheduler latency (perf bench sched pipe)"),
        (Metric("usecs_per_op", _("time a round trip"), "µs/op", False),),
        runs_for="fixed",
    ),
    Benchmark("stress_matrix", "compute", "stress-ng", _("stress-ng matrix"), (BOGO,)),
    Benchmark("stress_crypt", "compute", "stress-ng", _("stress-ng crypt"), (BOGO,)),
    Benchmark(
        "memory_read",
        "memory",
        "sysbench",
        _("sysbench memory read bandwidth"),
        (Metric("mib_per_second", _("bandwidth"), "MiB/s", True),),
    ),
    Benchmark(
        "memory_write",
        "memory",
        "sysbench",
        _("sysbench memory write bandwidth"),
        (Metric("mib_per_second", _("bandwidth"), "MiB/s", True),),
    ),
    Benchmark(
        "fio",
        "disk",
        "fio",
        _("fio on a scratch file"),
        (
            Metric("randread_iops", _("random read, 4 KiB"), "IOPS", True),
            Metric("randread_latency_us", _("random read latency"), "µs", False),
            Metric("randwrite_iops", _("random write, 4 KiB"), "IOPS", True),
            Metric("randwrite_latency_us", _("random write latency"), "µs", False),
            Metric("seqread_mb_per_second", _("sequential read, 1 MiB"), "MB/s", True),
            Metric("seqwrite_mb_per_second", _("sequential write, 1 MiB"), "MB/s", True),
        ),
        runs_for="fio",
    ),
    Benchmark(
        "fio_randrw",
        "disk",
        "fio",
        _("fio mixed random read and write (randrw), imported"),
        (
            Metric("read_iops", _("mixed random read, IOPS"), "IOPS", True),
            Metric("read_latency_us", _("mixed random read latency"), "µs", False),
            Metric("write_iops", _("mixed random write, IOPS"), "IOPS", True),
            Metric("write_latency_us", _("mixed random write latency"), "µs", False),
        ),
        runs_for="fio",
        imported=True,
    ),
    Benchmark(
        "iperf3",
        "network",
        "iperf3",
        _("iperf3 throughput, load generator to service"),
        (Metric("gbit_per_second", _("throughput"), "Gbit/s", True),),
        network=True,
    ),
    Benchmark(
        "qperf_tcp_lat",
        "network",
        "qperf",
        _("qperf small-message TCP latency"),
        (Metric("latency_us", _("one-way latency"), "µs", False),),
        network=True,
    ),
    Benchmark(
        "ping",
        "network",
        "ping",
        _("ping round trip"),
        (Metric("rtt_ms", _("average round trip"), "ms", False),),
        runs_for="fixed",
        network=True,
    ),
)
BY_KEY = {benchmark.key: benchmark for benchmark in BENCHMARKS}
TOOLS = sorted({benchmark.tool for benchmark in BENCHMARKS})
SERVER_TOOLS = ("iperf3", "qperf")


def metric_of(benchmark: str, metric: str) -> Metric | None:
    found = BY_KEY.get(benchmark)
    return next((m for m in found.metrics if m.key == metric), None) if found else None


def benchmarks_of(groups) -> list[Benchmark]:
    """The pack's benchmarks of these groups, in the pack's order."""
    return [
        benchmark
        for benchmark in BENCHMARKS
        if benchmark.group in set(groups) and not benchmark.imported
    ]


def benchmark_argv(
    benchmark: Benchmark,
    *,
    seconds: int,
    cpus: int = 1,
    scratch_file: str = "",
    file_mb: int = DEFAULT_FILE_MB,
    direct: bool = True,
    server: str = "",
    port: int = 0,
) -> list[str]:
    """The words of one repetition's command (run under the pack's wrapper)."""
    key, time = benchmark.key, f"--time={seconds}"
    if key in ("cpu_1", "cpu_all"):
        threads = 1 if key == "cpu_1" else max(1, cpus)
        return ["sysbench", "cpu", f"--threads={threads}", time, "run"]
    if key == "sched_pipe":
        return ["perf", "bench", "sched", "pipe", "-l", str(SCHED_PIPE_LOOPS)]
    if key in ("stress_matrix", "stress_crypt"):
        method = key.removeprefix("stress_")
        return ["stress-ng", f"--{method}", "1", "--timeout", f"{seconds}s", "--metrics-brief"]
    if key in ("memory_read", "memory_write"):
        return [
            "sysbench",
            "memory",
            f"--memory-oper={key.removeprefix('memory_')}",
            "--memory-block-size=1M",
            "--memory-total-size=100000G",
            time,
            "run",
        ]
    if key == "fio":
        return fio_argv(scratch_file, seconds=seconds, file_mb=file_mb, direct=direct)
    if key == "iperf3":
        return ["iperf3", "-c", server, "-p", str(port), "-t", str(seconds), "-J"]
    if key == "qperf_tcp_lat":
        return ["qperf", server, "-lp", str(port), "-t", str(seconds), "tcp_lat"]
    if key == "ping":
        return ["ping", "-q", "-n", "-c", str(PING_COUNT), "-i", "0.2", server]
    raise ValueError(f"no command for {key!r}")


def fio_argv(scratch_file: str, *, seconds: int, file_mb: int, direct: bool) -> list[str]:
    """Four jobs, one after the other (stonewall): random 4 KiB reads and writes, then
    sequential 1 MiB reads and writes, each for `seconds`, on one scratch file; the probe
    script removes the file whatever happens."""
    common = [
        f"--filename={scratch_file}",
        f"--size={file_mb}M",
        f"--direct={1 if direct else 0}",
        "--ioengine=psync",
        "--time_based",
        f"--runtime={seconds}",
        "--group_reporting",
        "--output-format=json",
    ]
    jobs = []
    for name, rw, block in (
        ("randread", "randread", "4k"),
        ("randwrite", "randwrite", "4k"),
        ("seqread", "read", "1M"),
        ("seqwrite", "write", "1M"),
    ):
        jobs += [f"--name={name}", f"--rw={rw}", f"--bs={block}", "--stonewall"]
    return ["fio", *common, *jobs]
