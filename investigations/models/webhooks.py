from django.db import models


class WebhookDelivery(models.Model):
    """One message to a team's webhook, with the outcome of its last attempt."""

    team = models.ForeignKey("Team", on_delete=models.CASCADE, related_name="deliveries")
    event = models.ForeignKey(
        "TimelineEvent", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    url = models.URLField(max_length=2000)
    payload = models.JSONField()
    # Its sending, retried (its status: DeliveryStatus; its attempts; its last error).
    job = models.OneToOneField("Job", on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]

    def __str__(self) -> str:
        return f"delivery {self.pk} to team {self.team_id}"
