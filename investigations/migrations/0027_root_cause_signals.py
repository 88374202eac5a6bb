"""Knowledge-base entries carry their signals: which evidence supports them and which speaks
against them, with weights (analysis/signals.py), from which a case's hypotheses are ranked.
The shipped entries get theirs from data/root_causes.json where they have none yet (an entry
an operator already gave signals keeps them); a shipped entry missing from the installation
(fewer-cpus, new with this migration) is added, as 0013 adds them. Back: the field goes."""

import importlib
import json
from pathlib import Path

from django.db import migrations, models

ENTRIES = Path(__file__).parent / "data" / "root_causes.json"


def ship_signals(apps, schema_editor):
    RootCause = apps.get_model("investigations", "RootCause")
    index = importlib.import_module("investigations.migrations.0013_root_causes")._index
    for entry in json.loads(ENTRIES.read_text(encoding="utf-8")):
        root_cause, created = RootCause.objects.get_or_create(
            slug=entry["slug"], defaults={k: v for k, v in entry.items() if k != "slug"}
        )
        if created:
            index(apps, root_cause)
        elif root_cause.team_id is None and not root_cause.signals:
            root_cause.signals = entry.get("signals", [])
            root_cause.save(update_fields=["signals"])


class Migration(migrations.Migration):
    dependencies = [("investigations", "0026_ladder_side_jobs")]

    operations = [
        migrations.AddField(
            model_name="rootcause",
            name="signals",
            field=models.JSONField(blank=True, default=list),
        ),
        migrations.RunPython(ship_signals, migrations.RunPython.noop),
    ]
