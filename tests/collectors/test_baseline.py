"""The baseline pack's pure parts: its parsers on real outputs of the real tools
(data/baseline/, see data/README.md), its commands, and the checks of what people type."""

from pathlib import Path

import pytest

from collectors.baseline import (
    BENCHMARKS,
    BY_KEY,
    BenchmarkOutputError,
    benchmark_argv,
    parse_benchmark,
    parse_check,
    parse_import,
    validate_scratch_dir,
)
from collectors.baseline.parsers import (
    parse_fio_json,
    parse_iperf3_json,
    parse_ping,
    parse_qperf_latency,
    parse_sched_pipe,
    parse_stress_ng,
    parse_sysbench_cpu,
    parse_sysbench_memory,
)

DATA = Path(__file__).parent / "data" / "baseline"


def read(name: str) -> str:
    return (DATA / name).read_text()


def test_every_tool_output_is_read_as_its_metrics():
    assert parse_sysbench_cpu(read("sysbench-cpu-1-thread.txt")) == {
        "events_per_second": 3366.12
    }
    assert parse_sysbench_memory(read("sysbench-memory-read.txt")) == {
        "mib_per_second": 44718.58
    }
    assert parse_sched_pipe(read("perf-bench-sched-pipe.txt")) == {"usecs_per_op": 1.9741}
    # The real-time column, not the usr+sys one (5475.19).
    assert parse_stress_ng(read("stress-ng-matrix.txt")) == {"bogo_ops_per_second": 5408.75}
    assert parse_qperf_latency(read("qperf-tcp-lat.txt")) == {"latency_us": 2.4}
    assert parse_ping(read("ping.txt")) == {"rtt_ms": 0.086}
    assert parse_iperf3_json(read("iperf3.json"))["gbit_per_second"] == pytest.approx(23.466, 1e-3)


def test_fio_json_gives_iops_latency_and_throughput_of_the_four_jobs():
    values = parse_fio_json(read("fio-pack.json"))

    assert set(values) == {metric.key for metric in BY_KEY["fio"].metrics}
    assert values["randread_iops"] == pytest.approx(14087.912, 1e-6)
    assert values["randread_latency_us"] == pytest.approx(70.408, 1e-4)  # clat mean, ns -> µs
    assert values["randwrite_iops"] == pytest.approx(16040.959, 1e-6)
    # bw is KiB/s: 1518097 KiB/s is 1554.5 MB/s.
    assert values["seqread_mb_per_second"] == pytest.approx(1554.531, 1e-5)


def test_a_single_job_made_elsewhere_is_read_by_its_rw_mode():
    values = parse_fio_json(read("fio-randread-buffered.json"))

    assert set(values) == {"randread_iops", "randread_latency_us"}
    assert values["randread_iops"] > 0


@pytest.mark.parametrize(
    "text, unit, microseconds",
    [
        ("tcp_lat:\n    latency  =  850 ns\n", "ns", 0.85),
        ("tcp_lat:\n    latency  =  2.34 us\n", "us", 2.34),
        ("tcp_lat:\n    latency  =  1.5 ms\n", "ms", 1500.0),
    ],
)
def test_qperf_latency_is_read_in_any_of_its_units(text, unit, microseconds):
    assert parse_qperf_latency(text)["latency_us"] == pytest.approx(microseconds)


@pytest.mark.parametrize(
    "benchmark, text, words",
    [
        ("cpu_1", "sysbench 1.0.20\nFATAL: no such test\n", "events per second"),
        ("memory_read", "", "MiB/sec"),
        ("fio", "fio: pid=0, err=22/file:filesetup.c", "jobs"),
        ("fio", '{"jobs": [{"jobname": "x", "job options": {"rw": "trim"}}]}', "randread"),
        ("iperf3", "not json", "a JSON object"),
        ("qperf_tcp_lat", "failed to connect", "latency"),
        ("stress_matrix", "stress-ng: error: [1] matrix: unknown", "bogo ops/s"),
        ("ping", "ping: unknown host", "min/avg/max"),
    ],
)
def test_output_that_is_not_the_tools_is_refused_saying_what_was_expected(
    benchmark, text, words
):
    with pytest.raises(BenchmarkOutputError) as raised:
        parse_benchmark(benchmark, text)

    assert words in str(raised.value)


