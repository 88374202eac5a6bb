from django.conf import settings
from django.db import models

from investigations.choices import Direction, Severity, SideKey, SideKind, Status


class Tag(models.Model):
    name = models.CharField(max_length=64, unique=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Investigation(models.Model):
    team = models.ForeignKey("Team", on_delete=models.PROTECT, related_name="investigations")
    title = models.TextField()
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.OPEN)
    severity = models.CharField(max_length=10, choices=Severity.choices, default=Severity.SEV3)
    tags = models.ManyToManyField(Tag, blank=True, related_name="investigations")

    # The symptom, stated exactly: "at 500 users, avg latency is 1445 ms on A, 557 ms on B".
    symptom_metric = models.TextField(blank=True)
    symptom_unit = models.CharField(max_length=64, blank=True)
    symptom_load = models.TextField(blank=True)
    symptom_value_a = models.FloatField(null=True, blank=True)
    symptom_value_b = models.FloatField(null=True, blank=True)
    symptom_direction = models.CharField(
        max_length=10, choices=Direction.choices, default=Direction.LOWER_IS_BETTER
    )

    started_at = models.DateTimeField(null=True, blank=True)
    detected_at = models.DateTimeField(null=True, blank=True)
    mitigated_at = models.DateTimeField(null=True, blank=True)
    resolved_at = models.DateTimeField(null=True, blank=True)

    lead = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    notes = models.TextField(blank=True)
    # Why a lead closed the case without a confirmed root cause.
    close_reason = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The default list: a team's investigations, newest first, filtered by status.
            models.Index(fields=["team", "status", "-created_at"], name="inv_team_status_created"),
        ]

    def __str__(self) -> str:
        return self.title[:80]

    @property
    def symptom_ratio(self) -> float | None:
        """How many times worse A is than B (above 1: A is worse), by the metric's direction."""
        a, b = self.symptom_value_a, self.symptom_value_b
        if a is None or b is None or a <= 0 or b <= 0:
            return None
        return a / b if self.symptom_direction == Direction.LOWER_IS_BETTER else b / a


class Side(models.Model):
    investigation = models.ForeignKey(Investigation, on_delete=models.CASCADE, related_name="sides")
    key = models.CharField(max_length=1, choices=SideKey.choices)
    label = models.TextField()
    kind = models.CharField(max_length=20, choices=SideKind.choices, default=SideKind.OTHER)

    class Meta:
        ordering = ["key"]
        constraints = [
            models.UniqueConstraint(
                fields=["investigation", "key"],
                name="%(app_label)s_%(class)s_one_per_key",
                violation_error_message="An investigation has exactly one side A and one side B.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.key.upper()}: {self.label[:40]}"
