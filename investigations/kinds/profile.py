"""CPU profiles: perf on the hosts (or a file made elsewhere), folded into stacks."""

from django.urls import path, reverse

from investigations.choices import CollectionKind
from investigations.kinds import EvidenceSource, Kind, register
from investigations.models import Profile
from investigations.runs.profile import ProfilePlan
from investigations.services.profiles import profiled_evidence


def urls() -> list:
    from investigations.views import profiles

    return [
        path("investigations/<int:pk>/profiles/diff/", profiles.profile_diff, name="profile_diff"),
        path(
            "investigations/<int:pk>/profiles/diff/flame.json",
            profiles.profile_diff_flame,
            name="profile_diff_flame",
        ),
        path(
            "investigations/<int:pk>/profiles/import/",
            profiles.profile_import_view,
            name="profile_import",
        ),
        path(
            "investigations/<int:pk>/profiles/<int:profile_id>/",
            profiles.profile_detail,
            name="profile_detail",
        ),
        path(
            "investigations/<int:pk>/profiles/<int:profile_id>/flame.json",
            profiles.profile_flame,
            name="profile_flame",
        ),
        path(
            "investigations/<int:pk>/profiles/<int:profile_id>/folded.txt",
            profiles.profile_folded,
            name="profile_folded",
        ),
    ]


def router():
    from investigations.api.profiles import router

    return router


def views():
    from investigations.views import profiles

    return profiles


register(
    Kind(
        key=CollectionKind.PROFILE,
        label=CollectionKind.PROFILE.label,
        order=20,
        plan=ProfilePlan,
        urls=urls,
        router=router,
        views=views,
        panel="profiles",
        start_form="profile_form",
        checklist={"profile_at_knee": profiled_evidence},
        evidence=EvidenceSource(
            model=Profile,
            rows=lambda investigation: investigation.profiles.select_related("side"),
            label=lambda profile: profile.label_with_side,
            postmortem_label=lambda profile: profile.name,
            url=lambda profile: reverse(
                "profile_detail", args=[profile.investigation_id, profile.pk]
            ),
        ),
    )
)
