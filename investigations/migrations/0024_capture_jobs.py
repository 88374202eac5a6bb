"""Capture analyses move onto Job (issue 22): each capture's status, progress, deadline and
error (with its phrase) become its job's."""

import django.db.models.deletion
from django.db import migrations, models

# The rows written here are checked now, not at the commit: the job column's ALTER that
# follows cannot run while checks of them are pending (PostgreSQL; SQLite has no such
# statement and checks as it goes).
CHECK_NOW = "SET CONSTRAINTS ALL IMMEDIATE"


def check_now(schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CHECK_NOW)


def captures_to_jobs(apps, schema_editor):
    Capture = apps.get_model("investigations", "Capture")
    Job = apps.get_model("investigations", "Job")
    for capture in Capture.objects.iterator():
        capture.job = Job.objects.create(
            kind="capture_analysis",
            object_id=capture.pk,
            status=capture.status,
            progress=capture.progress,
            deadline_at=capture.deadline_at,
            error=capture.error,
            phrases=capture.phrases or {},
            requested_by_id=capture.created_by_id,
            created_at=capture.collected_at,
        )
        capture.save(update_fields=["job"])
    check_now(schema_editor)


def jobs_to_captures(apps, schema_editor):
    Capture = apps.get_model("investigations", "Capture")
    for capture in Capture.objects.exclude(job=None).select_related("job").iterator():
        job = capture.job
        capture.status, capture.progress, capture.deadline_at = (
            job.status,
            job.progress,
            job.deadline_at,
        )
        capture.error, capture.phrases = job.error, job.phrases
        capture.save(update_fields=["status", "progress", "deadline_at", "error", "phrases"])
    check_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("investigations", "0023_webhook_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="capture",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="investigations.job",
            ),
        ),
        migrations.RunPython(captures_to_jobs, jobs_to_captures),
        migrations.AlterField(
            model_name="capture",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="investigations.job",
            ),
        ),
        migrations.RemoveIndex(model_name="capture", name="capture_analysing_deadline"),
        migrations.RemoveField(model_name="capture", name="deadline_at"),
        migrations.RemoveField(model_name="capture", name="error"),
        migrations.RemoveField(model_name="capture", name="phrases"),
        migrations.RemoveField(model_name="capture", name="progress"),
        migrations.RemoveField(model_name="capture", name="status"),
    ]
