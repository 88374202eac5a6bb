"""Host facts: one probe script a host, its facts stored and compared side by side."""

from django.urls import path

from investigations.choices import CollectionKind
from investigations.kinds import Kind, register
from investigations.runs.facts import FactsPlan


def urls() -> list:
    from investigations.views import collections

    return [
        path("investigations/<int:pk>/facts/diff/", collections.facts_diff, name="facts_diff"),
    ]


def router():
    from investigations.api.facts import router

    return router


register(
    Kind(
        key=CollectionKind.FACTS,
        label=CollectionKind.FACTS.label,
        order=10,
        plan=FactsPlan,
        urls=urls,
        router=router,
        panel="evidence",
        start_form="collect_form",
    )
)
