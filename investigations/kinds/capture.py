"""Packet captures: tcpdump on the hosts (or a pcap made elsewhere), analysed per connection."""

from django.urls import path, reverse

from investigations.choices import CollectionKind
from investigations.kinds import EvidenceSource, Kind, register


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


register(
    Kind(
        key=CollectionKind.CAPTURE,
        label=CollectionKind.CAPTURE.label,
        order=30,
        plan="investigations.runs.packets:CapturePlan",
        urls=urls,
        router="investigations.api.captures:router",
        views="investigations.views.captures",
        panel="captures",
        checklist={"packets_at_knee": "investigations.services.captures:captured_evidence"},
        evidence=EvidenceSource(
            model="investigations.models:Capture",
            rows=lambda investigation: investigation.captures.select_related("side"),
            label=lambda capture: capture.label_with_side,
            postmortem_label=lambda capture: capture.name,
            url=lambda capture: reverse(
                "capture_detail", args=[capture.investigation_id, capture.pk]
            ),
        ),
    )
)
