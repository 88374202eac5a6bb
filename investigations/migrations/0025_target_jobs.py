"""Collection targets move onto Job (issue 22): each target's status, progress, step,
claims, deadline, error (with its phrase) and the moments it was claimed and ended become
its job's. `began_at` (when its measurement began) and `timings` stay the target's."""

import django.db.models.deletion
from django.db import migrations, models

# The rows written here are checked now, not at the commit: the job column's ALTER that
# follows cannot run while checks of them are pending (PostgreSQL; SQLite has no such
# statement and checks as it goes).
CHECK_NOW = "SET CONSTRAINTS ALL IMMEDIATE"
MOVED = ("status", "progress", "step", "error", "phrases", "attempts", "finished_at", "deadline_at")


def check_now(schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CHECK_NOW)


def targets_to_jobs(apps, schema_editor):
    CollectionTarget = apps.get_model("investigations", "CollectionTarget")
    Job = apps.get_model("investigations", "Job")
    targets = CollectionTarget.objects.select_related("collection").iterator()
    for target in targets:
        target.job = Job.objects.create(
            kind="collection_target",
            object_id=target.pk,
            began_at=target.started_at,
            requested_by_id=target.collection.requested_by_id,
            created_at=target.collection.created_at,
            **{field: getattr(target, field) for field in MOVED},
        )
        target.save(update_fields=["job"])
    check_now(schema_editor)


def jobs_to_targets(apps, schema_editor):
    CollectionTarget = apps.get_model("investigations", "CollectionTarget")
    for target in CollectionTarget.objects.exclude(job=None).select_related("job").iterator():
        for field in MOVED:
            setattr(target, field, getattr(target.job, field))
        target.started_at = target.job.began_at
        target.save(update_fields=[*MOVED, "started_at"])
    check_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("investigations", "0024_capture_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="collectiontarget",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="investigations.job",
            ),
        ),
        migrations.RunPython(targets_to_jobs, jobs_to_targets),
        migrations.AlterField(
            model_name="collectiontarget",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="investigations.job",
            ),
        ),
        migrations.RemoveIndex(model_name="collectiontarget", name="target_unfinished_deadline"),
        *(
            migrations.RemoveField(model_name="collectiontarget", name=field)
            for field in (*MOVED, "started_at")
        ),
    ]
