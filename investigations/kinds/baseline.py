"""The baseline pack: CPU, memory, disk and network benchmarks on both sides, compared."""

from django.urls import path

from investigations.choices import CollectionKind
from investigations.kinds import Kind, register
from investigations.runs.baseline import BaselinePlan


def urls() -> list:
    from investigations.views import baselines

    return [
        path("investigations/<int:pk>/baseline/", baselines.baseline_page, name="baseline_page"),
        path(
            "investigations/<int:pk>/baseline.<str:format>",
            baselines.baseline_export_view,
            name="baseline_export",
        ),
        path(
            "investigations/<int:pk>/baseline/import/",
            baselines.baseline_import_view,
            name="baseline_import",
        ),
    ]


def router():
    from investigations.api.baselines import router

    return router


def views():
    from investigations.views import baselines

    return baselines


register(
    Kind(
        key=CollectionKind.BASELINE,
        label=CollectionKind.BASELINE.label,
        order=50,
        plan=BaselinePlan,
        urls=urls,
        router=router,
        views=views,
        panel="baseline",
        start_form="baseline_form",
    )
)
