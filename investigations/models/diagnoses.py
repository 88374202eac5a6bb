from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _

from investigations.choices import ColouredChoices
from investigations.models.jobs import JobState


class DiagnosisStatus(ColouredChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    COMPLETED = "completed", _("Completed")
    CANCELLED = "cancelled", _("Cancelled")
    FAILED = "failed", _("Failed")

    @classmethod
    def _colours(cls):
        return {
            cls.QUEUED: "grey",
            cls.RUNNING: "blue",
            cls.COMPLETED: "green",
            cls.CANCELLED: "grey",
            cls.FAILED: "red",
        }


class DiagnosisStage(models.TextChoices):
    """The method's stages a diagnosis runs, in their order."""

    FACTS = "facts", _("Host facts")
    BASELINE = "baseline", _("Baseline pack")
    LADDER = "ladder", _("Ladder")
    AT_KNEE = "at_knee", _("At the knee")


class StageStatus(ColouredChoices):
    PENDING = "pending", _("waiting")
    RUNNING = "running", _("running")
    SUCCEEDED = "succeeded", _("succeeded")
    FAILED = "failed", _("failed")
    SKIPPED = "skipped", _("skipped")
    CANCELLED = "cancelled", _("cancelled")

    @classmethod
    def _colours(cls):
        return {
            cls.PENDING: "grey",
            cls.RUNNING: "blue",
            cls.SUCCEEDED: "green",
            cls.FAILED: "red",
            cls.SKIPPED: "orange",
            cls.CANCELLED: "grey",
        }


ENDED_STAGE_STATUSES = [
    StageStatus.SUCCEEDED,
    StageStatus.FAILED,
    StageStatus.SKIPPED,
    StageStatus.CANCELLED,
]


class Diagnosis(JobState, models.Model):
    """One run of the method on both sides: its stages (facts, the baseline pack, the
    ladder, sampling, a CPU profile and a capture at the knee) run as ordinary collections
    and ladders of the case, one after the other. Its status, progress, deadline and error
    are its Job's (JobState); the stages are its own."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="diagnoses"
    )
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    # What was asked, with the defaults filled in (load, processes, seconds, budget).
    parameters = models.JSONField(default=dict, blank=True)
    # [{name, status, reason (+ its phrase), collections, ladder, estimate_seconds,
    #   started_at, ended_at}], in the method's order.
    stages = models.JSONField(default=list, blank=True)
    job = models.OneToOneField("Job", on_delete=models.CASCADE, related_name="+")
    # The number of the one advance task meant to run next: a redelivered or duplicated
    # task with an older number does nothing (tasks.diagnosis_advance).
    tick = models.PositiveIntegerField(default=0)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"diagnosis #{self.pk}"
