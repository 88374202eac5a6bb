"""The marks by which a file says what it is, for every kind of file people import (packet
captures, load tools' results, benchmarks' outputs) and the kinds they import by mistake
(compressed files, programs, images, pages, JSON of other tools). Profiles' own marks are in
collectors/stacks/recognise.py, which reads these first; collectors/filekind.py puts the two
together for the importers.

Each kind is told by marks of its own, positively: magic bytes at the start, a JSON
document's keys, the lines a tool always prints (ab's banner, wrk's `Running ... test @`,
hey's `Summary:` block, sysbench's version line...). Only the head of a file is looked at,
with string methods (no pattern that could backtrack over a hostile line).
"""

from dataclasses import dataclass

from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _

HEAD_BYTES = 64 * 1024
HEAD_LINES = 400

# Where each kind is imported, and the import format that reads it.
CAPTURES, PROFILES, LADDERS, BASELINES = "captures", "profiles", "ladders", "baselines"


@dataclass(frozen=True)
class Kind:
    """What a file is: `key` names it ("pcapng", "wrk", "gzip", "json", "text"...), `what`
    says it for a person, `area` and `format` say where it is imported (None: nowhere),
    `advice` what to do with a kind no importer takes."""

    key: str
    what: Phrase
    area: str | None = None
    format: str | None = None
    advice: Phrase | None = None


def _kind(key, what, area=None, format=None, advice=None) -> Kind:
    return Kind(key, Phrase(what), area, format, Phrase(advice) if advice else None)


