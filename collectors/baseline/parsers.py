"""Pure parsers of the baseline tools' outputs: text in, {metric key: value} out.

Machine-readable output where the tool has it (fio --output-format=json, iperf3 -J), the
documented text otherwise. A text that is not what the tool prints raises
BenchmarkOutputError, which says what was expected.
"""

import re
from dataclasses import dataclass, field

from collectors.jsontext import JsonRefused, read_json
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _


class BenchmarkOutputError(ValueError):
    def __init__(self, phrase: Phrase):
        super().__init__(phrase)
        self.phrase = phrase


def as_text(data: str | bytes) -> str:
    """A tool's output as text, whether it came as text or as bytes (read as UTF-8, a byte
    that is not UTF-8 replaced: the numbers read here are ASCII)."""
    if isinstance(data, bytes | bytearray | memoryview):
        data = bytes(data).decode("utf-8", "replace")
    if not isinstance(data, str):
        raise BenchmarkOutputError(
            Phrase(
                _("expected a tool's output as text or bytes, found %(type)s"),
                type=type(data).__name__,
            )
        )
    return data.removeprefix("\ufeff")  # a byte-order mark is no part of the output


def _refuse(tool: str, expected: str) -> BenchmarkOutputError:
    return BenchmarkOutputError(
        Phrase(_("not %(tool)s output: %(expected)s not found"), tool=tool, expected=expected)
    )


def _number(pattern: str, text: str, tool: str, expected: str) -> float:
    match = re.search(pattern, text, re.MULTILINE)
    if match is None:
        raise _refuse(tool, expected)
    return float(match.group(1))


def parse_sysbench_cpu(text: str | bytes) -> dict[str, float]:
    text = as_text(text)
    return {
        "events_per_second": _number(
            r"events per second:\s*([0-9.]+)", text, "sysbench cpu", "events per second"
        )
    }


def parse_sysbench_memory(text: str | bytes) -> dict[str, float]:
    text = as_text(text)
    return {
        "mib_per_second": _number(
            r"MiB transferred \(([0-9.]+) MiB/sec\)", text, "sysbench memory", "MiB/sec"
        )
    }


def sysbench_test(text: str) -> str | None:
    """Which sysbench test printed this: "cpu", "memory read", "memory write", or None."""
    if "events per second:" in text:
        return "cpu"
    operation = re.search(r"^[ \t]*operation: (read|write)", text, re.MULTILINE)
    if "MiB transferred" in text and operation:
        return f"memory {operation.group(1)}"
    return None


def parse_sched_pipe(text: str | bytes) -> dict[str, float]:
    text = as_text(text)
    return {
        "usecs_per_op": _number(
            r"^[ \t]*([0-9.]+) usecs/op", text, "perf bench sched pipe", "usecs/op"
        )
    }


def parse_stress_ng(text: str | bytes) -> dict[str, float]:
    """--metrics-brief: the bogo ops a second in real time of the stressor's row."""
    text = as_text(text)
    for line in text.splitlines():
        fields = line.split("] ", 1)[-1].split()
        # stressor, bogo ops, real time, usr time, sys time, bogo ops/s (real), (usr+sys)
        if len(fields) == 7 and fields[1].isdigit():
            try:
                return {"bogo_ops_per_second": float(fields[5])}
            except ValueError:
                continue
    raise _refuse("stress-ng --metrics-brief", "a stressor's bogo ops/s")


def _json(text: str, tool: str, expected: str):
    """The JSON value of a tool's output; malformed JSON is refused as not the tool's output,
    JSON past the reader's limits (depth, number length, size) with the limit it passed."""
    try:
        return read_json(text)
    except JsonRefused as error:
        if error.syntax:
            raise _refuse(tool, expected) from None
        raise BenchmarkOutputError(
            Phrase(_("not %(tool)s output: %(problem)s"), tool=tool, problem=error.phrase)
        ) from None


def _fio_document(text: str) -> str:
    """The JSON of fio's report: all of it with --output-format=json, the part between the
    text with --output-format=normal,json (fio writes its JSON object's braces at the start
    of their lines and the inner ones indented, so the object is the first line `{` to the
    next line `}`)."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        return stripped
    start = text.find("\n{")
    if start < 0:
        return text
    end = text.find("\n}", start)
    return text[start + 1 : end + 2] if end >= 0 else text[start + 1 :]


_RANDOM = ("randread", "randwrite")
_SEQUENTIAL = ("read", "write", "seqread", "seqwrite")
_MIXED = ("randrw", "randreadwrite")


@dataclass
class FioJobs:
    """The values of a fio report's jobs, and the jobs left out (by reason, first few named)."""

    values: dict[str, float] = field(default_factory=dict)  # the pack's jobs (benchmark fio)
    mixed: dict[str, float] = field(default_factory=dict)  # a randrw job (fio_randrw)
    skipped: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)
    jobs: int = 0


