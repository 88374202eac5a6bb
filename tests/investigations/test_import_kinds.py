"""Every importer, through the one import endpoint, given every kind of real file (issue 25):
no answer but 201 for its own format and a 400 naming the file for any other, never a 500 and
never a file stored as what it is not (the perf-script importer took a pcapng, a gzip of a
perf script and ab's output before). Then what an import says it found: the answer's `read`
and the page's message, for profiles, load results, baseline results and captures."""

import gzip
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from investigations.api.imports import IMPORTERS
from investigations.models import BaselineResult, Capture, Ladder, Profile
from investigations.services.captures import capture_analyse_stored, capture_import
from tests.collectors.test_filekind import DATA, IMPORTS, PROFILES
from tests.collectors.test_stacks import ASYNC_PROFILER, PY_SPY_RAW
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db

LOADS = DATA / "loadresults"
BASELINE = DATA / "baseline"
CAPTURES = DATA / "captures"
DD = PROFILES / "perf-dd-stacks-01.txt"
FOLDED = PROFILES / "expected" / "perf-dd-stacks-01-collapsed-all.txt"


def _read(path: Path) -> bytes:
    return path.read_bytes()


# One real file of every kind, small, and the format that imports it (None: no importer).
KINDS: list[tuple[str, bytes, str | None]] = [
    ("dd.txt", _read(DD), "perf-script"),
    ("dd.txt.gz", gzip.compress(_read(DD), mtime=0), "perf-script"),
    ("dd.folded", _read(FOLDED), "folded"),
    ("spin.txt", PY_SPY_RAW.encode(), "py-spy"),
    ("java.txt", ASYNC_PROFILER.encode(), "async-profiler"),
    ("wrk.txt", _read(LOADS / "wrk-latency.txt"), "wrk"),
    ("wrk.txt.gz", gzip.compress(_read(LOADS / "wrk-plain.txt"), mtime=0), "wrk"),
    ("wrk2.txt", _read(LOADS / "wrk2-readme-u-latency-example2.txt"), "wrk2"),
    ("hey.txt", _read(LOADS / "hey-few-responses.txt"), "hey"),
    ("ab.txt", _read(LOADS / "ab.txt"), "ab"),
    ("k6.json", _read(LOADS / "k6-handle-summary.json"), "k6-json"),
    ("k6.txt", _read(LOADS / "k6-text.txt"), "k6-text"),
    ("results.jtl", _read(LOADS / "jmeter-ladder.jtl"), "jmeter-csv"),
    ("locust.csv", _read(LOADS / "locust_stats_history.csv"), "locust-csv"),
    ("plan.jmx", _read(LOADS / "jmeter-ladder.jmx"), None),
    ("fio.json", _read(BASELINE / "fio-randread-buffered.json"), "fio-json"),
    ("iperf3.json", _read(BASELINE / "iperf3.json"), "iperf3-json"),
    ("cpu.txt", _read(BASELINE / "sysbench-cpu-1-thread.txt"), "sysbench-text"),
    (
        "read.txt.gz",
        gzip.compress(_read(BASELINE / "sysbench-memory-read.txt"), mtime=0),
        "sysbench-text",
    ),
    ("ping.txt", _read(BASELINE / "ping.txt"), None),
    ("mpstat.txt", _read(DATA / "sampling" / "mpstat-all-1-3.txt"), None),
    ("trace.pcap", _read(CAPTURES / "zero-window-sll.pcap"), "pcap"),
    ("trace.pcapng", _read(CAPTURES / "two-interfaces.pcapng"), "pcap"),
    ("trace.pcap.gz", gzip.compress(_read(CAPTURES / "zero-window-sll.pcap"), mtime=0), None),
    ("k6-points.json", _read(IMPORTS / "k6-out-json-stream.json"), None),
    ("notes.json", b'{"name": "not a tool", "values": [1, 2, 3]}\n', None),
    ("empty.txt", b"", None),
]
LOAD = {"hey": "10", "wrk2": "2000"}  # the loads these outputs do not state
# One format with different details: a file of one is read as another when a person says so
# (the marks that tell them apart are frame names, which a plain folded file may share).
FOLDED_FAMILY = {"folded", "py-spy", "async-profiler"}


PROFILE_FORMATS = FOLDED_FAMILY | {"perf-script"}


def kin(format: str, kind: str | None) -> bool:
    return kind in FOLDED_FAMILY and format in FOLDED_FAMILY


