from django.conf import settings
from django.db import models

from investigations.choices import ConnectionReuse, NodeState, PathNodeKind, Protocol


class PathNode(models.Model):
    """One hop of the traffic path, as it is on each side."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="path_nodes"
    )
    kind = models.CharField(max_length=20, choices=PathNodeKind.choices)
    label = models.CharField(max_length=200)
    # Per side: free text, and key/value pairs that compare ("new conn/s": "50k").
    spec_a = models.TextField(blank=True)
    spec_b = models.TextField(blank=True)
    values_a = models.JSONField(default=dict, blank=True)
    values_b = models.JSONField(default=dict, blank=True)
    hosts_a = models.ManyToManyField("Host", blank=True, related_name="+")
    hosts_b = models.ManyToManyField("Host", blank=True, related_name="+")
    state = models.CharField(
        max_length=20, choices=NodeState.choices, default=NodeState.NOT_CHECKED
    )
    # The evidence for the state: any of a note, a link, a file, a collection.
    state_note = models.TextField(blank=True)
    state_link = models.URLField(max_length=2000, blank=True)
    state_file = models.FileField(upload_to="path-evidence/%Y/%m/%d/", blank=True)
    state_collection = models.ForeignKey(
        "Collection", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    state_changed_at = models.DateTimeField(null=True, blank=True)
    state_changed_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["investigation", "label"],
                name="%(app_label)s_%(class)s_unique_label",
                violation_error_message="The path already has a node with this label.",
            )
        ]

    def __str__(self) -> str:
        return self.label

    @property
    def specs_differ(self) -> bool:
        """Whether the two sides' specifications disagree: both texts given and different,
        or a value given on both sides that differs."""
        text_a, text_b = " ".join(self.spec_a.split()), " ".join(self.spec_b.split())
        if text_a and text_b and text_a != text_b:
            return True
        keys = set(self.values_a) & set(self.values_b)
        return any(str(self.values_a[k]).strip() != str(self.values_b[k]).strip() for k in keys)


class PathEdge(models.Model):
    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="path_edges"
    )
    source = models.ForeignKey(PathNode, on_delete=models.CASCADE, related_name="edges_out")
    target = models.ForeignKey(PathNode, on_delete=models.CASCADE, related_name="edges_in")
    protocol = models.CharField(max_length=20, choices=Protocol.choices, default=Protocol.OTHER)
    port = models.PositiveIntegerField(null=True, blank=True)
    tls = models.BooleanField(default=False)
    reuse = models.CharField(
        max_length=20, choices=ConnectionReuse.choices, default=ConnectionReuse.UNKNOWN
    )
    notes = models.TextField(blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["id"]
        constraints = [
            models.UniqueConstraint(
                fields=["source", "target"],
                name="%(app_label)s_%(class)s_one_per_direction",
                violation_error_message="These two nodes are already joined in this direction.",
            ),
            models.CheckConstraint(
                condition=~models.Q(source=models.F("target")),
                name="%(app_label)s_%(class)s_not_a_loop",
                violation_error_message="An edge joins two different nodes.",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source} -> {self.target}"

    @property
    def summary(self) -> str:
        """Protocol and port, TLS, reuse: 'HTTPS:443, TLS, short-lived'."""
        parts = [self.get_protocol_display() + (f":{self.port}" if self.port else "")]
        if self.tls and self.protocol != Protocol.HTTPS:
            parts.append("TLS")
        if self.reuse != ConnectionReuse.UNKNOWN:
            parts.append(self.get_reuse_display().lower())
        return ", ".join(parts)
