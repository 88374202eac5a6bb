"""The first entries of the knowledge base: the root causes of ../shared/DOMAIN.md's table and
those the finding rules point to, in English and Chinese (data/root_causes.json, in our own
words), indexed for search. Editable afterwards; an entry already there is left as it is."""

import json
from collections import Counter
from pathlib import Path

from django.db import migrations

ENTRIES = Path(__file__).parent / "data" / "root_causes.json"
TEXTS = ("symptoms", "detection", "fix", "verification", "monitoring")


def _index(apps, root_cause) -> None:
    # As services/search.py's root_cause_index does, with this migration's models.
    from investigations.analysis.search_terms import terms

    SearchDocument = apps.get_model("investigations", "SearchDocument")
    SearchTerm = apps.get_model("investigations", "SearchTerm")
    texts = [(root_cause.title, 3.0), (root_cause.title_zh, 3.0)]
    for field in TEXTS:
        texts += [(getattr(root_cause, field), 1.0), (getattr(root_cause, f"{field}_zh"), 1.0)]
    texts += [(root_cause.slug.replace("-", " "), 1.0), (" ".join(root_cause.references), 0.5)]
    weighted = Counter()
    for text, weight in texts:
        for term, count in terms(text or "").items():
            weighted[term] += count * weight
    document, _ = SearchDocument.objects.update_or_create(
        kind="root_cause",
        object_id=root_cause.pk,
        defaults={"length": int(sum(weighted.values()))},
    )
    document.terms.all().delete()
    SearchTerm.objects.bulk_create(
        SearchTerm(document=document, term=term, weight=weight) for term, weight in weighted.items()
    )


def ship(apps, schema_editor):
    RootCause = apps.get_model("investigations", "RootCause")
    for entry in json.loads(ENTRIES.read_text(encoding="utf-8")):
        root_cause, created = RootCause.objects.get_or_create(
            slug=entry["slug"],
            # Later fields of an entry (its signals, 0027) are set by their own migration.
            defaults={k: v for k, v in entry.items() if k not in ("slug", "signals")},
        )
        if created:
            _index(apps, root_cause)


def unship(apps, schema_editor):
    RootCause = apps.get_model("investigations", "RootCause")
    SearchDocument = apps.get_model("investigations", "SearchDocument")
    slugs = [entry["slug"] for entry in json.loads(ENTRIES.read_text(encoding="utf-8"))]
    shipped = RootCause.objects.filter(slug__in=slugs, team__isnull=True, cases__isnull=True)
    SearchDocument.objects.filter(
        kind="root_cause", object_id__in=shipped.values_list("pk", flat=True)
    ).delete()
    shipped.delete()


class Migration(migrations.Migration):
    dependencies = [("investigations", "0012_knowledge")]

    operations = [migrations.RunPython(ship, unship)]