def _fio_job(job: dict, shared: dict, read: FioJobs) -> None:
    options = job.get("job options") or {}
    mode = (
        options.get("rw") or options.get("readwrite") or shared.get("rw") or job.get("jobname", "")
    )
    mode = str(mode)
    values = read.values
    if mode in _RANDOM:
        side = job[mode.removeprefix("rand")]
        values[f"{mode}_iops"] = float(side["iops"])
        values[f"{mode}_latency_us"] = float(side["clat_ns"]["mean"]) / 1000
    elif mode in _MIXED:
        # A mixed job's reads and writes share one queue: its own figures, never the
        # pure random read's and write's.
        for operation in ("read", "write"):
            read.mixed[f"{operation}_iops"] = float(job[operation]["iops"])
            read.mixed[f"{operation}_latency_us"] = float(job[operation]["clat_ns"]["mean"]) / 1000
    elif mode in _SEQUENTIAL:
        operation = mode.removeprefix("seq")
        # bw is KiB/s; the table says MB/s as fio and dd print it.
        values[f"seq{operation}_mb_per_second"] = job[operation]["bw"] * 1024 / 1e6
    else:
        reason = "a job whose rw mode is not read here"
        read.skipped[reason] = read.skipped.get(reason, 0) + 1
        if len(read.examples) < 5:
            read.examples.append(f"job {str(job.get('jobname', '?'))[:80]!r}: rw={mode[:40]}")


def read_fio_json(text: str | bytes) -> FioJobs:
    """The random read and write, mixed random (randrw) and sequential jobs of a fio report
    (--output-format=json, or normal,json: the text around the JSON left out), each job
    recognised by its rw mode; jobs of other modes are counted as skipped."""
    tool, expected = "fio --output-format=json", "a JSON object with jobs"
    data = _json(_fio_document(as_text(text)), tool, expected)
    try:
        jobs = data["jobs"]
    except (KeyError, TypeError):
        raise _refuse(tool, expected) from None
    shared = data.get("global options") or {}
    if not isinstance(jobs, list) or not isinstance(shared, dict):
        raise _refuse(tool, expected)
    read = FioJobs(jobs=len(jobs))
    for job in jobs:
        if not isinstance(job, dict) or not isinstance(job.get("job options") or {}, dict):
            raise _refuse(tool, expected)
        try:
            _fio_job(job, shared, read)
        except (KeyError, TypeError, ValueError, AttributeError):
            name = str(job.get("jobname", "?"))[:80]
            raise _refuse(tool, f"the job {name}'s results") from None
    if not read.values and not read.mixed:
        raise _refuse(tool, "a randread, randwrite, randrw, read or write job")
    return read


def parse_fio_json(text: str | bytes) -> dict[str, float]:
    """The four jobs of the pack (randread, randwrite, seqread, seqwrite), or any of them
    in a file made elsewhere (a job is recognised by its rw mode; randrw: read_fio_json)."""
    read = read_fio_json(text)
    if not read.values:
        raise _refuse("fio --output-format=json", "a randread, randwrite, read or write job")
    return read.values


def parse_iperf3_json(text: str | bytes) -> dict[str, float]:
    data = _json(as_text(text), "iperf3 -J", "a JSON object")
    if not isinstance(data, dict):
        raise _refuse("iperf3 -J", "a JSON object")
    try:
        received = data["end"]["sum_received"]
        bits, size = received["bits_per_second"], received.get("bytes")
    except (KeyError, TypeError, AttributeError):
        received = bits = size = None
    # iperf3 fills sum_received from the receiver's report; when none came (the test was
    # stopped, the server went away) it writes zeros: nothing was measured, not 0 Gbit/s.
    error = str(data.get("error") or "")[:300]
    if received is not None and not bits and not size:
        sent = data["end"].get("sum_sent")
        sent = sent.get("bytes") if isinstance(sent, dict) else None
        raise BenchmarkOutputError(
            Phrase(
                _(
                    "iperf3: the receiver reported nothing (%(sent)s bytes sent, none reported "
                    "received)%(why)s: no throughput was measured"
                ),
                sent=f"{sent:,}" if isinstance(sent, int) else "no",
                why=f"; iperf3 said: {error}" if error else "",
            )
        )
    if error:
        raise BenchmarkOutputError(Phrase(_("iperf3 failed: %(error)s"), error=error))
    if received is None:
        raise _refuse("iperf3 -J", "end.sum_received.bits_per_second")
    try:
        return {"gbit_per_second": float(bits) / 1e9}
    except (TypeError, ValueError):
        raise _refuse("iperf3 -J", "end.sum_received.bits_per_second") from None


