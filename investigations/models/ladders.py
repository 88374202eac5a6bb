from django.conf import settings
from django.db import models

from investigations.choices import LadderStatus, LoadKind, LoadTool
from investigations.models.jobs import JobState


class Ladder(models.Model):
    """A stepped load test from both sides together, or results imported from elsewhere."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="ladders"
    )
    tool = models.CharField(max_length=10, choices=LoadTool.choices, default=LoadTool.WRK)
    # The loads, in order: concurrent connections, or requests/s for the tools that hold a
    # rate (RATE_TOOLS).
    steps = models.JSONField(default=list)
    load_kind = models.CharField(
        max_length=20, choices=LoadKind.choices, default=LoadKind.CONCURRENCY
    )
    step_seconds = models.PositiveIntegerField(default=30)
    warmup_seconds = models.PositiveIntegerField(default=5)
    # A step over either limit is the breaking point: that side stops there.
    stop_error_rate = models.FloatField(default=0.05)
    stop_p99_ms = models.FloatField(null=True, blank=True)
    # Two sides "differ" at a step when throughput or p99 differ by more than this share.
    margin = models.FloatField(default=0.2)
    status = models.CharField(
        max_length=20, choices=LadderStatus.choices, default=LadderStatus.QUEUED
    )
    # The schedule: step i of both sides starts at start_at + i * slot_seconds.
    start_at = models.DateTimeField(null=True, blank=True)
    slot_seconds = models.FloatField(default=0)
    cancel_requested_at = models.DateTimeField(null=True, blank=True)
    # Knees, divergence and breaking points, computed when the ladder ends.
    analysis = models.JSONField(default=dict, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    # The ladder this one runs again with the same settings, to verify a fix.
    rerun_of = models.ForeignKey(
        "self", on_delete=models.SET_NULL, null=True, blank=True, related_name="reruns"
    )

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"ladder #{self.pk} ({self.get_status_display()})"

    @property
    def sides_in_order(self) -> list:
        """[side A's run or None, side B's run or None], from the prefetched sides."""
        found = {side.side.key: side for side in self.sides.all()}
        return [found.get("a"), found.get("b")]


class LadderSide(JobState, models.Model):
    """One side's run of a ladder: its load generator, target URL, progress and outcome."""

    ladder = models.ForeignKey(Ladder, on_delete=models.CASCADE, related_name="sides")
    side = models.ForeignKey("Side", on_delete=models.CASCADE, related_name="+")
    # Empty for imported results.
    load_generator = models.ForeignKey(
        "Host", on_delete=models.PROTECT, null=True, blank=True, related_name="+"
    )
    url = models.CharField(max_length=2000, blank=True)
    # Its run (status, claims, deadline, error and the phrases it and the breaking reason
    # were made from): its Job's, read as its own (JobState). An imported side's
    # job is ended ("imported") from the start.
    job = models.OneToOneField("Job", on_delete=models.CASCADE, related_name="+")
    current_step = models.PositiveIntegerField(default=0)
    # The step whose limits were passed; the side stopped there.
    breaking_step = models.PositiveIntegerField(null=True, blank=True)
    breaking_reason = models.TextField(blank=True)
    source = models.CharField(max_length=40, blank=True)  # import format, or "" for a run

    class Meta:
        ordering = ["side__key"]
        constraints = [
            models.UniqueConstraint(
                fields=["ladder", "side"],
                name="%(app_label)s_%(class)s_one_per_side",
                violation_error_message="This ladder already has results for this side.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.ladder} side {self.side.key}"


class LadderStep(models.Model):
    """One step's results on one side, with the host samples averaged over it."""

    ladder_side = models.ForeignKey(LadderSide, on_delete=models.CASCADE, related_name="steps")
    index = models.PositiveIntegerField()
    load = models.FloatField()
    load_kind = models.CharField(max_length=20, default="concurrency")
    planned_at = models.DateTimeField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    duration_s = models.FloatField(null=True, blank=True)
    requests = models.PositiveBigIntegerField(default=0)
    rps = models.FloatField(default=0)
    transfer_bytes_per_s = models.FloatField(null=True, blank=True)
    latency_ms = models.JSONField(default=dict)  # avg, p50, p75, p90, p99, max
    errors = models.JSONField(default=dict)  # connect, read, write, timeout, non_2xx, other
    # Averages over the step of the side's service hosts (vmstat): % CPU and per-second counts.
    cpu = models.JSONField(default=dict)
    # The load tool's own output, as it came (a few KB; capped).
    raw_output = models.TextField(blank=True)
    recorded_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["index"]
        constraints = [
            models.UniqueConstraint(
                fields=["ladder_side", "index"], name="%(app_label)s_%(class)s_one_per_index"
            )
        ]

    def __str__(self) -> str:
        return f"step {self.index} ({self.load:g})"

    @property
    def error_count(self) -> int:
        return sum(self.errors.values())

    @property
    def lateness_ms(self) -> float | None:
        """How long after its planned time the step really started."""
        if self.started_at is None or self.planned_at is None:
            return None
        return (self.started_at - self.planned_at).total_seconds() * 1000

    @property
    def error_rate(self) -> float:
        total = self.requests + self.errors.get("connect", 0)
        return self.error_count / total if total else (1.0 if self.error_count else 0.0)


class LadderSample(models.Model):
    """A service host's or the load generator's time series in one step: a row a second."""

    step = models.ForeignKey(LadderStep, on_delete=models.CASCADE, related_name="samples")
    host = models.ForeignKey("Host", on_delete=models.CASCADE, related_name="+")
    tool = models.CharField(max_length=20)  # vmstat or mpstat
    series = models.JSONField(default=list)

    def __str__(self) -> str:
        return f"{self.tool} of {self.host_id} in {self.step}"
