from django.conf import settings
from django.db import models

from investigations.choices import ItemStatus


class ChecklistItem(models.Model):
    """A step of the method for one investigation; many complete themselves."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="checklist"
    )
    key = models.SlugField(max_length=64)
    title = models.TextField()
    description = models.TextField(blank=True)
    position = models.PositiveIntegerField(default=0)
    status = models.CharField(max_length=20, choices=ItemStatus.choices, default=ItemStatus.TODO)
    na_reason = models.TextField(blank=True)
    assignee = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="checklist_items",
    )
    notes = models.TextField(blank=True)
    # True while the item is done because its evidence exists (not by a person's hand).
    auto = models.BooleanField(default=False)
    # What completed it, in words: "3 nodes, 2 edges".
    evidence = models.TextField(blank=True)
    # The phrase the evidence was made from, read in each person's language.
    phrases = models.JSONField(default=dict, blank=True)
    custom = models.BooleanField(default=False)
    completed_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["position", "id"]
        constraints = [
            models.UniqueConstraint(
                fields=["investigation", "key"],
                name="%(app_label)s_%(class)s_unique_key",
                violation_error_message="The checklist already has an item with this key.",
            )
        ]
        indexes = [
            # "My items": a person's open items across investigations.
            models.Index(fields=["assignee", "status"], name="checklist_assignee_status"),
        ]

    def __str__(self) -> str:
        return self.title[:80]
