from django.conf import settings
from django.db import models

from investigations.choices import ACTIVE_FINDING_STATUSES, FindingSeverity, FindingStatus


class StoredEvidence(models.Model):
    """What every stored piece of evidence of a host on a side has: its case, side and host
    (none for an import that names no inventory host), the collection target that gathered it
    (none for an import), its name in lists, who made it and when it was collected. Each
    model keeps its own file field (a capture's pcap, a profile's stacks) and its own
    indexes; the reverse names are the model's ("captures", a target's "capture")."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="%(class)ss"
    )
    side = models.ForeignKey("Side", on_delete=models.CASCADE, related_name="%(class)ss")
    host = models.ForeignKey(
        "Host", on_delete=models.SET_NULL, null=True, blank=True, related_name="%(class)ss"
    )
    target = models.OneToOneField(
        "CollectionTarget",
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="%(class)s",
    )
    # What it shows in lists: the host and what was recorded, or the imported file's name.
    name = models.CharField(max_length=200)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    collected_at = models.DateTimeField()

    class Meta:
        abstract = True
        ordering = ["-collected_at", "-id"]

    def __str__(self) -> str:
        return self.name

    @property
    def label_with_side(self) -> str:
        """Its name and side, "db1 (A)": how a root cause's evidence names it (reads
        `side`: select it with the rows)."""
        return f"{self.name} ({self.side.key.upper()})"


class FactSnapshot(models.Model):
    """The parsed host facts of one target: {dotted key: value} and each probe's outcome."""

    target = models.OneToOneField(
        "CollectionTarget", on_delete=models.CASCADE, related_name="fact_snapshot"
    )
    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="fact_snapshots"
    )
    host = models.ForeignKey("Host", on_delete=models.CASCADE, related_name="fact_snapshots")
    side = models.ForeignKey("Side", on_delete=models.CASCADE, related_name="fact_snapshots")
    collected_at = models.DateTimeField()
    facts = models.JSONField(default=dict)
    probes = models.JSONField(default=dict)

    class Meta:
        ordering = ["-collected_at", "-id"]
        indexes = [
            # The latest snapshot per host and side of an investigation.
            models.Index(
                fields=["investigation", "side", "host", "-collected_at"],
                name="snapshot_latest_per_host",
            )
        ]

    def __str__(self) -> str:
        return f"facts of {self.host} at {self.collected_at:%Y-%m-%d %H:%M}"


class Finding(models.Model):
    """A rule's verdict on the evidence, raised once per investigation, rule, subject and pair."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="findings"
    )
    rule = models.CharField(max_length=64)
    subject = models.CharField(max_length=255, blank=True)
    host_a = models.ForeignKey(
        "Host", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    host_b = models.ForeignKey(
        "Host", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    pair_key = models.CharField(max_length=64)
    severity = models.CharField(max_length=10, choices=FindingSeverity.choices)
    title = models.TextField()
    explanation = models.TextField()
    recommendation = models.TextField(blank=True)
    side_a = models.TextField(blank=True)
    side_b = models.TextField(blank=True)
    # The knowledge-base entry this finding is evidence for (its rule names it).
    root_cause = models.ForeignKey(
        "RootCause", on_delete=models.SET_NULL, null=True, blank=True, related_name="findings"
    )
    # The phrases title, explanation and recommendation were made from, read in each
    # person's language (investigations/phrases.py).
    phrases = models.JSONField(default=dict, blank=True)
    status = models.CharField(
        max_length=20, choices=FindingStatus.choices, default=FindingStatus.OPEN
    )
    first_seen_at = models.DateTimeField()
    last_seen_at = models.DateTimeField()
    resolved_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["status", "-last_seen_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["investigation", "rule", "subject", "pair_key"],
                name="%(app_label)s_%(class)s_once_per_subject_and_pair",
            )
        ]

    def __str__(self) -> str:
        return self.title[:80]

    @property
    def is_settled(self) -> bool:
        """Dismissed or resolved: shown apart from the ones still to act on."""
        return self.status not in ACTIVE_FINDING_STATUSES
