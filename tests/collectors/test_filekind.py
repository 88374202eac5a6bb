"""collectors.filekind: every file an importer is given is recognised for what it is, from
real outputs of the tools (tests/collectors/data/*, FlameGraph's perf scripts and folded
stacks), and every importer refuses every other kind, naming the file and what it is: the
wrong-kind matrix. Then the real variants each parser must read, and a seeded fuzz of each
parser over mutations of its real samples."""

import gc
import gzip
import random
import sys
import tracemalloc
from pathlib import Path

import pytest

from collectors.baseline.parsers import (
    BenchmarkOutputError,
    parse_import,
    read_fio_json,
    read_import,
)
from collectors.filekind import (
    FORMAT_WHAT,
    FileRefused,
    identify,
    peek,
    read_as,
    unpack,
)
from collectors.loadresults import FORMATS as LOAD_FORMATS
from collectors.loadresults import LoadResultError, parse_hey, parse_k6_json, parse_wrk2
from collectors.stacks import fold_perf_script, parse_async_profiler, parse_folded, parse_py_spy
from collectors.stacks.profile import BLANK_LINE, COMMENT_LINE
from tests.collectors.test_stacks import ASYNC_PROFILER, PROFILES, PY_SPY_RAW, PY_SPY_THREADS

DATA = Path(__file__).parent / "data"
IMPORTS = DATA / "imports"
MB = 1024 * 1024


def _format_of(path: Path) -> str | None:
    """The import format that reads a real sample (None: no importer reads it)."""
    name = path.name
    if path.parent.name == "captures":
        return "pcap"
    if path.parent.name == "loadresults":
        for prefix, format in (
            ("wrk2-", "wrk2"),
            ("wrk-", "wrk"),
            ("hey", "hey"),
            ("ab", "ab"),
            ("k6-text", "k6-text"),
            ("locust_stats_history", "locust-csv"),
            ("jmeter-ladder.jtl", "jmeter-csv"),
        ):
            if name.startswith(prefix):
                return format
        return "k6-json" if name.endswith(".json") else None
    if name.startswith("fio-"):
        return "fio-json"
    if name.startswith("iperf3"):
        return "iperf3-json"
    if name.startswith("sysbench-"):
        return "sysbench-text"
    if name.startswith("k6-") and name.endswith(".json") and "stream" not in name:
        return "k6-json"
    if path.parent == PROFILES:
        return "perf-script"
    if path.parent.name == "expected":
        return "folded"
    return None


REAL = sorted(
    path
    for folder in ("loadresults", "baseline", "captures", "sampling", "imports")
    for path in (DATA / folder).iterdir()
    if path.is_file() and path.suffix != ".md"
) + [
    PROFILES / "perf-dd-stacks-01.txt",
    PROFILES / "perf-java-stacks-01.txt",
    PROFILES / "expected" / "perf-dd-stacks-01-collapsed-all.txt",
    PROFILES / "expected" / "perf-java-stacks-01-collapsed-pid.txt",
]
# Real samples that are not files here, and other kinds people upload by mistake.
OTHERS: dict[str, tuple[bytes, str | None]] = {
    "spin.pyspy": (PY_SPY_RAW.encode(), "py-spy"),
    "threads.pyspy": (PY_SPY_THREADS.encode(), "py-spy"),
    "java.collapsed": (ASYNC_PROFILER.encode(), "async-profiler"),
    "dd.txt.gz": (
        gzip.compress((PROFILES / "perf-dd-stacks-01.txt").read_bytes(), mtime=0),
        "perf-script",
    ),
    "trace.pcap.gz": (
        # Unpacked here; the capture importer, which streams, refuses it (its own test).
        gzip.compress((DATA / "captures" / "lossy-link-ethernet.pcap").read_bytes(), mtime=0),
        "pcap",
    ),
    "python": (Path(sys.executable).resolve().read_bytes()[:4096], None),
    "empty.txt": (b"", None),
    "notes.json": (b'{"name": "not a tool", "values": [1, 2, 3]}\n', None),
    "page.html": (b"<!DOCTYPE html><html><body>hello</body></html>\n", None),
}


