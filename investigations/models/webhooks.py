from django.db import models

from investigations.choices import DeliveryStatus


class WebhookDelivery(models.Model):
    """One message to a team's webhook, with the outcome of its last attempt."""

    team = models.ForeignKey("Team", on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(
        "TimelineEvent", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    url = models.URLField(max_length=2000)
    payload = models.JSONField()
    status = models.CharField(
        max_length=20, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    claimed_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"delivery {self.pk} to team {self.team_id}: {self.status}"
