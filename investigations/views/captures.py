"""Packet captures: the panel that starts, imports and lists them, a capture's page (its
figures, charts, silences and connections), two captures compared, and the pcap itself."""

import math
from dataclasses import dataclass
from datetime import UTC, datetime

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.formats import number_format
from django.utils.translation import gettext, ngettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe

from collectors.capture import FIGURES, SideSummary, compare
from collectors.capture.summary import DURATIONS_DIFFER, SAME_WITHIN, durations_alike
from investigations.access import investigation_for_user
from investigations.analysis.capture_charts import (
    capture_figures,
    connection_timeline_figure,
    duration_text,
)
from investigations.choices import CaptureStatus, Role
from investigations.forms.captures import CaptureImportForm
from investigations.forms.collections import start_ids
from investigations.import_reports import read_summary
from investigations.jobs import is_overdue
from investigations.models import Capture
from investigations.runs.packets import CaptureParameters
from investigations.selectors.captures import (
    CAPTURE_JOB,
    OVERDUE,
    capture_choices,
    capture_counterpart,
    capture_damaged,
    capture_get,
    capture_pairs,
    capture_read,
    captures_for,
)
from investigations.services.captures import (
    capture_import,
)
from investigations.views.evidence_items import item_or_404, requested_pair, stored_file
from investigations.views.forms import on_case, submit
from investigations.views.pages import form_or
from investigations.views.panels import panel

LISTED = 50
GAPS_SHOWN = 50
GAPS_COMPARED = 10
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".dmp")

# compare()'s "better" (which side), as the marks read it: from side A's point of view.
VERDICTS = {"a": "better", "b": "worse", "same": "about equal"}
SILENT = {"client": _("client"), "server": _("server")}
# What the silent side sent when it spoke again (collectors.capture.aggregate.BEFORE).
BEFORE = {
    "request": _("a new request"),
    "response": _("its response"),
    "data": _("more of its data"),
    "close": _("FIN or RST: the close"),
    "ack": _("an ACK without data"),
}
ENDINGS = {
    "open": _("still open at the end"),
    "closed": _("closed"),
    "evicted": _("finished early (too many connections at once)"),
    "reused": _("its ports reused by a new connection"),
}


@dataclass(frozen=True)
class CaptureRow:
    """A capture as the panel lists it: an analysis past its deadline reads as failed
    (the sweep writes that; a page only shows it)."""

    capture: Capture
    overdue: bool

    @property
    def status(self) -> str:
        return CaptureStatus.FAILED if self.overdue else self.capture.job.status

    @property
    def status_label(self) -> str:
        return CaptureStatus(self.status).label

    @property
    def colour(self) -> str:
        return CaptureStatus.colour(self.status)


def _overdue(capture: Capture) -> bool:
    job = capture.job
    return is_overdue(status=job.status, deadline_at=job.deadline_at, active=CAPTURE_JOB.overdue)


@panel(
    name="captures",
    title=_("Packet captures"),
    template="investigations/_panel_captures.html",
    order=57,
)
def captures_context(request: HttpRequest, investigation) -> dict:
    rows = [CaptureRow(c, _overdue(c)) for c in captures_for(investigation=investigation)[:LISTED]]
    analysing = sum(1 for row in rows if row.status == CaptureStatus.ANALYSING)
    return {
        "capture_rows": rows,
        "capture_pairs": capture_pairs(investigation=investigation),
        "capture_form": form_or(
            request, "capture_form", lambda: CaptureParameters(auto_id=start_ids("capture"))
        ),
        "capture_import_form": form_or(request, "capture_import", CaptureImportForm),
        "captures_analysing": analysing,
        "overdue_text": gettext(OVERDUE),
        "heading_note": ngettext("%(count)s analysing", "%(count)s analysing", analysing)
        % {"count": analysing}
        if analysing
        else "",
    }


def _get(investigation, capture_id: int) -> Capture | None:
    return capture_get(investigation=investigation, capture_id=capture_id)


def _capture_or_404(investigation, capture_id) -> Capture:
    return item_or_404(_get, investigation, capture_id, _("No such capture in this investigation."))


# --- figures as people read them --------------------------------------------------------------


def _number(value: float | int | None) -> str:
    """Grouped, in the reader's locale, with as many decimals as the size calls for."""
    if value is None:
        return "—"
    if isinstance(value, int) or float(value).is_integer():
        return number_format(int(value), use_l10n=True, force_grouping=True)
    size = abs(value)
    decimals = 0 if size >= 100 else 1 if size >= 10 else 2 if size >= 1 else None
    if decimals is None:  # three significant digits below 1
        decimals = min(6, 2 - math.floor(math.log10(size)))
    return number_format(value, decimals, use_l10n=True, force_grouping=True)


