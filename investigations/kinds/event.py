"""Timeline entries: the notes and actions a root cause may name as its evidence."""

from django.urls import reverse

from investigations.choices import EvidenceKind
from investigations.kinds import EvidenceSource, Kind, register
from investigations.models import TimelineEvent
from investigations.phrases import stored_text


def _offer(investigation):
    return investigation.events.filter(
        kind__in=["note", "action"], deleted_at__isnull=True
    ).order_by("-occurred_at")


register(
    Kind(
        key=EvidenceKind.EVENT,
        label=EvidenceKind.EVENT.label,
        order=90,
        evidence=EvidenceSource(
            model=TimelineEvent,
            rows=lambda investigation: investigation.events.filter(deleted_at__isnull=True),
            offer=_offer,
            label=lambda event: (
                f"{event.occurred_at:%Y-%m-%d %H:%M} {stored_text(event, 'summary')[:120]}"
            ),
            url=lambda event: (
                reverse("timeline", args=[event.investigation_id]) + f"#event-{event.pk}"
            ),
            postmortem_label=lambda event: stored_text(event, "summary"),
            postmortem_url=lambda event: (
                reverse("investigation_detail", args=[event.investigation_id])
                + f"#event-{event.pk}"
            ),
        ),
    )
)
