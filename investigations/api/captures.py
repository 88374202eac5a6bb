"""Packet captures: list, read the analysis, download the pcap, compare two, import."""

from datetime import datetime

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema

from collectors.capture import compare
from investigations.access import capture_for_user, investigation_for_user
from investigations.api.imports import ImportReadOut, importer
from investigations.api.limits import EXPENSIVE
from investigations.api.schemas import ErrorOut, Id
from investigations.choices import CaptureStatus
from investigations.models import Capture
from investigations.phrases import stored_text
from investigations.selectors.captures import capture_get, capture_read, captures_for
from investigations.services.captures import capture_import
from investigations.views.evidence_items import stored_file

router = Router(tags=["captures"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}
PCAP_TYPE = "application/vnd.tcpdump.pcap"


def _of_job(obj, name: str):
    """The capture's analysis `name` (status, progress) from its job; a capture already read
    into a dict (the detail's body, captures_get) has it as its own."""
    return obj[name] if isinstance(obj, dict) else getattr(obj.job, name)


class CaptureOut(Schema):
    id: int
    investigation: int = Field(alias="investigation_id")
    host: int | None = Field(alias="host_id")
    host_name: str | None = None
    side: str = Field(alias="side.key")
    name: str
    status: CaptureStatus = Field(description="analysing, ready or failed")
    progress: int = Field(description="percent of the analysis done")
    error: str = ""
    packets: int
    bytes: int
    size: int = Field(description="bytes of the pcap file")
    sha256: str
    interface: str
    filter: str
    seconds: int | None
    snaplen: int | None
    truncated: bool = Field(description="the capture stopped at its size cap")
    tcpdump: dict = Field(description="what tcpdump said: captured, received, dropped")
    collection: int | None = None
    collected_at: datetime

    @staticmethod
    def resolve_host_name(obj) -> str | None:
        return obj.host.name if obj.host else None

    @staticmethod
    def resolve_collection(obj) -> int | None:
        return obj.target.collection_id if obj.target_id else None

    @staticmethod
    def resolve_status(obj) -> str:
        return _of_job(obj, "status")

    @staticmethod
    def resolve_progress(obj) -> int:
        return _of_job(obj, "progress")

    @staticmethod
    def resolve_error(obj) -> str:
        return stored_text(obj if isinstance(obj, dict) else obj.job, "error")


class CaptureListOut(Schema):
    items: list[CaptureOut]


class GapOut(Schema):
    connection: str = Field(description="client address:port -> server address:port")
    stream: int = Field(description="the connection's tcp.stream number, as in Wireshark")
    at: float = Field(description="when the silence began, Unix time")
    at_offset_s: float | None = Field(description="when it began, from the first packet")
    seconds: float
    silent: str = Field(description="client or server: the side that broke the silence")
    before: str = Field(description="request, response, data, close or ack")


class CaptureDetailOut(CaptureOut):
    """The capture and its analysis (collectors/capture/analysis.py defines each figure);
    the figures are null while it is analysed or when it failed."""

    first_packet_at: float | None = Field(None, description="Unix time")
    last_packet_at: float | None = None
    duration_s: float | None = None
    packets_per_s: float | None = None
    throughput_bps: float | None = None
    connections: int | None = Field(None, description="TCP connections (tcp.stream)")
    connections_per_s: float | None = None
    connections_per_s_peak: float | None = None
    tls_handshakes: int | None = Field(None, description="ClientHellos")
    tls_handshakes_per_s: float | None = None
    retransmissions: int | None = Field(None, description="as tcp.analysis.retransmission")
    fast_retransmissions: int | None = None
    spurious_retransmissions: int | None = None
    duplicate_acks: int | None = None
    zero_windows: int | None = None
    out_of_order: int | None = None
    lost_segments: int | None = None
    acked_unseen_segments: int | None = None
    keep_alives: int | None = None
    resets: int | None = Field(None, description="connections reset")
    rst_packets: int | None = None
    gap_threshold_s: float | None = None
    gaps: list[GapOut] = Field([], description="the longest silences, longest first")
    gap_count: int | None = None
    gap_seconds: float | None = None
    gap_kinds: list[dict] = Field([], description="{silent, before, count}")
    wait_seconds: dict = Field({}, description="seconds silent in gaps: client, server")
    inter_packet_time: dict = Field({}, description="a histogram, seconds")
    request_wait: dict = Field({}, description="client waits before requests, seconds")
    response_wait: dict = Field({}, description="server waits before responses, seconds")
    connection: dict = Field({}, description="requests, durations, handshakes, server ports")
    top_hosts: list[dict] = []
    top_connections: list[dict] = []
    retransmitting_connections: list[dict] = []
    tls: dict = Field({}, description="handshakes, resumptions, SNI, versions")
    timeline: dict = Field({}, description="{bucket_seconds, rows}")
    decode: dict = {}
    link_types: dict = {}
    interfaces: list[dict] = []
    connections_finished_early: int | None = None
    problems: list[dict] = Field([], description="damage: {offset, message}")
    problem_count: int | None = None
    read: ImportReadOut | None = Field(
        None,
        description="once analysed: its packets, and those whose contents could not be read, "
        "by why",
    )


class ComparisonOut(Schema):
    figure: str
    label: str
    a: float | None
    b: float | None
    ratio: float | None = Field(description="a / b")
    better: str | None = Field(
        description="a, b, same (within 5 %), or null for volumes and where no_verdict says why"
    )
    no_verdict: str | None = Field(
        None,
        description="durations_differ: a total or rate over each whole capture, and the "
        "captures' durations differ by more than 10 %, so neither side is better by it",
    )


class CompareOut(Schema):
    a: int
    b: int
    figures: list[ComparisonOut]


class ImportedCapturesOut(Schema):
    captures: list[CaptureOut]


@router.get("/investigations/{investigation_id}/captures", response={200: CaptureListOut, **ERRORS})
def captures_list(request, investigation_id: Id):
    """The investigation's packet captures, newest first."""
    investigation = investigation_for_user(request.user, investigation_id)
    return {"items": list(captures_for(investigation=investigation).select_related("target"))}


@router.get(
    "/investigations/{investigation_id}/captures/compare",
    response={200: CompareOut, **ERRORS},
    throttle=EXPENSIVE,
)
def captures_compare(request, investigation_id: Id, a: Id, b: Id):
    """Capture a against capture b, figure by figure, with which side is better."""
    investigation = investigation_for_user(request.user, investigation_id)
    found = {
        name: capture_get(investigation=investigation, capture_id=pk)
        for name, pk in (("a", a), ("b", b))
    }
    errors = {}
    for name, capture in found.items():
        if capture is None:
            errors[name] = _("No such capture in this investigation.")
        elif capture.job.status != CaptureStatus.READY:
            errors[name] = _("This capture has no analysis (yet).")
    if errors:
        raise ValidationError(errors)
    rows = compare(found["a"].analysis, found["b"].analysis)
    return {
        "a": a,
        "b": b,
        "figures": [row.as_dict() | {"label": _(row.label)} for row in rows],
    }


@router.get("/captures/{capture_id}", response={200: CaptureDetailOut, **ERRORS})
def captures_get(request, capture_id: Id):
    """A capture and its analysis: packets, bytes, duration_s, connections,
    connections_per_s, tls_handshakes, retransmissions, duplicate_acks, zero_windows,
    resets, gaps and the rest (connection, tls, timeline, histograms, problems...)."""
    capture = capture_for_user(request.user, capture_id)
    # The capture's fields under the names the schema reads them by, then the analysis.
    body = CaptureOut.from_orm(capture).model_dump(by_alias=True)
    read = capture_read(capture)
    return (capture.analysis or {}) | body | {"read": read.as_dict() if read else None}


@router.get("/captures/{capture_id}/pcap", response={200: None, **ERRORS})
def captures_pcap(request, capture_id: Id):
    """The pcap itself, as captured or imported: it opens in Wireshark."""
    capture: Capture = capture_for_user(request.user, capture_id)
    return stored_file(
        capture.pcap,
        filename=capture.name,
        gone=_("The capture's file is no longer stored."),
        content_type=PCAP_TYPE,
    )


@importer(
    "pcap",
    out=ImportedCapturesOut,
    summary="packet captures (pcap or pcapng), one a file, analysed by a worker; "
    '`{"captures": [...]}` comes back, each analysing (read GET /api/captures/{id}).',
)
def captures_import(*, request, investigation, side, format, files, options) -> dict:
    return {
        "captures": capture_import(
            investigation=investigation, user=request.user, side_key=side, uploads=files
        )
    }
