"""Pure parsers of the baseline tools' outputs: text in, {metric key: value} out.

Machine-readable output where the tool has it (fio --output-format=json, iperf3 -J), the
documented text otherwise. A text that is not what the tool prints raises
BenchmarkOutputError, which says what was expected.
"""

import re

from collectors.jsontext import JsonRefused, read_json
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _


class BenchmarkOutputError(ValueError):
    def __init__(self, phrase: Phrase):
        super().__init__(phrase)
        self.phrase = phrase


def _refuse(tool: str, expected: str) -> BenchmarkOutputError:
    return BenchmarkOutputError(
        Phrase(_("not %(tool)s output: %(expected)s not found"), tool=tool, expected=expected)
    )


def _number(pattern: str, text: str, tool: str, expected: str) -> float:
    match = re.search(pattern, text, re.MULTILINE)
    if match is None:
        raise _refuse(tool, expected)
    return float(match.group(1))


def parse_sysbench_cpu(text: str) -> dict[str, float]:
    return {
        "events_per_second": _number(
            r"events per second:\s*([0-9.]+)", text, "sysbench cpu", "events per second"
        )
    }


def parse_sysbench_memory(text: str) -> dict[str, float]:
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


def parse_sched_pipe(text: str) -> dict[str, float]:
    return {
        "usecs_per_op": _number(
            r"^[ \t]*([0-9.]+) usecs/op", text, "perf bench sched pipe", "usecs/op"
        )
    }


def parse_stress_ng(text: str) -> dict[str, float]:
    """--metrics-brief: the bogo ops a second in real time of the stressor's row."""
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


def parse_fio_json(text: str) -> dict[str, float]:
    """The four jobs of the pack (randread, randwrite, seqread, seqwrite), or any of them
    in a file made elsewhere (a job is recognised by its rw mode)."""
    tool, expected = "fio --output-format=json", "a JSON object with jobs"
    data = _json(text[text.find("{") :] if "{" in text else text, tool, expected)
    try:
        jobs = data["jobs"]
    except (KeyError, TypeError):
        raise _refuse("fio --output-format=json", "a JSON object with jobs") from None
    shared = data.get("global options") or {}
    values: dict[str, float] = {}
    for job in jobs:
        if not isinstance(job, dict):
            raise _refuse("fio --output-format=json", "a JSON object with jobs")
        options = job.get("job options") or {}
        mode = options.get("rw") or shared.get("rw") or job.get("jobname", "")
        try:
            if mode in ("randread", "randwrite"):
                side = job[mode.removeprefix("rand")]
                values[f"{mode}_iops"] = float(side["iops"])
                values[f"{mode}_latency_us"] = float(side["clat_ns"]["mean"]) / 1000
            elif mode in ("read", "write", "seqread", "seqwrite"):
                operation = mode.removeprefix("seq")
                # bw is KiB/s; the table says MB/s as fio and dd print it.
                values[f"seq{operation}_mb_per_second"] = job[operation]["bw"] * 1024 / 1e6
        except (KeyError, TypeError, ValueError):
            raise _refuse("fio --output-format=json", f"the job {mode}'s results") from None
    if not values:
        raise _refuse("fio --output-format=json", "a randread, randwrite, read or write job")
    return values


def parse_iperf3_json(text: str) -> dict[str, float]:
    data = _json(text, "iperf3 -J", "a JSON object")
    if not isinstance(data, dict):
        raise _refuse("iperf3 -J", "a JSON object")
    if data.get("error"):
        raise BenchmarkOutputError(
            Phrase(_("iperf3 failed: %(error)s"), error=str(data["error"])[:300])
        )
    try:
        bits = data["end"]["sum_received"]["bits_per_second"]
    except (KeyError, TypeError):
        raise _refuse("iperf3 -J", "end.sum_received.bits_per_second") from None
    return {"gbit_per_second": float(bits) / 1e9}


_TIME_UNITS = {"ns": 0.001, "us": 1.0, "ms": 1000.0, "sec": 1e6, "s": 1e6}


def parse_qperf_latency(text: str) -> dict[str, float]:
    match = re.search(r"latency\s*=\s*([0-9.]+)\s*(ns|us|ms|sec|s)\b", text)
    if match is None:
        raise _refuse("qperf tcp_lat", "latency = ...")
    return {"latency_us": float(match.group(1)) * _TIME_UNITS[match.group(2)]}


def parse_ping(text: str) -> dict[str, float]:
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


def parse_import(text: str) -> tuple[str, dict[str, float]]:
    """A result made elsewhere (fio JSON, iperf3 JSON, sysbench cpu or memory text):
    (the benchmark it is, its values). Refused with what is understood otherwise."""
    stripped = text.lstrip()
    if stripped.startswith("{"):
        try:
            data = read_json(stripped)
        except JsonRefused as error:
            if not error.syntax:
                raise BenchmarkOutputError(error.phrase) from None
            data = None
        if isinstance(data, dict) and "jobs" in data:
            return "fio", parse_fio_json(stripped)
        if isinstance(data, dict) and ("end" in data or "error" in data):
            return "iperf3", parse_iperf3_json(stripped)
    test = sysbench_test(text)
    if test == "cpu":
        threads = re.search(r"Number of threads: (\d+)", text)
        benchmark = "cpu_1" if threads and threads.group(1) == "1" else "cpu_all"
        return benchmark, parse_sysbench_cpu(text)
    if test in ("memory read", "memory write"):
        return test.replace(" ", "_"), parse_sysbench_memory(text)
    raise BenchmarkOutputError(
        Phrase(
            _(
                "not a result Perfcase reads: fio --output-format=json, iperf3 -J, or the "
                "text of sysbench cpu or sysbench memory"
            )
        )
    )
