"""Knowledge-base entries get an owner: the installation (`team` empty) or one team. Entries
that ship with Perfcase (data/root_causes.json) stay the installation's. An entry no team
owned and that Perfcase did not ship goes to its writer's team when the writer is in exactly
one team. An entry that other teams' cases already confirm or point to (all entries were read
by every team until now) becomes the installation's, so those cases keep reading it. The
team of an entry can no longer be deleted from under it (PROTECT), and every edit is kept as
a RootCauseRevision."""

import json
from pathlib import Path

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models

ENTRIES = Path(__file__).parent / "data" / "root_causes.json"


def _used_by_other_teams(apps, root_cause, team_id) -> bool:
    CaseRootCause = apps.get_model("investigations", "CaseRootCause")
    Finding = apps.get_model("investigations", "Finding")
    return (
        CaseRootCause.objects.filter(root_cause=root_cause)
        .exclude(investigation__team_id=team_id)
        .exists()
        or Finding.objects.filter(root_cause=root_cause)
        .exclude(investigation__team_id=team_id)
        .exists()
    )


def own(apps, schema_editor):
    RootCause = apps.get_model("investigations", "RootCause")
    Membership = apps.get_model("investigations", "Membership")
    shipped = {entry["slug"] for entry in json.loads(ENTRIES.read_text(encoding="utf-8"))}
    for root_cause in RootCause.objects.filter(team__isnull=True).exclude(slug__in=shipped):
        if root_cause.created_by_id is None:
            continue
        teams = list(
            Membership.objects.filter(user_id=root_cause.created_by_id).values_list(
                "team_id", flat=True
            )[:2]
        )
        if len(teams) == 1 and not _used_by_other_teams(apps, root_cause, teams[0]):
            root_cause.team_id = teams[0]
            root_cause.save(update_fields=["team"])
    for root_cause in RootCause.objects.filter(team__isnull=False):
        if _used_by_other_teams(apps, root_cause, root_cause.team_id):
            root_cause.team_id = None
            root_cause.save(update_fields=["team"])


class Migration(migrations.Migration):
    dependencies = [
        ("investigations", "0016_token_expiry"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="rootcause",
            name="team",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.PROTECT,
                related_name="root_causes",
                to="investigations.team",
            ),
        ),
        migrations.CreateModel(
            name="RootCauseRevision",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("author_name", models.CharField(blank=True, max_length=150)),
                ("created_at", models.DateTimeField()),
                ("previous", models.JSONField(default=dict)),
                ("current", models.JSONField(default=dict)),
                (
                    "author",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
                (
                    "root_cause",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="revisions",
                        to="investigations.rootcause",
                    ),
                ),
            ],
            options={
                "ordering": ["-created_at", "-id"],
                "indexes": [
                    models.Index(
                        fields=["root_cause", "-created_at"], name="rootcauserevision_entry"
                    )
                ],
            },
        ),
        migrations.RunPython(own, migrations.RunPython.noop),
    ]
