from django.db import models

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
    # Its analysis (its status: CaptureStatus, its progress, deadline and error): done where
    # it was captured, or in a worker for an imported file.
    job = models.OneToOneField("Job", on_delete=models.CASCADE, related_name="+")
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
        ]
