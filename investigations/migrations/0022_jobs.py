"""One Job for all background work (issue 22): the Job table, and host-key scans moved onto it.

Each host's last scan (scan_status, scan_error and its phrase, scan_requested_at) becomes a
Job of kind "host_key_scan"; a scan still running keeps its deadline (asked for + the scan's
time + the grace), so the sweep fails it as it would have.
"""

from datetime import timedelta

import django.db.models.deletion
import django.utils.timezone
from django.conf import settings
from django.db import migrations, models

SCAN_GRACE_SECONDS = 30


def scans_to_jobs(apps, schema_editor):
    Host = apps.get_model("investigations", "Host")
    Job = apps.get_model("investigations", "Job")
    seconds = 2 * settings.SSH_CONNECT_TIMEOUT + 10 + SCAN_GRACE_SECONDS
    for host in Host.objects.exclude(scan_status="").iterator():
        asked = host.scan_requested_at or host.created_at
        phrase = (host.phrases or {}).get("scan_error")
        host.job = Job.objects.create(
            kind="host_key_scan",
            object_id=host.pk,
            status=host.scan_status,
            error=host.scan_error,
            phrases={"error": phrase} if phrase else {},
            created_at=asked,
            deadline_at=asked + timedelta(seconds=seconds),
            attempts=1,
        )
        host.save(update_fields=["job"])


def jobs_to_scans(apps, schema_editor):
    Host = apps.get_model("investigations", "Host")
    for host in Host.objects.exclude(job=None).select_related("job").iterator():
        phrase = host.job.phrases.get("error")
        host.scan_status, host.scan_error = host.job.status, host.job.error
        host.scan_requested_at = host.job.created_at
        host.phrases = {"scan_error": phrase} if phrase else {}
        host.save(update_fields=["scan_status", "scan_error", "scan_requested_at", "phrases"])


class Migration(migrations.Migration):
    dependencies = [
        ("investigations", "0021_target_timings"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="Job",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("kind", models.CharField(max_length=40)),
                ("object_id", models.PositiveBigIntegerField(blank=True, null=True)),
                ("status", models.CharField(blank=True, max_length=20)),
                ("progress", models.PositiveSmallIntegerField(default=0)),
                ("step", models.CharField(blank=True, max_length=200)),
                ("attempts", models.PositiveIntegerField(default=0)),
                ("deadline_at", models.DateTimeField(blank=True, null=True)),
                ("began_at", models.DateTimeField(blank=True, null=True)),
                ("finished_at", models.DateTimeField(blank=True, null=True)),
                ("error", models.TextField(blank=True)),
                ("phrases", models.JSONField(blank=True, default=dict)),
                ("cancel_requested_at", models.DateTimeField(blank=True, null=True)),
                ("created_at", models.DateTimeField(default=django.utils.timezone.now)),
                (
                    "requested_by",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to=settings.AUTH_USER_MODEL,
                    ),
                ),
            ],
        ),
        migrations.AddField(
            model_name="host",
            name="job",
            field=models.OneToOneField(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to="investigations.job",
            ),
        ),
        migrations.AddIndex(
            model_name="job",
            index=models.Index(
                condition=models.Q(
                    (
                        "status__in",
                        ("queued", "running", "scanning", "analysing", "pending", "sending"),
                    )
                ),
                fields=["deadline_at"],
                name="job_active_deadline",
            ),
        ),
        migrations.AddIndex(
            model_name="job",
            index=models.Index(fields=["kind", "object_id"], name="job_kind_object"),
        ),
        migrations.RunPython(scans_to_jobs, jobs_to_scans),
        migrations.RemoveField(
            model_name="host",
            name="phrases",
        ),
        migrations.RemoveField(
            model_name="host",
            name="scan_error",
        ),
        migrations.RemoveField(
            model_name="host",
            name="scan_requested_at",
        ),
        migrations.RemoveField(
            model_name="host",
            name="scan_status",
        ),
    ]
