from django.conf import settings
from django.db import models

from investigations.choices import BaselineStatus


class BaselineResult(models.Model):
    """One metric of one benchmark of the baseline pack on one host (or, for the network
    benchmarks, one side's load generator to its service): the values of its repetitions,
    their median and spread. What the benchmark and metric are (group, unit, direction) is
    defined once in collectors/baseline/suite.py."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="baseline_results"
    )
    side = models.ForeignKey("Side", on_delete=models.CASCADE, related_name="baseline_results")
    # The host's role on its side (the table pairs hosts of the same role); "" for a side's
    # network path and for results imported without one.
    role = models.CharField(max_length=20, blank=True)
    host = models.ForeignKey(
        "Host", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    target = models.ForeignKey(
        "CollectionTarget",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="baseline_results",
    )
    benchmark = models.CharField(max_length=40)
    metric = models.CharField(max_length=40)
    status = models.CharField(
        max_length=20, choices=BaselineStatus.choices, default=BaselineStatus.MEASURED
    )
    values = models.JSONField(default=list, blank=True)
    median = models.FloatField(null=True, blank=True)
    # (highest - lowest) / median of the repetitions, in percent.
    spread = models.FloatField(null=True, blank=True)
    # Why it was not measured, or how (buffered I/O where direct I/O was refused).
    note = models.TextField(blank=True)
    phrases = models.JSONField(default=dict, blank=True)
    # The file it was imported from ("" when Perfcase ran it).
    source = models.CharField(max_length=200, blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            models.Index(
                fields=["investigation", "benchmark", "metric", "-created_at"],
                name="baseline_newest",
            )
        ]

    def __str__(self) -> str:
        return f"{self.benchmark}.{self.metric} on {self.side_id}: {self.median}"