def samples():
    for path in REAL:
        yield path.name, path.read_bytes(), _format_of(path)
    for name, (content, format) in OTHERS.items():
        yield name, content, format


SAMPLE_LIST = list(samples())
PARSERS = {
    **LOAD_FORMATS,
    # The loads these outputs may not state, as the import form gives them.
    "hey": lambda data: parse_hey(data, concurrency=10),
    "wrk2": lambda data: parse_wrk2(data, rate=2000),
    "perf-script": lambda data: fold_perf_script(data, kernel=True, jit=True),
    "folded": parse_folded,
    "async-profiler": parse_async_profiler,
    "py-spy": parse_py_spy,
    "fio-json": read_import,
    "iperf3-json": read_import,
    "sysbench-text": read_import,
}
# Each parser's own error: anything else is a traceback.
OWN_ERRORS = (LoadResultError, BenchmarkOutputError, ValueError)
FOLDED_FAMILY = {"folded", "async-profiler", "py-spy"}


@pytest.mark.parametrize("name, content, format", SAMPLE_LIST, ids=[s[0] for s in SAMPLE_LIST])
def test_every_real_sample_is_recognised_as_what_it_is(name, content, format):
    kind = identify(unpack(name, content, max_bytes=200 * MB))
    assert kind.format == format, (name, kind)


IMPORTERS = [*FORMAT_WHAT]


@pytest.mark.parametrize("importer", IMPORTERS)
def test_every_importer_refuses_every_other_kind_naming_the_file_and_what_it_is(importer):
    accepted = []
    for name, content, format in SAMPLE_LIST:
        try:
            data, kind = read_as(name, content, formats=(importer,), max_bytes=200 * MB)
        except FileRefused as error:
            assert format != importer, (name, str(error))
            assert str(error).startswith(f"{name} is not {FORMAT_WHAT[importer]}: it is "), error
            continue
        if importer != "pcap":
            try:
                PARSERS[importer](data)
            except OWN_ERRORS:
                # A real failed run (a closed port), or JSON of no tool's keys that a JSON
                # format's parser read to the end: refused by the parser, in words.
                assert format == importer or kind.key == "json", (name, kind)
                continue
        assert format == importer, (name, kind)
        accepted.append(name)
    assert accepted, "no real sample of this format"


def test_a_wrong_kind_says_where_it_goes():
    pcapng = (DATA / "captures" / "two-interfaces.pcapng").read_bytes()
    with pytest.raises(FileRefused) as refused:
        read_as("x.pcapng", pcapng, formats=("perf-script",), max_bytes=MB)
    assert str(refused.value) == (
        "x.pcapng is not perf script output: it is a packet capture (pcapng): import it under "
        "captures (format pcap)."
    )
    ab = (DATA / "loadresults" / "ab.txt").read_bytes()
    with pytest.raises(FileRefused) as refused:
        read_as("ab.txt", ab, formats=("perf-script", "folded"), max_bytes=MB)
    assert "it is ab (ApacheBench) output: import it under load results (ladders) (format ab)" in (
        str(refused.value)
    )


def test_a_gzip_is_unpacked_and_read_for_what_is_inside():
    script = (PROFILES / "perf-dd-stacks-01.txt").read_bytes()
    packed = gzip.compress(script[:1000]) + gzip.compress(script[1000:])  # two members
    data, kind = read_as("dd.txt.gz", packed, formats=("perf-script",), max_bytes=MB)
    assert (data, kind.format) == (script, "perf-script")


def test_a_gzip_that_unpacks_past_the_limit_is_refused_without_unpacking_it_all():
    bomb = gzip.compress(b"a;b 1\n" * (4 * MB))
    with pytest.raises(FileRefused) as refused:
        unpack("big.gz", bomb, max_bytes=MB)
    assert str(refused.value) == "big.gz unpacks to more than 1 MB, the most it may be."


