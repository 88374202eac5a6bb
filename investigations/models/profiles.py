import gzip
import json

from django.db import models

from investigations.choices import ProfileFormat
from investigations.models.evidence import StoredEvidence


class Profile(StoredEvidence):
    """A CPU profile of one host on one side, folded into stacks: collected with perf over
    SSH (its target says which collection), or imported from a file made elsewhere."""

    format = models.CharField(max_length=20, choices=ProfileFormat.choices)
    # What was profiled: a command name, "PID n", or "" for every CPU of the host.
    process = models.CharField(max_length=200, blank=True)
    pids = models.JSONField(default=list, blank=True)
    seconds = models.PositiveIntegerField(null=True, blank=True)
    frequency = models.PositiveIntegerField(null=True, blank=True)
    call_graph = models.CharField(max_length=10, blank=True)
    # Whether the host let perf see kernel frames (None: not known, an import).
    kernel_stacks = models.BooleanField(null=True, blank=True)
    event = models.CharField(max_length=100, blank=True)
    samples = models.PositiveBigIntegerField(default=0)
    weight = models.FloatField(default=0)
    stack_count = models.PositiveIntegerField(default=0)
    # The folded stacks, gzipped JSON {"weights": {stack: weight}, "samples": {stack: n}}:
    # weights as stackcollapse-perf.pl counts them (by period), samples beside them.
    stacks = models.FileField(upload_to="profiles/%Y/%m/%d/")

    class Meta(StoredEvidence.Meta):
        indexes = [
            # The newest profile per host and side of an investigation (pairs, the diff).
            models.Index(
                fields=["investigation", "side", "host", "-collected_at"],
                name="profile_latest_per_host",
            )
        ]

    def read_stacks(self) -> dict:
        """{"weights": {...}, "samples": {...}} from the stored file."""
        with self.stacks.open("rb") as file:
            return json.loads(gzip.decompress(file.read()))
