"""What a file is, for every importer: one place that tells a perf script from a pcapng, ab's
output from fio's JSON, and refuses a file given to an importer that does not read it, with
the file's name and what it is instead ("x.pcapng is not perf script output: it is a packet
capture (pcapng): import it under captures (format pcap)").

Profiles are told by collectors/stacks/recognise.py, everything else by
collectors/signatures.py (which the first reads too). A gzip-compressed file is unpacked,
within the importer's size limit, and what is inside is what counts; it is never read as
text.
"""

import zlib
from dataclasses import dataclass, field

from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from collectors.signatures import (
    BASELINES,
    CAPTURES,
    HEAD_BYTES,
    LADDERS,
    PROFILES,
    Kind,
    said,
)
from collectors.stacks.recognise import ASYNC_PROFILER, FOLDED, PERF_SCRIPT, PY_SPY, recognise

GZIP_MAGIC = b"\x1f\x8b"
JSON_FORMATS = ("fio-json", "iperf3-json", "k6-json")

# What each import format reads, for a person; an importer of several formats that
# recognises each file's own ("auto") reads what its area reads.
FORMAT_WHAT = {
    PERF_SCRIPT: _("perf script output"),
    FOLDED: _("folded stacks"),
    ASYNC_PROFILER: _("async-profiler collapsed stacks"),
    PY_SPY: _("py-spy raw stacks"),
    "wrk": _("wrk output"),
    "wrk2": _("wrk2 output"),
    "hey": _("hey output"),
    "ab": _("ab (ApacheBench) output"),
    "k6-json": _("a k6 JSON summary"),
    "k6-text": _("k6's text summary"),
    "jmeter-csv": _("JMeter CSV results (JTL)"),
    "locust-csv": _("Locust's stats history CSV"),
    "fio-json": _("fio's JSON report"),
    "iperf3-json": _("iperf3's JSON report (-J)"),
    "sysbench-text": _("sysbench cpu or memory output"),
    "pcap": _("a packet capture (pcap or pcapng)"),
}
AREA_WHAT = {
    PROFILES: _("a CPU profile (perf script output or folded stacks)"),
    LADDERS: _("load results"),
    BASELINES: _("a baseline result (fio JSON, iperf3 JSON, sysbench cpu or memory)"),
    CAPTURES: _("a packet capture (pcap or pcapng)"),
}
AREA_OF = {
    **dict.fromkeys((PERF_SCRIPT, FOLDED, ASYNC_PROFILER, PY_SPY), PROFILES),
    **dict.fromkeys(
        ("wrk", "wrk2", "hey", "ab", "k6-json", "k6-text", "jmeter-csv", "locust-csv"), LADDERS
    ),
    **dict.fromkeys(("fio-json", "iperf3-json", "sysbench-text"), BASELINES),
    "pcap": CAPTURES,
}


def formats_of(area: str) -> tuple[str, ...]:
    """The import formats of an area (profiles, ladders, baselines, captures)."""
    return tuple(format for format, its in AREA_OF.items() if its == area)


# How many skipped records an import names (line and what it was), for a person to read.
EXAMPLES_KEPT = 5


@dataclass(frozen=True)
class ReadReport:
    """What an importer found in one file: how many records (`unit`: samples, rows,
    requests, results, packets...) it read, and how many it left out, by reason, with the
    first few named (`examples`, "line 7: a comment line")."""

    file: str
    format: str
    unit: str
    read: int
    skipped: dict[str, int] = field(default_factory=dict)
    examples: tuple[str, ...] = ()

    @property
    def skipped_count(self) -> int:
        return sum(self.skipped.values())

    def as_dict(self) -> dict:
        return {
            "file": self.file,
            "format": self.format,
            "unit": self.unit,
            "read": self.read,
            "skipped": self.skipped_count,
            "reasons": [{"reason": r, "count": n} for r, n in self.skipped.items()],
            "examples": list(self.examples[:EXAMPLES_KEPT]),
        }