_TIME_UNITS = {"ns": 0.001, "us": 1.0, "ms": 1000.0, "sec": 1e6, "s": 1e6}


def parse_qperf_latency(text: str | bytes) -> dict[str, float]:
    text = as_text(text)
    match = re.search(r"latency\s*=\s*([0-9.]+)\s*(ns|us|ms|sec|s)\b", text)
    if match is None:
        raise _refuse("qperf tcp_lat", "latency = ...")
    return {"latency_us": float(match.group(1)) * _TIME_UNITS[match.group(2)]}


def parse_ping(text: str | bytes) -> dict[str, float]:
    text = as_text(text)
    received = re.search(r"\b(\d+) packets transmitted, (\d+) (?:packets )?received", text)
    if received and int(received.group(2)) == 0:
        raise BenchmarkOutputError(Phrase(_("ping: no reply")))
    return {
        "rtt_ms": _number(
            r"min/avg/max/(?:mdev|stddev) = [0-9.]+/([0-9.]+)/", text, "ping", "min/avg/max"
        )
    }


PARSERS = {
    "cpu_1": parse_sysbench_cpu,
    "cpu_all": parse_sysbench_cpu,
    "sched_pipe": parse_sched_pipe,
    "stress_matrix": parse_stress_ng,
    "stress_crypt": parse_stress_ng,
    "memory_read": parse_sysbench_memory,
    "memory_write": parse_sysbench_memory,
    "fio": parse_fio_json,
    "iperf3": parse_iperf3_json,
    "qperf_tcp_lat": parse_qperf_latency,
    "ping": parse_ping,
}


def parse_benchmark(benchmark: str, text: str) -> dict[str, float]:
    return PARSERS[benchmark](text)


@dataclass
class Imported:
    """A result made elsewhere: {benchmark: {metric: value}} (one benchmark, or fio's pack
    jobs and a randrw job), and what was left out."""

    results: dict[str, dict[str, float]]
    skipped: dict[str, int] = field(default_factory=dict)
    examples: list[str] = field(default_factory=list)


def _fio_imported(fio: FioJobs) -> Imported:
    results = {"fio": fio.values, "fio_randrw": fio.mixed}
    return Imported(
        {key: values for key, values in results.items() if values}, fio.skipped, fio.examples
    )


def read_import(data: str | bytes) -> Imported:
    """A result made elsewhere (fio JSON or normal,json, iperf3 JSON, sysbench cpu or memory
    text), as text or bytes. Refused with what is understood otherwise."""
    text = as_text(data)
    stripped = text.lstrip()
    if '"fio version"' in text[:200_000]:
        return _fio_imported(read_fio_json(text))
    if stripped.startswith("{"):
        try:
            found = read_json(stripped)
        except JsonRefused as error:
            if not error.syntax:
                raise BenchmarkOutputError(error.phrase) from None
            found = None
        if isinstance(found, dict) and "jobs" in found:
            return _fio_imported(read_fio_json(stripped))
        if isinstance(found, dict) and ("end" in found or "error" in found):
            return Imported({"iperf3": parse_iperf3_json(stripped)})
    test = sysbench_test(text)
    if test == "cpu":
        threads = re.search(r"Number of threads: (\d+)", text)
        benchmark = "cpu_1" if threads and threads.group(1) == "1" else "cpu_all"
        return Imported({benchmark: parse_sysbench_cpu(text)})
    if test in ("memory read", "memory write"):
        return Imported({test.replace(" ", "_"): parse_sysbench_memory(text)})
    raise BenchmarkOutputError(
        Phrase(
            _(
                "not a result Perfcase reads: fio --output-format=json, iperf3 -J, or the "
                "text of sysbench cpu or sysbench memory"
            )
        )
    )


def parse_import(data: str | bytes) -> tuple[str, dict[str, float]]:
    """(the benchmark a result made elsewhere is, its values): see read_import (a fio
    report's pack jobs when it has both those and a randrw job)."""
    return next(iter(read_import(data).results.items()))