def test_iperf3_says_why_it_failed_and_ping_says_nothing_came_back():
    with pytest.raises(BenchmarkOutputError, match="unable to connect to server"):
        parse_iperf3_json(read("iperf3-refused.json"))
    with pytest.raises(BenchmarkOutputError, match="no reply"):
        parse_ping("--- 10.0.0.1 ping statistics ---\n3 packets transmitted, 0 received\n")


@pytest.mark.parametrize(
    "name, benchmark",
    [
        ("fio-pack.json", "fio"),
        ("iperf3.json", "iperf3"),
        ("sysbench-cpu-1-thread.txt", "cpu_1"),
        ("sysbench-cpu-2-threads.txt", "cpu_all"),
        ("sysbench-memory-read.txt", "memory_read"),
        ("sysbench-memory-write.txt", "memory_write"),
    ],
)
def test_an_imported_file_is_recognised_by_its_content(name, benchmark):
    found, values = parse_import(read(name))

    assert found == benchmark and values


def test_an_unknown_file_is_refused_with_the_formats_that_are_read():
    with pytest.raises(BenchmarkOutputError, match="fio --output-format=json, iperf3 -J"):
        parse_import("hello")


def test_the_commands_take_every_value_as_a_word_of_its_own():
    by_key = {benchmark.key: benchmark for benchmark in BENCHMARKS}

    assert benchmark_argv(by_key["cpu_all"], seconds=5, cpus=8) == [
        "sysbench",
        "cpu",
        "--threads=8",
        "--time=5",
        "run",
    ]
    assert benchmark_argv(by_key["cpu_1"], seconds=5, cpus=8)[2] == "--threads=1"
    fio = benchmark_argv(
        by_key["fio"], seconds=3, scratch_file="/var/tmp/perfcase-baseline-1-1.fio", direct=False
    )
    assert "--filename=/var/tmp/perfcase-baseline-1-1.fio" in fio and "--direct=0" in fio
    assert "--output-format=json" in fio and fio.count("--stonewall") == 4
    assert benchmark_argv(by_key["iperf3"], seconds=2, server="127.0.0.5", port=20001) == [
        "iperf3",
        "-c",
        "127.0.0.5",
        "-p",
        "20001",
        "-t",
        "2",
        "-J",
    ]


@pytest.mark.parametrize(
    "value, expected",
    [("", "/var/tmp"), ("/var/tmp/", "/var/tmp"), ("/srv/data-1/scratch", "/srv/data-1/scratch")],
)
def test_a_scratch_directory_is_a_plain_absolute_path(value, expected):
    assert validate_scratch_dir(value) == expected


@pytest.mark.parametrize(
    "value",
    [
        "var/tmp",
        "/var/tmp/../../etc",
        "/tmp/a b",
        "/tmp/$(reboot)",
        "/tmp/x;rm -rf /",
        "/tmp/a:b",
        "/dev/sda",
        "/proc/1",
        "/tmp/`id`",
        "/tmp/\nx",
        "/tmp//x",
        "/" + "a" * 1024,
        "/" + "a" * 40 + "!",
    ],
)
def test_a_hostile_scratch_directory_is_refused(value):
    with pytest.raises(ValueError):
        validate_scratch_dir(value)


def test_the_check_says_cpus_tools_and_whether_direct_io_works():
    check = parse_check("cpus=4\ntool=fio\ntool=sysbench\ndirect=no\nfree_mb=5120\n")

    assert check.cpus == 4 and check.tools == {"fio", "sysbench"}
    assert check.scratch_writable and not check.direct_io and check.free_mb == 5120
    unwritable = parse_check("cpus=2\nscratch=unwritable\n")
    assert not unwritable.scratch_writable and unwritable.free_mb is None
