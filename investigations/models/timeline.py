from django.conf import settings
from django.db import models

from investigations.choices import ActionKind, EventKind


class TimelineEvent(models.Model):
    """One entry of an investigation's timeline. Written only by `timeline_event_log`."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="events"
    )
    # When it happened, which may be long before it was written down.
    occurred_at = models.DateTimeField()
    kind = models.CharField(max_length=20, choices=EventKind.choices)
    action = models.CharField(max_length=20, choices=ActionKind.choices, blank=True)
    summary = models.TextField()
    details = models.JSONField(default=dict, blank=True)
    # The phrase an automatic summary was made from, read in each person's language (a
    # person's own words have none).
    phrases = models.JSONField(default=dict, blank=True)
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    # A person's note or action may be edited or deleted by its author or a lead: the older
    # versions stay in `history` (newest last: summary, occurred_at, action, edited_at, by),
    # and a deleted entry stays in the database, out of every list.
    edited_at = models.DateTimeField(null=True, blank=True)
    history = models.JSONField(default=list, blank=True)
    deleted_at = models.DateTimeField(null=True, blank=True)
    deleted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )

    class Meta:
        ordering = ["occurred_at", "id"]
        indexes = [
            # The timeline of one investigation in time order, optionally by kind.
            models.Index(fields=["investigation", "occurred_at"], name="event_inv_occurred"),
        ]
        constraints = [
            models.CheckConstraint(
                condition=models.Q(kind="action") | models.Q(action=""),
                name="%(app_label)s_%(class)s_action_only_on_actions",
                violation_error_message="Only action events have an action type.",
            ),
            models.CheckConstraint(
                condition=~models.Q(kind="action") | ~models.Q(action=""),
                name="%(app_label)s_%(class)s_actions_have_type",
                violation_error_message="An action needs an action type.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.occurred_at:%Y-%m-%d %H:%M} {self.kind}: {self.summary[:60]}"
