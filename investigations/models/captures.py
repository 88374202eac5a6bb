from django.db import models

from investigations.choices import CaptureStatus
from investigations.models.evidence import StoredEvidence


class Capture(StoredEvidence):
    """A packet capture of one host on one side and what it shows: captured with tcpdump
    over SSH (its target says which collection), or a pcap/pcapng file imported and
    analysed in a worker."""

    interface = models.CharField(max_length=20, blank=True)
    filter = models.TextField(blank=True)
    seconds = models.PositiveIntegerField(null=True, blank=True)
    snaplen = models.PositiveIntegerField(null=True, blank=True)
    # The capture stopped at its size cap (the file is whole up to there).
    truncated = models.BooleanField(default=False)
    # What tcpdump said at its end: captured, received by the filter, dropped by the kernel.
    tcpdump = models.JSONField(default=dict, blank=True)
    pcap = models.FileField(upload_to="captures/%Y/%m/%d/")
    size = models.PositiveBigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True)
    status = models.CharField(
        max_length=20, choices=CaptureStatus.choices, default=CaptureStatus.ANALYSING
    )
    progress = models.PositiveSmallIntegerField(default=0)
    # While an imported capture is analysed: past this moment the sweep fails it.
    deadline_at = models.DateTimeField(null=True, blank=True)
    error = models.TextField(blank=True)
    # The error as a phrase, translated where it is shown (investigations/phrases.py).
    phrases = models.JSONField(default=dict, blank=True)
    # The analysis (collectors.capture.CaptureAnalysis.as_dict()), and the packets of the
    # slowest connections for their timeline chart.
    analysis = models.JSONField(default=dict, blank=True)
    marks = models.JSONField(default=list, blank=True)
    packets = models.PositiveBigIntegerField(default=0)
    bytes = models.PositiveBigIntegerField(default=0)

    class Meta(StoredEvidence.Meta):
        indexes = [
            # The newest capture per host and side of an investigation (pairs, comparison).
            models.Index(
                fields=["investigation", "side", "host", "-collected_at"],
                name="capture_latest_per_host",
            ),
            # Analyses past their deadline: the sweep's query.
            models.Index(
                fields=["deadline_at"],
                name="capture_analysing_deadline",
                condition=models.Q(status="analysing"),
            ),
        ]