def takes(format: str, kind: str | None) -> bool:
    """The importer `format` must take a file of `kind`: its own, or any profile's when the
    format is "auto" (recognised from what the file holds)."""
    return kind == format or (format == "auto" and kind in PROFILE_FORMATS)


def post(personas, format: str, name: str, content: bytes):
    data = {"side": "a", "format": format, "file": [SimpleUploadedFile(name, content)]}
    if format in LOAD:
        data["load"] = LOAD[format]
    return ApiClient(personas.member).post_multipart(
        f"/api/investigations/{personas.investigation.pk}/imports", data
    )


def stored() -> int:
    return sum(m.objects.count() for m in (Profile, Ladder, BaselineResult, Capture))


@pytest.mark.parametrize("format", sorted(IMPORTERS))
def test_every_importer_takes_its_own_kind_and_refuses_every_other_naming_it(personas, format):
    for name, content, kind in KINDS:
        before = stored()
        answer = post(personas, format, name, content)
        if takes(format, kind) or (kin(format, kind) and answer.status_code == 201):
            assert answer.status_code == 201, (name, answer.body)
            assert stored() > before
            continue
        # (A kin format's parser may refuse what its own does not write: a bare count.)
        assert answer.status_code == 400, (name, answer.status_code, answer.body)
        [error] = answer.body["errors"]
        assert error["field"] == "file" and error["message"].startswith(name), (name, error)
        assert stored() == before, name


def test_a_pcapng_given_as_a_perf_script_says_it_is_a_capture(personas):
    answer = post(personas, "perf-script", "x.pcapng", _read(CAPTURES / "two-interfaces.pcapng"))

    assert answer.body["errors"][0]["message"].startswith(
        "x.pcapng: this is not a profile in any format read here; it looks like a packet "
        "capture (pcapng): import it under captures (format pcap)."
    )


def test_a_compressed_capture_is_refused_saying_what_is_inside(personas):
    packed = gzip.compress(_read(CAPTURES / "zero-window-sll.pcap"), mtime=0)

    answer = post(personas, "pcap", "trace.pcap.gz", packed)

    assert answer.body["errors"][0]["message"] == (
        "trace.pcap.gz is not a pcap or pcapng file (tcpdump -w and Wireshark write those; "
        "convert others with editcap): it is a gzip-compressed file holding a packet capture "
        "(pcap): unpack it (gunzip) and import what is inside."
    )


# What an import says it found.


def test_a_profile_import_says_how_many_samples_it_read_and_what_it_skipped(personas):
    commented = b"# collapsed by stackcollapse-perf.pl\n\n" + _read(FOLDED)

    answer = post(personas, "folded", "dd.folded", commented)

    assert answer.status_code == 201, answer.body
    # stackcollapse-perf.pl's counts are periods: weights of stacks, not samples.
    assert answer.body["read"] == [
        {
            "file": "dd.folded",
            "format": "folded",
            "unit": "stacks",
            "read": Profile.objects.get().stack_count,
            "skipped": 2,
            "reasons": [
                {"reason": "comment line", "count": 1},
                {"reason": "blank line", "count": 1},
            ],
            "examples": [
                "line 1: comment line: '# collapsed by stackcollapse-perf.pl'",
                "line 2: blank line: ''",
            ],
        }
    ]


def test_the_profile_import_page_says_what_each_file_held(personas):
    commented = b"# collapsed by stackcollapse-perf.pl\n" + _read(FOLDED)
    answer = personas.client(personas.member).post(
        reverse("profile_import", args=[personas.investigation.pk]),
        {
            "profile-side": "a",
            "profile-format": "auto",
            "profile-file": [SimpleUploadedFile("dd.folded", commented)],
        },
        follow=True,
    )

    stacks = Profile.objects.get().stack_count
    [message] = [str(m) for m in answer.context["messages"]]
    assert message == (
        f"Profiles imported. dd.folded: {stacks} stacks read; 1 skipped (comment line: 1)."
    )


