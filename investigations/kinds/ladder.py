"""Ladders: load raised step by step on both sides at once (or results made elsewhere), the
knee of each side found. Run by runs/ladder.py, not by a collection's Plan."""

from django.urls import path, reverse
from django.utils.translation import gettext

from investigations.choices import EvidenceKind
from investigations.kinds import EvidenceSource, Kind, register
from investigations.models import Ladder
from investigations.selectors.postmortem import ladder_verdicts
from investigations.services.checklist import ladder_evidence


def urls() -> list:
    from investigations.views import ladders

    return [
        path("investigations/<int:pk>/ladders/", ladders.ladder_new, name="ladder_new"),
        path("investigations/<int:pk>/imports/", ladders.ladder_import_view, name="ladder_import"),
        path("ladders/<int:pk>/", ladders.ladder_detail, name="ladder_detail"),
        path("ladders/<int:pk>/cancel/", ladders.ladder_cancel_view, name="ladder_cancel"),
        path("ladders/<int:pk>/rerun/", ladders.ladder_rerun_view, name="ladder_rerun"),
    ]


def router():
    from investigations.api.ladders import router

    return router


def views():
    from investigations.views import ladders

    return ladders


register(
    Kind(
        key=EvidenceKind.LADDER,
        label=EvidenceKind.LADDER.label,
        order=40,
        urls=urls,
        router=router,
        views=views,
        panel="ladders",
        checklist={"ladder": ladder_evidence},
        evidence=EvidenceSource(
            model=Ladder,
            rows=lambda investigation: investigation.ladders.order_by("-created_at"),
            label=lambda ladder: f"#{ladder.pk} {ladder.created_at:%Y-%m-%d %H:%M}",
            postmortem_label=lambda ladder: gettext("Ladder #%(pk)s") % {"pk": ladder.pk},
            url=lambda ladder: reverse("ladder_detail", args=[ladder.pk]),
        ),
        postmortem=ladder_verdicts,
    )
)
