"""Ladder sides move onto Job (issue 22): each side's status, deadline, error (with the
phrases it and the breaking reason were made from) and the moments it was claimed and
ended become its job's. Its step, where it broke and its source stay the side's."""

import django.db.models.deletion
from django.db import migrations, models

# The rows written here are checked now, not at the commit: the job column's ALTER that
# follows cannot run while checks of them are pending (PostgreSQL; SQLite has no such
# statement and checks as it goes).
CHECK_NOW = "SET CONSTRAINTS ALL IMMEDIATE"
MOVED = ("status", "error", "phrases", "finished_at", "deadline_at")


def check_now(schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CHECK_NOW)


def sides_to_jobs(apps, schema_editor):
    LadderSide = apps.get_model("investigations", "LadderSide")
    Job = apps.get_model("investigations", "Job")
    for side in LadderSide.objects.select_related("ladder").iterator():
        side.job = Job.objects.create(
            kind="ladder_side",
            object_id=side.pk,
            began_at=side.started_at,
            attempts=1 if side.started_at else 0,
            requested_by_id=side.ladder.requested_by_id,
            created_at=side.ladder.created_at,
            **{field: getattr(side, field) for field in MOVED},
        )
        side.save(update_fields=["job"])
    check_now(schema_editor)


def jobs_to_sides(apps, schema_editor):
    LadderSide = apps.get_model("investigations", "LadderSide")
    for side in LadderSide.objects.exclude(job=None).select_related("job").iterator():
        for field in MOVED:
            setattr(side, field, getattr(side.job, field))
        side.started_at = side.job.began_at
        side.save(update_fields=[*MOVED, "started_at"])
    check_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("investigations", "0025_target_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="ladderside",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="investigations.job",
            ),
        ),
        migrations.RunPython(sides_to_jobs, jobs_to_sides),
        migrations.AlterField(
            model_name="ladderside",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="investigations.job",
            ),
        ),
        migrations.RemoveIndex(model_name="ladderside", name="ladder_side_unfinished_due"),
        *(
            migrations.RemoveField(model_name="ladderside", name=field)
            for field in (*MOVED, "started_at")
        ),
    ]