@pytest.mark.parametrize(
    "content, message",
    [
        (gzip.compress(b"a;b 1\n", mtime=0)[:-12], "is a gzip file cut short"),
        # A deflate block of the reserved type 3.
        (gzip.compress(b"a;b 1\n", mtime=0)[:10] + b"\x07" + bytes(10), "is a damaged gzip file"),
        (gzip.compress(b"a;b 1\n", mtime=0) + b"trailing", "holds something other than gzip"),
    ],
    ids=["cut", "damaged", "trailing"],
)
def test_a_damaged_gzip_is_refused_never_read_as_text(content, message):
    """(mtime=0: the same bytes in every test process.)"""
    with pytest.raises(FileRefused) as refused:
        read_as("x.gz", content, formats=("folded",), max_bytes=MB)
    assert str(refused.value).startswith(f"x.gz {message}")


def test_a_compressed_capture_is_named_with_what_is_inside():
    packed = gzip.compress((DATA / "captures" / "lossy-link-ethernet.pcap").read_bytes())
    assert peek(packed[:65536]).what == "a gzip-compressed file holding a packet capture (pcap)"


# Real variants.


def test_fio_normal_json_is_read_around_its_text_and_a_randrw_job_has_its_own_metrics():
    text = (IMPORTS / "fio-randrw-normal-json.txt").read_text()
    assert not text.startswith("{") and text.rstrip().endswith("util=31.40%")
    found = read_import(text)
    assert found.results == {
        "fio_randrw": {
            "read_iops": 11173.913043,
            "read_latency_us": 57.845925623,
            "write_iops": 11133.933033,
            "write_latency_us": 3.8727397999999997,
        }
    }
    assert read_import(text.encode()).results == found.results


def test_a_fio_job_of_another_mode_is_counted_as_skipped():
    text = (DATA / "baseline" / "fio-randread-buffered.json").read_text()
    trimmed = text.replace('"rw" : "randread"', '"rw" : "trim"', 1)
    with pytest.raises(BenchmarkOutputError):
        read_fio_json(trimmed)  # its only job is no longer read: nothing is left
    pack = (DATA / "baseline" / "fio-pack.json").read_text()
    mixed = pack.replace('"rw" : "randread"', '"rw" : "trim"', 1)
    found = read_fio_json(mixed)
    assert found.skipped == {"a job whose rw mode is not read here": 1}
    assert "randread_iops" not in found.values and "randwrite_iops" in found.values


def test_an_iperf3_run_whose_receiver_reported_nothing_says_so_not_zero():
    content = (IMPORTS / "iperf3-interrupted.json").read_bytes()
    with pytest.raises(BenchmarkOutputError) as refused:
        parse_import(content)
    assert str(refused.value) == (
        "iperf3: the receiver reported nothing (5,358,223,360 bytes sent, none reported "
        "received); iperf3 said: interrupt - the client has terminated: no throughput was "
        "measured"
    )
    # The same without iperf3's error line: still nothing measured.
    quiet = content.replace(b'"error":\t"interrupt - the client has terminated"', b'"x": 0')
    assert quiet != content
    with pytest.raises(BenchmarkOutputError) as refused:
        parse_import(quiet)
    assert "the receiver reported nothing" in str(refused.value)


def test_a_short_k6_run_without_vus_takes_its_concurrency_from_the_form():
    content = (IMPORTS / "k6-short-handle-summary.json").read_bytes()
    with pytest.raises(LoadResultError) as refused:
        parse_k6_json(content)
    assert "give its VUs as the load" in str(refused.value)
    (step,) = parse_k6_json(content, concurrency=2)
    assert (step.load, step.load_kind, step.requests) == (2.0, "concurrency", 6)


