"""Packet captures: tcpdump on the hosts (or a pcap made elsewhere), analysed per connection."""

from django.urls import path, reverse

from investigations.choices import CollectionKind
from investigations.kinds import EvidenceSource, Kind, register
from investigations.models import Capture
from investigations.runs.packets import CapturePlan
from investigations.services.captures import captured_evidence


def urls() -> list:
    from investigations.views import captures

    return [
        path(
            "investigations/<int:pk>/captures/compare/",
            captures.capture_compare,
            name="capture_compare",
        ),
        path(
            "investigations/<int:pk>/captures/import/",
            captures.capture_import_view,
            name="capture_import",
        ),
        path(
            "investigations/<int:pk>/captures/<int:capture_id>/",
            captures.capture_detail,
            name="capture_detail",
        ),
        path(
            "investigations/<int:pk>/captures/<int:capture_id>/pcap/",
            captures.capture_pcap,
            name="capture_pcap",
        ),
    ]


def router():
    from investigations.api.captures import router

    return router


def views():
    from investigations.views import captures

    return captures


register(
    Kind(
        key=CollectionKind.CAPTURE,
        label=CollectionKind.CAPTURE.label,
        order=30,
        plan=CapturePlan,
        urls=urls,
        router=router,
        views=views,
        panel="captures",
        start_form="capture_form",
        checklist={"packets_at_knee": captured_evidence},
        evidence=EvidenceSource(
            model=Capture,
            rows=lambda investigation: investigation.captures.select_related("side"),
            label=lambda capture: capture.label_with_side,
            postmortem_label=lambda capture: capture.name,
            url=lambda capture: reverse(
                "capture_detail", args=[capture.investigation_id, capture.pk]
            ),
        ),
    )
)
