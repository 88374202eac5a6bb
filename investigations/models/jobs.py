from django.conf import settings
from django.db import models
from django.utils import timezone

# The statuses of work not yet ended, of every kind (each kind keeps its own vocabulary:
# jobs/kinds.py). The sweep's one UPDATE and its index read these.
ACTIVE_STATUSES = ("queued", "running", "scanning", "analysing", "pending", "sending")


class Job(models.Model):
    """One piece of background work, whatever its kind: a host-key scan, a webhook
    delivery, a capture's analysis, a collection target, a ladder side. The row it works
    for (`kind`, `object_id`) points back at it with a one-to-one `job`; its lifecycle is
    the jobs module's (investigations/jobs/)."""

    kind = models.CharField(max_length=40)
    # The row the work is for (a Host, a WebhookDelivery, ...), of the model `kind` names.
    object_id = models.PositiveBigIntegerField(null=True, blank=True)
    # The kind's own status value (its TextChoices): no global choices.
    status = models.CharField(max_length=20, blank=True)
    progress = models.PositiveSmallIntegerField(default=0)
    step = models.CharField(max_length=200, blank=True)
    # How many times it was claimed: every write after a claim names it, so a superseded
    # run changes nothing.
    attempts = models.PositiveIntegerField(default=0)
    # Active work past this moment (its worker was killed or hung) is failed by the sweep
    # and reads as failed until then. None: no deadline (waiting for a retry, say).
    deadline_at = models.DateTimeField(null=True, blank=True)
    began_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # The phrases error and step were made from, read in each person's language.
    phrases = models.JSONField(default=dict, blank=True)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # When the work was asked for.
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # Active work past its deadline: the sweep's one query, every few seconds in
            # every worker, reads the unfinished jobs only.
            models.Index(
                fields=["deadline_at"],
                name="job_active_deadline",
                condition=models.Q(status__in=ACTIVE_STATUSES),
            ),
            models.Index(fields=["kind", "object_id"], name="job_kind_object"),
        ]

    def __str__(self) -> str:
        return f"{self.kind} job {self.pk} ({self.status})"


class JobState:
    """Mixed into a model whose rows own a Job (a one-to-one `job`) and are read as they
    always were: the job's fields read as the row's own (`target.status`, `side.error`);
    writes go through the jobs module and the kind's service."""

    status = property(lambda self: self.job.status)
    progress = property(lambda self: self.job.progress)
    step = property(lambda self: self.job.step)
    error = property(lambda self: self.job.error)
    phrases = property(lambda self: self.job.phrases)
    attempts = property(lambda self: self.job.attempts)
    # When a worker claimed it (the job's beginning).
    started_at = property(lambda self: self.job.began_at)
    finished_at = property(lambda self: self.job.finished_at)
    deadline_at = property(lambda self: self.job.deadline_at)


def delete_owned_job(sender, instance, **kwargs) -> None:
    """post_delete of a row that owns a job (models with a one-to-one `job`): the job goes
    with it, so no Job row outlives the work it was for."""
    if instance.job_id is not None:
        Job.objects.filter(pk=instance.job_id).delete()


def job_owners(models_) -> list:
    """The models among `models_` whose rows own a Job (a one-to-one `job` to it)."""
    owners = []
    for model in models_:
        field = next((f for f in model._meta.get_fields() if f.name == "job"), None)
        if field is not None and field.one_to_one and field.related_model is Job:
            owners.append(model)
    return owners
