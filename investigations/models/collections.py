from django.conf import settings
from django.db import models

from investigations.choices import CollectionKind
from investigations.models.jobs import JobState


class Collection(models.Model):
    """One request for evidence, fanned out to a target per host and side."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="collections"
    )
    kind = models.CharField(max_length=20, choices=CollectionKind.choices)
    parameters = models.JSONField(default=dict, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # Every target waits for this moment, so that both sides measure the same time.
    start_at = models.DateTimeField()
    # A cancel asked for: the running targets stop what they started and end cancelled.
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    # Set once every target has ended.
    completed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"{self.get_kind_display()} #{self.pk}"


class CollectionTarget(JobState, models.Model):
    """One host's part of a collection, on one side. Its work (status, progress, step,
    claims, deadline, error) is its Job's (the jobs module's lifecycle), read as its own
    (JobState; `started_at` is when a worker claimed it, `began_at` when its measurement
    began)."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="targets")
    host = models.ForeignKey("Host", on_delete=models.PROTECT, related_name="targets")
    side = models.ForeignKey("Side", on_delete=models.CASCADE, related_name="targets")
    job = models.OneToOneField("Job", on_delete=models.CASCADE, related_name="+")
    # When the plan's measurement began: every target of a collection begins at one moment
    # once all are connected, so that A and B measure the same time.
    began_at = models.DateTimeField(null=True, blank=True)
    # Where the target's time went, {phase: seconds} (runs/timings.py), written by the
    # collection's runner once the target has ended.
    timings = models.JSONField(default=dict, blank=True)

    class Meta:
        ordering = ["side__key", "host__name"]
        constraints = [
            models.UniqueConstraint(
                fields=["collection", "host", "side"],
                name="%(app_label)s_%(class)s_one_per_host_and_side",
            )
        ]

    def __str__(self) -> str:
        return f"{self.collection} on {self.host} ({self.status})"


class Artifact(models.Model):
    """A raw output kept as it came from the host."""

    collection = models.ForeignKey(Collection, on_delete=models.CASCADE, related_name="artifacts")
    target = models.ForeignKey(
        CollectionTarget, on_delete=models.CASCADE, null=True, related_name="artifacts"
    )
    name = models.CharField(max_length=200)
    file = models.FileField(upload_to="artifacts/%Y/%m/%d/")
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    truncated = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    def __str__(self) -> str:
        return self.name