def test_folded_comment_and_blank_lines_are_skipped_and_counted():
    folded = (PROFILES / "expected" / "perf-dd-stacks-01-collapsed-all.txt").read_text()
    commented = "# perf record -a -g, then stackcollapse-perf.pl\n\n" + folded + "\n# end\n"
    profile = parse_folded(commented)
    assert profile.weights == parse_folded(folded).weights
    assert profile.skipped == {COMMENT_LINE: 2, BLANK_LINE: 2}
    assert (
        profile.problems[0]
        == "line 1: comment line: '# perf record -a -g, then stackcollapse-perf.pl'"
    )
    assert parse_folded(folded).skipped == {}  # the last line's end is no blank line


@pytest.mark.parametrize(
    "name",
    ["sysbench-cpu-1-thread.txt", "sysbench-memory-read.txt", "iperf3.json", "fio-pack.json"],
)
def test_parse_import_takes_bytes_and_text_alike(name):
    content = (DATA / "baseline" / name).read_bytes()
    assert parse_import(content) == parse_import(content.decode())


# Fuzz: mutations of each parser's real samples, seeded and bounded by count.


def _mutate(rng: random.Random, data: bytes) -> bytes:
    data = bytearray(data[:20_000])
    for _ in range(rng.randint(1, 8)):
        action = rng.randrange(5)
        at = rng.randrange(len(data) + 1)
        if action == 0 and data:
            data[min(at, len(data) - 1)] = rng.randrange(256)
        elif action == 1:
            del data[at : at + rng.randint(1, 200)]
        elif action == 2:
            data[at:at] = rng.choice(
                [b"\n", b"{", b"}", b'"', b";", b" 1\n", b"\x00", b"nan", b"9" * 50]
            )
        elif action == 3:
            data = data[:at]
        else:
            data[at:at] = data[rng.randrange(len(data) + 1) :][:300]
    return bytes(data)


FUZZED = sorted({format for _name, _content, format in SAMPLE_LIST if format in PARSERS})


# What one call on a mutated sample (at most about 20 KB) may allocate at its peak, and
# what may stay allocated after all of them: far above what a sane parse needs, far below
# what a blow-up (a number read as a repeat count, a quadratic copy) takes.
PEAK_BYTES = 4 * MB
KEPT_BYTES = 1 * MB


@pytest.mark.parametrize("format", FUZZED)
def test_each_parser_fails_only_with_its_own_error_on_mutated_real_samples(format):
    rng = random.Random(f"filekind-{format}")
    seeds = [content for _name, content, f in SAMPLE_LIST if f == format]
    peaks = []

    def bounded(call, *args):
        tracemalloc.reset_peak()
        try:
            return call(*args)
        finally:
            peaks.append((tracemalloc.get_traced_memory()[1], len(args[-1])))

    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _ in range(300):
            mutated = _mutate(rng, rng.choice(seeds))
            try:
                data, _kind = bounded(
                    lambda m: read_as("fuzz", m, formats=(format,), max_bytes=MB), mutated
                )
                bounded(PARSERS[format], data)
            except (FileRefused, *OWN_ERRORS):
                pass  # refused in words; any other exception fails the test with its input
            try:  # the parser alone, as a ladder run or the pack calls it
                bounded(PARSERS[format], mutated)
            except OWN_ERRORS:
                pass
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()

    assert max(peak for peak, _size in peaks) < PEAK_BYTES, max(peaks)
    assert kept < KEPT_BYTES, kept


def test_k6s_point_stream_is_named_for_what_it_is_not_read_as_a_summary():
    stream = (IMPORTS / "k6-out-json-stream.json").read_bytes()
    with pytest.raises(FileRefused) as refused:
        read_as("points.json", stream, formats=("k6-json",), max_bytes=MB)
    assert str(refused.value) == (
        "points.json is not a k6 JSON summary: it is k6's --out json stream (a point a line): "
        "import the run's summary instead (k6 run --summary-export=FILE, or handleSummary's "
        "JSON)."
    )
