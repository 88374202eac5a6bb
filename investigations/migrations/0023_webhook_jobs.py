"""Webhook deliveries move onto Job (issue 22): each delivery's status, attempts, last error,
claim and end become its job's status, attempts, error, began_at and finished_at."""

import django.db.models.deletion
from django.db import migrations, models

# The rows written here are checked now, not at the commit: the job column's ALTER that
# follows cannot run while checks of them are pending (PostgreSQL; SQLite has no such
# statement and checks as it goes).
CHECK_NOW = "SET CONSTRAINTS ALL IMMEDIATE"


def check_now(schema_editor) -> None:
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(CHECK_NOW)


def deliveries_to_jobs(apps, schema_editor):
    WebhookDelivery = apps.get_model("investigations", "WebhookDelivery")
    Job = apps.get_model("investigations", "Job")
    for delivery in WebhookDelivery.objects.iterator():
        delivery.job = Job.objects.create(
            kind="webhook_delivery",
            object_id=delivery.pk,
            status=delivery.status,
            attempts=delivery.attempts,
            error=delivery.last_error,
            began_at=delivery.claimed_at,
            finished_at=delivery.finished_at,
            created_at=delivery.created_at,
        )
        delivery.save(update_fields=["job"])
    check_now(schema_editor)


def jobs_to_deliveries(apps, schema_editor):
    WebhookDelivery = apps.get_model("investigations", "WebhookDelivery")
    for delivery in WebhookDelivery.objects.exclude(job=None).select_related("job").iterator():
        job = delivery.job
        delivery.status, delivery.attempts, delivery.last_error = (
            job.status,
            job.attempts,
            job.error,
        )
        delivery.claimed_at, delivery.finished_at = job.began_at, job.finished_at
        delivery.save(
            update_fields=["status", "attempts", "last_error", "claimed_at", "finished_at"]
        )
    check_now(schema_editor)


class Migration(migrations.Migration):
    dependencies = [
        ("investigations", "0022_jobs"),
    ]

    operations = [
        migrations.AddField(
            model_name="webhookdelivery",
            name="job",
            field=models.OneToOneField(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="investigations.job",
            ),
        ),
        migrations.RunPython(deliveries_to_jobs, jobs_to_deliveries),
        migrations.AlterField(
            model_name="webhookdelivery",
            name="job",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="investigations.job",
            ),
        ),
        migrations.RemoveField(model_name="webhookdelivery", name="attempts"),
        migrations.RemoveField(model_name="webhookdelivery", name="claimed_at"),
        migrations.RemoveField(model_name="webhookdelivery", name="finished_at"),
        migrations.RemoveField(model_name="webhookdelivery", name="last_error"),
        migrations.RemoveField(model_name="webhookdelivery", name="status"),
    ]