def _figure(name: str, value) -> str:
    if value is not None and name == "tls_resumption_ratio":
        return f"{_number(round(value * 100, 1))} %"
    return _number(value)


@dataclass(frozen=True)
class ComparedFigure:
    label: str
    a: str
    b: str
    ratio: str
    verdict: str  # "better", "worse", "about equal" (side A's) or "" (volume, unknown)
    # No verdict because the figure is counted over each whole capture and they differ in
    # length (the note under the table says so).
    over_capture: bool = False


def _compared(a: Capture, b: Capture) -> list[ComparedFigure]:
    return [
        ComparedFigure(
            label=gettext(row.label),
            a=_figure(row.figure, row.a),
            b=_figure(row.figure, row.b),
            ratio=number_format(row.ratio, 2, use_l10n=True) if row.ratio is not None else "",
            verdict=VERDICTS.get(row.better, ""),
            over_capture=row.no_verdict == DURATIONS_DIFFER,
        )
        for row in compare(a.analysis, b.analysis)
    ]


def _seconds(value: float | None) -> str:
    return "—" if value is None else f"{_number(value)} s"


def _lengths_note(a: Capture, b: Capture) -> str:
    """Why the figures over each whole capture have no verdict, when they have none."""
    da, db = a.analysis.get("duration_s"), b.analysis.get("duration_s")
    if durations_alike(da, db):
        return ""
    return gettext(
        "The captures ran for different lengths (A %(a)s, B %(b)s): rates per second and "
        "totals over each capture say how long it ran as much as how its side behaves, so "
        "they have no verdict (marked –). Compare the figures per request, per connection "
        "and per packet, or captures taken at the same moment."
    ) % {"a": _seconds(da), "b": _seconds(db)}


def _figures_of(capture: Capture) -> list[tuple[str, str]]:
    summary = SideSummary.of(capture.analysis)
    return [(gettext(f.label), _figure(f.name, getattr(summary, f.name))) for f in FIGURES]


def _gaps(analysis: dict, limit: int) -> list[dict]:
    """The longest silences, with who was silent and what they sent then in words."""
    return [
        {
            **gap,
            "when": datetime.fromtimestamp(gap["at"], tz=UTC) if gap.get("at") else None,
            "ms": gap["seconds"] * 1000,
            "silent_label": SILENT.get(gap["silent"], gap["silent"]),
            "before_label": BEFORE.get(gap["before"], gap["before"]),
        }
        for gap in analysis.get("gaps", [])[:limit]
    ]


def _gap_kinds(analysis: dict) -> list[dict]:
    return [
        {
            "silent": SILENT.get(kind["silent"], kind["silent"]),
            "before": BEFORE.get(kind["before"], kind["before"]),
            "count": kind["count"],
        }
        for kind in analysis.get("gap_kinds", [])
    ]


def _threshold(analysis: dict) -> str:
    """The silence a gap is at least, as people read it (100 ms)."""
    seconds = analysis.get("gap_threshold_s")
    return duration_text(seconds) if seconds else ""


def _connections(analysis: dict) -> list[dict]:
    return [
        {**c, "ended_label": ENDINGS.get(c.get("ended"), c.get("ended"))}
        for c in analysis.get("top_connections", [])
    ]


def _chart_list(figures: dict[str, dict], prefix: str) -> list[tuple[str, str, dict]]:
    """(the json_script id, the title, the figure) of each chart, as the template draws them
    (static/js/perfcase.js draws each [data-chart] from the json_script it names)."""
    return [
        (f"{prefix}-{name}", figure["layout"]["title"]["text"], figure)
        for name, figure in figures.items()
    ]


def _labels(*captures: Capture) -> dict[str, str]:
    return {c.side.key: c.side.label for c in captures}


def _download_name(capture: Capture) -> str:
    name = capture.name or f"capture-{capture.pk}"
    return name if name.lower().endswith(CAPTURE_SUFFIXES) else f"{name}.pcap"


# --- pages --------------------------------------------------------------------------------------