_UNPACK = _("unpack it and import what is inside")
_BINARY = (
    (
        (b"PERFILE2", b"2ELIFREP", b"PERFFILE"),
        _kind(
            "perf-data",
            _("a perf.data file (the binary that perf record writes)"),
            advice=_(
                "run `perf script -i perf.data > profile.txt` where it was recorded, and "
                "import the text"
            ),
        ),
    ),
    (
        (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d"),
        _kind("pcap", _("a packet capture (pcap)"), CAPTURES, "pcap"),
    ),
    ((b"\x0a\x0d\x0d\x0a",), _kind("pcapng", _("a packet capture (pcapng)"), CAPTURES, "pcap")),
    (
        (b"\x1f\x8b",),
        _kind(
            "gzip",
            _("a gzip-compressed file"),
            advice=_("unpack it (gunzip) and import what is inside"),
        ),
    ),
    ((b"\x28\xb5\x2f\xfd",), _kind("zstd", _("a zstd-compressed file"), advice=_UNPACK)),
    ((b"BZh",), _kind("bzip2", _("a bzip2-compressed file"), advice=_UNPACK)),
    ((b"\xfd7zXZ\x00",), _kind("xz", _("an xz-compressed file"), advice=_UNPACK)),
    ((b"PK\x03\x04",), _kind("zip", _("a zip archive"), advice=_UNPACK)),
    ((b"\x7fELF",), _kind("elf", _("a program or library (an ELF binary)"))),
    ((b"\x89PNG", b"\xff\xd8\xff", b"GIF8"), _kind("image", _("an image"))),
    ((b"%PDF",), _kind("pdf", _("a PDF document"))),
)


def binary_kind(head: bytes) -> Kind | None:
    """The kind of a file by its magic bytes, or None for text (or what is not known)."""
    for magics, kind in _BINARY:
        if head.startswith(magics):
            return kind
    if not head.strip():
        return _kind("empty", _("an empty file"))
    if b"\0" in head:
        return _kind("binary", _("binary data, not text"))
    text = head.decode("utf-8", "replace")
    if text.count("\ufffd") > len(text) // 20:
        return _kind("binary", _("binary data, not text"))
    return None


def _starts(lines: list[str], *prefixes: str) -> bool:
    return any(line.lstrip().startswith(prefixes) for line in lines)


def _json_like(head: str) -> bool:
    """JSON's start: an object's first key, or an array's first value (`[main tid=1];...`
    is async-profiler's thread frame, not JSON)."""
    second = head[1:].lstrip(" \t\r\n")[:1]
    return second in ('"', "}") if head[0] == "{" else second in ('"', "{", "[", "]")


def _json_kind(head: str) -> Kind | None:
    """JSON documents by their keys (only the head is read: the keys tools write first)."""
    if head[:1] not in "{[" or not _json_like(head):
        return None
    lowered = head[:200_000].lower()
    if '"fio version"' in lowered:
        return _kind("fio-json", _("fio's JSON report"), BASELINES, "fio-json")
    if (
        '"start"' in lowered
        and '"intervals"' in lowered
        and ('"end"' in lowered or '"error"' in lowered)
    ):
        return _kind("iperf3-json", _("iperf3's JSON report (-J)"), BASELINES, "iperf3-json")
    if '"metrics"' in lowered and ('"root_group"' in lowered or '"http_reqs"' in lowered):
        return _kind("k6-json", _("a k6 JSON summary"), LADDERS, "k6-json")
    if '"type":"metric"' in lowered[:4000] or '"type":"point"' in lowered[:4000]:
        return _kind(
            "k6-stream",
            _("k6's --out json stream (a point a line)"),
            advice=_(
                "import the run's summary instead (k6 run --summary-export=FILE, or "
                "handleSummary's JSON)"
            ),
        )
    if "speedscope" in lowered[:4000]:
        return _kind(
            "speedscope",
            _("speedscope's JSON"),
            advice=_("import the profile it was made from, or folded stacks"),
        )
    if '"timedeltas"' in lowered or '"callframe"' in lowered:
        return _kind("cpuprofile", _("a Chrome or Node.js .cpuprofile (JSON)"))
    return _kind("json", _("JSON of a kind not read here"))


def _sysbench(lines: list[str], text: str) -> Kind | None:
    if not _starts(lines[:3], "sysbench "):
        return None
    if "events per second:" in text:
        return _kind("sysbench-cpu", _("sysbench cpu output"), BASELINES, "sysbench-text")
    if "MiB transferred" in text and _starts(lines, "operation: read", "operation: write"):
        return _kind("sysbench-memory", _("sysbench memory output"), BASELINES, "sysbench-text")
    return _kind("sysbench", _("sysbench output of a test other than cpu or memory"))


def _wrk(lines: list[str]) -> Kind | None:
    filled = [line for line in lines if line.strip()]
    # wrk2's README keeps the command line above the report.
    first = next((line for line in filled[:2] if line.startswith("Running ")), "")
    if filled and filled[0].startswith("unable to connect to "):
        return _kind("wrk", _("wrk output"), LADDERS, "wrk")
    if not (first and " test @ " in first):
        return None
    if _starts(lines, "Thread calibration:", "#[Mean", "Uncorrected Latency", "Initialised "):
        return _kind("wrk2", _("wrk2 output"), LADDERS, "wrk2")
    return _kind("wrk", _("wrk output"), LADDERS, "wrk")


def _hey(lines: list[str]) -> bool:
    summary = any(line.rstrip() == "Summary:" for line in lines[:5])
    return summary and _starts(lines[:12], "Total:") and _starts(lines[:12], "Requests/sec:")


def _k6_text(lines: list[str]) -> bool:
    return (
        any("Grafana" in line and "/‾‾/" in line for line in lines[:5])
        or _starts(lines, "execution: local", "execution: cloud")
        or any(line.lstrip().startswith("http_req_duration") and "..:" in line for line in lines)
    )


def _jmeter_csv(lines: list[str]) -> bool:
    header = lines[0].split(",") if lines else []
    if "timeStamp" in header and "elapsed" in header:
        return True
    fields = header if len(header) >= 7 else []
    # JMeter before 2.13 wrote no header: a time in ms, then the elapsed ms.
    return bool(fields) and len(fields[0]) == 13 and fields[0].isdigit() and fields[1].isdigit()


def text_kind(text: str, lines: list[str]) -> Kind | None:
    """The kind of a text by its tool's marks, or None when no mark is there. `lines` are
    the head's first lines, without line ends."""
    found = _json_kind(text.lstrip("\ufeff \t\r\n"))
    if found is not None:
        return found
    if '"fio version"' in text:  # --output-format=normal,json: text, then the JSON
        return _kind("fio-json", _("fio's JSON report"), BASELINES, "fio-json")
    if (
        _starts(lines[:3], "This is ApacheBench, Version")
        or _starts(lines, "Benchmarking ")
        and _starts(lines, "Requests per second:", "apr_")
    ):
        return _kind("ab", _("ab (ApacheBench) output"), LADDERS, "ab")
    found = _wrk(lines) or _sysbench(lines, text)
    if found is not None:
        return found
    if _hey(lines):
        return _kind("hey", _("hey output"), LADDERS, "hey")
    if _k6_text(lines):
        return _kind("k6-text", _("k6's text summary"), LADDERS, "k6-text")
    if lines and lines[0].startswith("Timestamp,User Count,Type,Name,"):
        return _kind("locust-csv", _("Locust's stats history CSV"), LADDERS, "locust-csv")
    if lines and lines[0].startswith(("Type,Name,Request Count,", '"Type","Name","# requests"')):
        return _kind(
            "locust-stats",
            _("Locust's stats CSV (the totals)"),
            advice=_("import locust_stats_history.csv, written with --csv --csv-full-history"),
        )
    if _jmeter_csv(lines):
        return _kind("jmeter-csv", _("JMeter CSV results (JTL)"), LADDERS, "jmeter-csv")
    if _starts(lines[:5], "<testResults"):
        return _kind(
            "jmeter-xml",
            _("JMeter XML results"),
            advice=_("write the results as CSV (jmeter.save.saveservice.output_format=csv)"),
        )
    if _starts(lines[:5], "<jmeterTestPlan"):
        return _kind(
            "jmeter-plan",
            _("a JMeter test plan (.jmx)"),
            advice=_("import the results it writes (-l results.jtl, as CSV)"),
        )
    if _starts(lines, "Run status group ") or _starts(lines[:5], "fio-"):
        return _kind(
            "fio-text",
            _("fio's text report"),
            advice=_("run fio with --output-format=json (or normal,json) and import that"),
        )
    if _starts(lines, "[ ID] Interval") or _starts(lines[:3], "Connecting to host "):
        return _kind(
            "iperf3-text",
            _("iperf3's text output"),
            advice=_("run iperf3 with -J and import the JSON"),
        )
    return None


def described(text: str) -> Kind:
    """What a text no importer reads looks like: a page, an image, or its first line."""
    start = text.lstrip("\ufeff \t\r\n")
    lowered = start[:400].lower()
    if "<svg" in lowered:
        return _kind(
            "svg",
            _("an SVG image (a flame graph drawn by flamegraph.pl?)"),
            advice=_("import the folded stacks it was drawn from"),
        )
    if lowered.startswith("<!doctype html") or lowered.startswith("<html"):
        return _kind("html", _("an HTML page"))
    if lowered.startswith("<"):
        return _kind("xml", _("an XML document"))
    first = next((line for line in start.split("\n") if line.strip()), "")
    shown = first.rstrip("\r")
    shown = shown if len(shown) <= 80 else shown[:80] + "…"
    return Kind("text", Phrase(_("text whose first line is %(line)s"), line=repr(shown)))


AREAS = {
    CAPTURES: Phrase(_("captures")),
    PROFILES: Phrase(_("CPU profiles")),
    LADDERS: Phrase(_("load results (ladders)")),
    BASELINES: Phrase(_("baseline results")),
}


def said(kind: Kind) -> Phrase:
    """What the file is and what to do with it, for a person: "a packet capture (pcapng):
    import it under captures (format pcap)"."""
    if kind.area is not None:
        return Phrase(
            _("%(what)s: import it under %(area)s (format %(format)s)"),
            what=kind.what,
            area=AREAS[kind.area],
            format=kind.format,
        )
    if kind.advice is not None:
        return Phrase(_("%(what)s: %(advice)s"), what=kind.what, advice=kind.advice)
    return kind.what


def head_lines(data: bytes) -> tuple[str, list[str]]:
    """The head of a text file (HEAD_BYTES) decoded, and its first lines without line ends
    (a line cut by the head's end left out)."""
    head = bytes(data[:HEAD_BYTES])
    text = head.decode("utf-8", "replace").removeprefix("\ufeff")
    lines = text.split("\n")
    if len(data) > HEAD_BYTES and len(lines) > 1:
        lines.pop()
    return text, [line.rstrip("\r") for line in lines[:HEAD_LINES]]
