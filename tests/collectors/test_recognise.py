"""collectors.stacks.recognise: which profile format a file holds, from real outputs of the
tools (the perf scripts of FlameGraph's suite and their folded results, perf.data written by
this machine's perf, the pcaps of tests/collectors/data, an SVG drawn by flamegraph.pl)."""

import shutil
import subprocess
from pathlib import Path

import pytest

from collectors.stacks.recognise import (
    ASYNC_PROFILER,
    FOLDED,
    PERF_SCRIPT,
    PY_SPY,
    recognise,
)
from tests.collectors.test_stacks import (
    ALL_FIXTURES,
    EXPECTED,
    PY_SPY_RAW,
    PY_SPY_THREADS,
    STACKCOLLAPSE,
    read_fixture,
)
from tests.collectors.test_stacks import (
    ASYNC_PROFILER as ASYNC_PROFILER_TEXT,
)
from tests.conftest import require_real_tool

CAPTURES = Path(__file__).parent / "data" / "captures"


@pytest.mark.parametrize("path", ALL_FIXTURES, ids=lambda path: path.stem)
def test_every_perf_script_output_is_recognised_as_perf_script(path):
    assert recognise(read_fixture(path)).format == PERF_SCRIPT


# (An empty expected result holds no stack to recognise.)
FOLDED_RESULTS = [path for path in sorted(EXPECTED.glob("*.txt")) if path.read_bytes().strip()]


@pytest.mark.parametrize("path", FOLDED_RESULTS, ids=lambda path: path.stem)
def test_what_stackcollapse_perf_folded_is_recognised_as_folded_stacks(path):
    data = path.read_bytes()
    assert recognise(data).format == FOLDED


def test_py_spy_and_async_profiler_are_told_apart_by_their_frames():
    assert recognise(PY_SPY_RAW).format == PY_SPY
    assert recognise(PY_SPY_THREADS).format == PY_SPY
    assert recognise(ASYNC_PROFILER_TEXT).format == ASYNC_PROFILER


def test_a_perf_data_file_is_named_and_the_way_to_text_given(tmp_path):
    if shutil.which("perf") is None:
        require_real_tool("perf is not installed (apt-get install linux-perf)")
    output = tmp_path / "perf.data"
    subprocess.run(
        ["perf", "record", "-q", "-F", "999", "-g", "-o", str(output), "--", "sh", "-c", ":"],
        check=True,
        capture_output=True,
        timeout=60,
    )
    found = recognise(output.read_bytes())
    assert found.format is None
    assert str(found.looks_like).startswith("a perf.data file")
    assert "perf script -i perf.data" in found.looks_like


@pytest.mark.parametrize(
    "name, looks_like",
    [
        ("keepalive-pauses-ethernet.pcap", "a packet capture (pcap)"),
        ("two-interfaces.pcapng", "a packet capture (pcapng)"),
    ],
)
def test_a_packet_capture_is_named(name, looks_like):
    found = recognise((CAPTURES / name).read_bytes())
    assert found.format is None
    assert found.looks_like.startswith(looks_like)


def test_an_svg_drawn_by_flamegraph_pl_is_named(tmp_path):
    if shutil.which("perl") is None:
        require_real_tool("perl is not installed: flamegraph.pl cannot run")
    folded = (EXPECTED / "perf-vertx-stacks-01-collapsed-all.txt").read_bytes()
    svg = subprocess.run(
        ["perl", str(STACKCOLLAPSE.parent / "flamegraph.pl")],
        input=folded,
        capture_output=True,
        check=True,
        timeout=60,
    ).stdout
    assert recognise(svg).looks_like.startswith("an SVG image")


@pytest.mark.parametrize(
    "data, looks_like",
    [
        (b'{"traceEvents": []}', "JSON"),
        (b'{"$schema": "https://www.speedscope.app/file-format-schema.json"}', "speedscope"),
        (b"\x1f\x8b\x08\x00" + bytes(20), "a gzip-compressed file"),
        (b"", "an empty file"),
        (b"\x00\x01\x02binary", "binary data"),
        (b"GET / HTTP/1.1\nHost: example\n", "text whose first line is 'GET / HTTP/1.1'"),
    ],
)
def test_what_is_no_profile_is_named_for_what_it_looks_like(data, looks_like):
    found = recognise(data)
    assert found.format is None
    assert found.looks_like.startswith(looks_like), found.looks_like


def test_a_folded_file_with_a_bad_line_is_still_folded_so_its_parser_names_the_line():
    assert recognise(b"a;b 1\nc;d 2\nthis is not folded\n").format == FOLDED