@require_safe
@login_required
def capture_detail(request: HttpRequest, pk: int, capture_id: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    capture = _capture_or_404(investigation, capture_id)
    row = CaptureRow(capture, _overdue(capture))
    context = {
        "investigation": investigation,
        "capture": capture,
        "row": row,
        "overdue_text": gettext(OVERDUE),
        "download_url": reverse("capture_pcap", args=[pk, capture.pk]),
        "download_name": _download_name(capture),
    }
    if row.status == CaptureStatus.READY:
        analysis = capture.analysis
        labels = _labels(capture)
        side = capture.side.key
        charts = _chart_list(capture_figures({side: analysis}, labels), "capture")
        if capture.marks:
            timeline = connection_timeline_figure(
                capture.marks, analysis.get("gaps", []), side, labels
            )
            charts += _chart_list({"timeline": timeline}, "capture")
        other = capture_counterpart(investigation=investigation, capture=capture)
        compare_query = None
        if other is not None:
            a, b = (capture, other) if side == "a" else (other, capture)
            compare_query = f"?a={a.pk}&b={b.pk}"
        context.update(
            {
                "analysis": analysis,
                "figures": _figures_of(capture),
                "charts": charts,
                "gaps": _gaps(analysis, GAPS_SHOWN),
                "gap_kinds": _gap_kinds(analysis),
                "connections": _connections(analysis),
                "tls": analysis.get("tls", {}),
                "server_ports": analysis.get("connection", {}).get("server_ports", []),
                "guessed_ports": analysis.get("connection", {}).get("guessed_server_ports", []),
                "decode": analysis.get("decode", {}),
                "read": read_summary([capture_read(capture)]),
                "gap_threshold": _threshold(analysis),
                "compare_query": compare_query,
            }
        )
    return render(request, "investigations/capture_detail.html", context)


def _pair(request: HttpRequest, investigation) -> tuple[Capture, Capture]:
    """The two captures the query names (?a=&b=), or the newest pair's."""
    return requested_pair(
        request,
        investigation,
        get=_get,
        pairs=lambda: capture_pairs(investigation=investigation),
        missing=_("No such capture in this investigation."),
        none_yet=_("No pair of analysed captures to compare yet."),
    )


@require_safe
@login_required
def capture_compare(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    a, b = _pair(request, investigation)
    ready = a.job.status == CaptureStatus.READY and b.job.status == CaptureStatus.READY
    context = {
        "investigation": investigation,
        "a": a,
        "b": b,
        "ready": ready,
        "choices": list(capture_choices(investigation=investigation)),
    }
    if ready:
        # Each capture keeps its own side's colour and label, whichever side it is shown as.
        analyses = {"a": a.analysis, "b": b.analysis}
        labels = {"a": a.side.label, "b": b.side.label}
        charts = _chart_list(capture_figures(analyses, labels), "compare")
        for key, capture in (("a", a), ("b", b)):
            if capture.marks:
                figure = connection_timeline_figure(
                    capture.marks, capture.analysis.get("gaps", []), key, labels
                )
                charts += _chart_list({f"timeline-{key}": figure}, "compare")
        context.update(
            {
                "rows": _compared(a, b),
                "lengths_note": _lengths_note(a, b),
                "damaged": [capture for capture in (a, b) if capture_damaged(capture)],
                "charts": charts,
                "gap_sides": [
                    ("a", _gaps(a.analysis, GAPS_COMPARED), _threshold(a.analysis)),
                    ("b", _gaps(b.analysis, GAPS_COMPARED), _threshold(b.analysis)),
                ],
                "same_within": f"{SAME_WITHIN:.0%}",
            }
        )
    return render(request, "investigations/capture_compare.html", context)


@require_safe
@login_required
def capture_pcap(request: HttpRequest, pk: int, capture_id: int) -> FileResponse:
    """The capture file as it was kept, for Wireshark."""
    investigation = investigation_for_user(request.user, pk)
    capture = _capture_or_404(investigation, capture_id)
    return stored_file(
        capture.pcap,
        filename=_download_name(capture),
        gone=_("The capture file is no longer stored."),
        content_type="application/vnd.tcpdump.pcap",
    )


@require_POST
@login_required
def capture_import_view(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = CaptureImportForm(request.POST, request.FILES)

    def imported(captures) -> HttpResponse:
        messages.success(
            request,
            ngettext(
                "Imported %(count)d capture onto side %(side)s: it is being analysed.",
                "Imported %(count)d captures onto side %(side)s: they are being analysed.",
                len(captures),
            )
            % {"count": len(captures), "side": form.cleaned_data["side"].upper()},
        )
        return redirect(reverse("investigation_detail", args=[pk]) + "#captures")

    return submit(
        form,
        lambda data: capture_import(
            investigation=investigation,
            user=request.user,
            side_key=data["side"],
            uploads=data["file"],
        ),
        done=imported,
        failed=on_case(request, investigation, panel="captures", name="capture_import"),
    )