def test_a_short_k6_run_is_imported_with_the_concurrency_given(personas):
    content = _read(IMPORTS / "k6-short-handle-summary.json")
    refused = post(personas, "k6-json", "k6-short.json", content)
    assert "give its VUs as the load" in refused.body["errors"][0]["message"]

    data = {"side": "a", "format": "k6-json", "load": "2"}
    data["file"] = [SimpleUploadedFile("k6-short.json", content)]
    answer = ApiClient(personas.member).post_multipart(
        f"/api/investigations/{personas.investigation.pk}/imports", data
    )

    assert answer.status_code == 201, answer.body
    assert answer.body["steps"] == [2]
    assert answer.body["read"] == [
        {
            "file": "k6-short.json",
            "format": "k6-json",
            "unit": "requests",
            "read": 6,
            "skipped": 0,
            "reasons": [],
            "examples": [],
        }
    ]


def test_fio_normal_json_with_a_randrw_job_is_imported_as_its_own_rows(personas):
    answer = post(personas, "fio-json", "fio.txt", _read(IMPORTS / "fio-randrw-normal-json.txt"))

    assert answer.status_code == 201, answer.body
    assert answer.body["imported"] == 4
    assert sorted(BaselineResult.objects.values_list("benchmark", "metric")) == [
        ("fio_randrw", "read_iops"),
        ("fio_randrw", "read_latency_us"),
        ("fio_randrw", "write_iops"),
        ("fio_randrw", "write_latency_us"),
    ]
    assert answer.body["read"][0]["read"] == 4
    api = ApiClient(personas.member)
    table = api.get(f"/api/investigations/{personas.investigation.pk}/baseline").body
    mixed = [row for row in table["items"] if row["benchmark"] == "fio_randrw"]
    assert [(row["metric"], row["a"]) for row in mixed] == [
        ("read_iops", 11173.913043),
        ("read_latency_us", 57.845925623),
        ("write_iops", 11133.933033),
        ("write_latency_us", 3.8727397999999997),
    ]
    page = personas.client(personas.member).get(
        reverse("baseline_page", args=[personas.investigation.pk])
    )
    assert page.status_code == 200
    assert "fio mixed random read and write (randrw), imported" in page.content.decode()


def test_an_iperf3_run_whose_receiver_reported_nothing_is_refused_saying_so(personas):
    answer = post(
        personas, "iperf3-json", "iperf3.json", _read(IMPORTS / "iperf3-interrupted.json")
    )

    assert answer.body["errors"][0]["message"].startswith(
        "iperf3.json: iperf3: the receiver reported nothing (5,358,223,360 bytes sent"
    )
    assert not BaselineResult.objects.exists()


def test_an_analysed_capture_says_how_many_packets_it_read(personas):
    (capture,) = capture_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        uploads=[SimpleUploadedFile("trace.pcap", _read(CAPTURES / "zero-window-sll.pcap"))],
    )
    capture_analyse_stored(capture_id=capture.pk, seconds=60)
    capture.refresh_from_db()

    answer = ApiClient(personas.member).get(f"/api/captures/{capture.pk}")

    assert answer.body["read"] == {
        "file": "trace.pcap",
        "format": "pcap",
        "unit": "packets",
        "read": capture.packets,
        "skipped": 0,
        "reasons": [],
        "examples": [],
    }
    page = personas.client(personas.member).get(
        reverse("capture_detail", args=[personas.investigation.pk, capture.pk])
    )
    assert f"trace.pcap: {capture.packets:,} packets read." in page.content.decode()


def test_a_locust_history_says_which_rows_it_left_out(personas):
    answer = post(personas, "locust-csv", "locust.csv", _read(LOADS / "locust_stats_history.csv"))

    assert answer.status_code == 201, answer.body
    assert answer.body["read"] == [
        {
            "file": "locust.csv",
            "format": "locust-csv",
            "unit": "requests",
            "read": 221 + 441 + 661,
            "skipped": 75,
            "reasons": [
                {"reason": "rows of one endpoint (the 'Aggregated' rows are read)", "count": 72},
                {"reason": "intervals while the user count changed", "count": 3},
            ],
            "examples": [],
        }
    ]


@pytest.mark.parametrize(
    "format, name, path",
    [
        ("jmeter-csv", "results.jtl", LOADS / "jmeter-ladder.jtl"),
        ("iperf3-json", "iperf3.json", BASELINE / "iperf3.json"),
    ],
)
def test_a_file_saved_with_a_byte_order_mark_is_read(personas, format, name, path):
    # As a spreadsheet or a Windows editor saves a CSV or JSON file.
    answer = post(personas, format, name, b"\xef\xbb\xbf" + _read(path))

    assert answer.status_code == 201, answer.body
