"""The search index: what a root cause or an investigation says, as weighted terms in plain
tables (SearchDocument, SearchTerm), written whenever its texts change. Read by
selectors/search.py; the terms come from analysis/search_terms.py, in English and Chinese."""

from collections import Counter

from django.db import transaction

from investigations.analysis.search_terms import terms
from investigations.models import Investigation, RootCause, SearchDocument, SearchTerm
from investigations.models.knowledge import BILINGUAL

ROOT_CAUSE, INVESTIGATION = "root_cause", "investigation"
TITLE_WEIGHT = 3.0


@transaction.atomic(savepoint=False)
def search_index(*, kind: str, object_id: int, texts: list[tuple[str, float]]) -> None:
    """Index one object's texts, each with its weight, in place of what it said before.

    Every write to a case indexes it again, so this is three statements (the document
    inserted or updated in one, its old terms deleted, its new ones inserted) and no
    savepoint of its own: it runs in its caller's transaction, or in one of its own."""
    weighted: Counter = Counter()
    for text, weight in texts:
        for term, count in terms(text or "").items():
            weighted[term] += count * weight
    [document] = SearchDocument.objects.bulk_create(
        [SearchDocument(kind=kind, object_id=object_id, length=int(sum(weighted.values())))],
        update_conflicts=True,
        unique_fields=["kind", "object_id"],
        update_fields=["length"],
    )
    SearchTerm.objects.filter(document_id=document.pk).delete()
    SearchTerm.objects.bulk_create(
        SearchTerm(document=document, term=term, weight=weight) for term, weight in weighted.items()
    )


def search_forget(*, kind: str, object_id: int) -> None:
    SearchDocument.objects.filter(kind=kind, object_id=object_id).delete()


def root_cause_index(*, root_cause: RootCause) -> None:
    texts = [(root_cause.title, TITLE_WEIGHT), (root_cause.title_zh, TITLE_WEIGHT)]
    for field in BILINGUAL[1:]:
        texts += [(getattr(root_cause, field), 1.0), (getattr(root_cause, f"{field}_zh"), 1.0)]
    texts += [(root_cause.slug.replace("-", " "), 1.0), (" ".join(root_cause.references), 0.5)]
    search_index(kind=ROOT_CAUSE, object_id=root_cause.pk, texts=texts)


def investigation_index(*, investigation: Investigation) -> None:
    """What a case says: its title and symptom, its sides, its notes, its root causes and its
    write-up (a closed case is found by what it turned out to be)."""
    texts = [
        (investigation.title, TITLE_WEIGHT),
        (investigation.symptom_metric, 2.0),
        (investigation.symptom_load, 1.0),
        (investigation.notes, 1.0),
        (investigation.close_reason, 1.0),
        (" ".join(investigation.tags.values_list("name", flat=True)), 2.0),
        (" ".join(investigation.sides.values_list("label", flat=True)), 1.0),
    ]
    for found in investigation.case_root_causes.select_related("root_cause"):
        cause = found.root_cause
        texts += [(cause.title, 2.0), (cause.title_zh, 2.0), (found.fix, 1.0)]
    postmortem = getattr(investigation, "postmortem", None)
    if postmortem is not None:
        for field in ("summary", "impact", "fix", "verification", "lessons"):
            texts.append((getattr(postmortem, field), 1.0))
    search_index(kind=INVESTIGATION, object_id=investigation.pk, texts=texts)