class FileRefused(ValueError):
    """A file an importer does not take; `phrase` says which file, what it is and what to do."""

    def __init__(self, phrase: Phrase):
        super().__init__(str(phrase))
        self.phrase = phrase


def identify(data: bytes | str) -> Kind:
    """What a file is, from its head (a gzip-compressed file is a "gzip" here: see unpack)."""
    found = recognise(data)
    if found.format is not None:
        return Kind(found.format, Phrase(FORMAT_WHAT[found.format]), PROFILES, found.format)
    return found.kind


def unpack(name: str, data: bytes, *, max_bytes: int) -> bytes:
    """A gzip-compressed file's content (every member of it), or the data as it is; refused
    when it unpacks to more than `max_bytes` or is damaged. Never holds more than
    `max_bytes` and one chunk."""
    if not data.startswith(GZIP_MAGIC):
        return data
    parts, size, rest = [], 0, data
    while rest.startswith(GZIP_MAGIC):
        member = zlib.decompressobj(wbits=31)
        chunk = b""
        try:
            chunk = member.decompress(rest, max_bytes - size + 1)
            while chunk:
                size += len(chunk)
                parts.append(chunk)
                if size > max_bytes:
                    raise FileRefused(
                        Phrase(
                            _("%(file)s unpacks to more than %(size)s MB, the most it may be."),
                            file=name,
                            size=f"{max_bytes / 1024 / 1024:g}",
                        )
                    )
                chunk = member.decompress(member.unconsumed_tail, max_bytes - size + 1)
        except zlib.error as error:
            raise FileRefused(
                Phrase(
                    _("%(file)s is a damaged gzip file: %(error)s."), file=name, error=str(error)
                )
            ) from None
        if not member.eof:
            raise FileRefused(
                Phrase(_("%(file)s is a gzip file cut short: its end is missing."), file=name)
            )
        rest = member.unused_data
    if rest.strip(b"\0"):  # gzip allows zero padding after its members, nothing else
        raise FileRefused(
            Phrase(_("%(file)s holds something other than gzip after its end."), file=name)
        )
    return b"".join(parts)


def peek(head: bytes) -> Kind:
    """What a file is from its first bytes, looking inside gzip (for files too large to
    unpack here: captures)."""
    kind = identify(head)
    if kind.key != "gzip":
        return kind
    try:
        inside = zlib.decompressobj(wbits=31).decompress(head, HEAD_BYTES)
    except zlib.error:
        return kind
    within = identify(inside) if inside else kind
    if within.key in ("gzip", "empty", "binary"):
        return kind
    return Kind(
        "gzip",
        Phrase(_("a gzip-compressed file holding %(what)s"), what=within.what),
        advice=Phrase(_("unpack it (gunzip) and import what is inside")),
    )


def expected_of(formats: tuple[str, ...]) -> Phrase:
    """What an importer of these formats reads, for a person."""
    if len(formats) == 1:
        return Phrase(FORMAT_WHAT[formats[0]])
    return Phrase(AREA_WHAT[AREA_OF[formats[0]]])


def refusal(name: str, kind: Kind, formats: tuple[str, ...]) -> FileRefused:
    return FileRefused(
        Phrase(
            _("%(file)s is not %(expected)s: it is %(said)s."),
            file=name,
            expected=expected_of(formats),
            said=said(kind),
        )
    )


def read_as(
    name: str, data: bytes | str, *, formats: tuple[str, ...], max_bytes: int
) -> tuple[bytes, Kind]:
    """A file for an importer of `formats` (several: each file is its own, of these): its
    content (unpacked from gzip) and what it is; or FileRefused naming the file and what it
    is instead."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogateescape")
    content = unpack(name, bytes(data), max_bytes=max_bytes)
    kind = identify(content)
    # JSON whose head has no tool's keys goes to a JSON format's parser, which reads it all
    # and says what it lacks (or which of the reader's limits it passes).
    unknown_json = kind.key == "json" and any(format in JSON_FORMATS for format in formats)
    if kind.format not in formats and not unknown_json:
        raise refusal(name, kind, formats)
    return content, kind
