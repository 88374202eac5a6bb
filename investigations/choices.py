"""Every set of choices in one place, each with the colour its badge has in the UI.

Badges are rendered by the `badge` template tag from `colour`; nothing else picks colours.
"""

from django.db import models
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop


class ColouredChoices(models.TextChoices):
    @classmethod
    def colour(cls, value: str) -> str:
        return cls._colours().get(value, "grey")

    @classmethod
    def _colours(cls) -> dict[str, str]:
        return {}


class Role(ColouredChoices):
    VIEWER = "viewer", _("Viewer")
    RESPONDER = "responder", _("Responder")
    LEAD = "lead", _("Lead")

    @classmethod
    def rank(cls, value: str) -> int:
        return [cls.VIEWER, cls.RESPONDER, cls.LEAD].index(value)

    @classmethod
    def _colours(cls):
        return {cls.VIEWER: "grey", cls.RESPONDER: "blue", cls.LEAD: "purple"}


class InvitationStatus(ColouredChoices):
    PENDING = "pending", _("pending")
    ACCEPTED = "accepted", _("accepted")
    DECLINED = "declined", _("declined")
    WITHDRAWN = "withdrawn", _("withdrawn")
    EXPIRED = "expired", _("expired")

    @classmethod
    def _colours(cls):
        return {cls.PENDING: "orange", cls.ACCEPTED: "green"}


class Status(ColouredChoices):
    OPEN = "open", _("Open")
    MITIGATED = "mitigated", _("Mitigated")
    RESOLVED = "resolved", _("Resolved")
    CLOSED = "closed", _("Closed")

    @classmethod
    def _colours(cls):
        return {cls.OPEN: "red", cls.MITIGATED: "orange", cls.RESOLVED: "green", cls.CLOSED: "grey"}


# Forward along the lifecycle (steps may be skipped), or back to open from anywhere.
STATUS_ORDER = [Status.OPEN, Status.MITIGATED, Status.RESOLVED, Status.CLOSED]


def allowed_status_moves(current: str) -> list[str]:
    position = STATUS_ORDER.index(current)
    forward = STATUS_ORDER[position + 1 :]
    return forward if current == Status.OPEN else [Status.OPEN, *forward]


class Severity(ColouredChoices):
    SEV1 = "sev1", _("SEV1 critical")
    SEV2 = "sev2", _("SEV2 major")
    SEV3 = "sev3", _("SEV3 minor")
    SEV4 = "sev4", _("SEV4 low")

    @classmethod
    def _colours(cls):
        return {cls.SEV1: "red", cls.SEV2: "orange", cls.SEV3: "yellow", cls.SEV4: "grey"}


class Direction(models.TextChoices):
    LOWER_IS_BETTER = "lower", _("Lower is better (latency, time)")
    HIGHER_IS_BETTER = "higher", _("Higher is better (throughput, QPS)")


class SideKey(models.TextChoices):
    A = "a", "A"
    B = "b", "B"


class SideKind(models.TextChoices):
    BARE_METAL = "bare_metal", _("Bare metal")
    VM = "vm", _("Virtual machine")
    CONTAINER = "container", _("Container")
    MANAGED = "managed", _("Managed service")
    OTHER = "other", _("Other")


class HostRole(models.TextChoices):
    LOAD_GENERATOR = "load_generator", _("Load generator")
    LOAD_BALANCER = "load_balancer", _("Load balancer")
    GATEWAY = "gateway", _("Gateway")
    SERVICE = "service", _("Service")
    DATABASE = "database", _("Database")
    CACHE = "cache", _("Cache")
    MESSAGE_QUEUE = "message_queue", _("Message queue")
    OTHER = "other", _("Other")


# A role inside a sentence of the timeline ("Placed db-a on side A as load generator").
ROLE_IN_TEXT = {
    HostRole.LOAD_GENERATOR: gettext_noop("load generator"),
    HostRole.LOAD_BALANCER: gettext_noop("load balancer"),
    HostRole.GATEWAY: gettext_noop("gateway"),
    HostRole.SERVICE: gettext_noop("service"),
    HostRole.DATABASE: gettext_noop("database"),
    HostRole.CACHE: gettext_noop("cache"),
    HostRole.MESSAGE_QUEUE: gettext_noop("message queue"),
    HostRole.OTHER: gettext_noop("other"),
}


class EventKind(ColouredChoices):
    NOTE = "note", _("Note")
    ACTION = "action", _("Action")
    STATUS = "status", _("Status change")
    CHANGE = "change", _("Edit")
    ENVIRONMENT = "environment", _("Environment")
    COLLECTION = "collection", _("Collection")
    FINDING = "finding", _("Finding")
    PATH = "path", _("Traffic path")
    CHECKLIST = "checklist", _("Checklist")
    LADDER = "ladder", _("Ladder")
    ROOT_CAUSE = "root_cause", _("Root cause")
    POSTMORTEM = "postmortem", _("Postmortem")

    @classmethod
    def _colours(cls):
        return {
            cls.ROOT_CAUSE: "red",
            cls.POSTMORTEM: "purple",
            cls.LADDER: "blue",
            cls.PATH: "teal",
            cls.CHECKLIST: "green",
            cls.NOTE: "grey",
            cls.ACTION: "blue",
            cls.STATUS: "purple",
            cls.CHANGE: "grey",
            cls.ENVIRONMENT: "teal",
            cls.COLLECTION: "teal",
            cls.FINDING: "orange",
        }


# The kinds a person writes by hand; the others are written by the services.
MANUAL_EVENT_KINDS = [EventKind.NOTE, EventKind.ACTION]


class ActionKind(models.TextChoices):
    RATE_LIMIT = "rate_limit", _("Rate limit")
    RESTART = "restart", _("Restart")
    SCALE_OUT = "scale_out", _("Scale out")
    ROLLBACK = "rollback", _("Roll back")
    DEPLOY = "deploy", _("Deploy")
    FIX = "fix", _("Fix")
    OTHER = "other", _("Other")


class DeliveryStatus(ColouredChoices):
    PENDING = "pending", _("Pending")
    SENDING = "sending", _("Sending")
    DELIVERED = "delivered", _("Delivered")
    FAILED = "failed", _("Failed")

    @classmethod
    def _colours(cls):
        return {
            cls.PENDING: "grey",
            cls.SENDING: "blue",
            cls.DELIVERED: "green",
            cls.FAILED: "red",
        }


class HostTransport(models.TextChoices):
    SSH = "ssh", "SSH"
    LOCAL = "local", _("This machine (local transport)")


class CollectionKind(models.TextChoices):
    FACTS = "facts", _("Host facts")
    PROFILE = "profile", _("CPU profile")
    CAPTURE = "capture", _("Packet capture")
    BASELINE = "baseline", _("Baseline pack")


class TargetStatus(ColouredChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    SUCCEEDED = "succeeded", _("Succeeded")
    FAILED = "failed", _("Failed")
    # Its collection was cancelled: what it had started on its host was stopped.
    CANCELLED = "cancelled", _("Cancelled")

    @classmethod
    def _colours(cls):
        return {
            cls.QUEUED: "grey",
            cls.RUNNING: "blue",
            cls.SUCCEEDED: "green",
            cls.FAILED: "red",
            cls.CANCELLED: "orange",
        }


class CollectionStatus(models.TextChoices):
    """A collection's status as the API tells it: read from its targets' (it has no column)."""

    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    COMPLETED = "completed", _("Completed")
    FAILED = "failed", _("Failed")
    CANCELLED = "cancelled", _("Cancelled")


ENDED_TARGET_STATUSES = [TargetStatus.SUCCEEDED, TargetStatus.FAILED, TargetStatus.CANCELLED]
# What a target or a ladder side still running past its deadline ends with: stored in
# English, translated where it is shown ({% translate target.error %}).
OVERDUE_MESSAGE = gettext_noop("Gave up: no result within the time limit.")
# What a worker never began by its deadline: it was stopped (killed, a deploy) before it did.
NEVER_RAN = gettext_noop(
    "Gave up: no worker began this in time (a worker was stopped, or none is running)."
)


class FindingSeverity(ColouredChoices):
    HIGH = "high", _("High")
    MEDIUM = "medium", _("Medium")
    LOW = "low", _("Low")
    INFO = "info", _("Info")

    @classmethod
    def rank(cls, value: str) -> int:
        return [cls.HIGH, cls.MEDIUM, cls.LOW, cls.INFO].index(value)

    @classmethod
    def _colours(cls):
        return {cls.HIGH: "red", cls.MEDIUM: "orange", cls.LOW: "yellow", cls.INFO: "grey"}


class FindingStatus(ColouredChoices):
    OPEN = "open", _("Open")
    CONFIRMED = "confirmed", _("Confirmed")
    DISMISSED = "dismissed", _("Dismissed")
    RESOLVED = "resolved", _("Resolved")

    @classmethod
    def _colours(cls):
        return {
            cls.OPEN: "orange",
            cls.CONFIRMED: "red",
            cls.DISMISSED: "grey",
            cls.RESOLVED: "green",
        }


# Findings still to act on; the others (dismissed, resolved) are shown apart.
ACTIVE_FINDING_STATUSES = [FindingStatus.OPEN, FindingStatus.CONFIRMED]


class PathNodeKind(models.TextChoices):
    LOAD_GENERATOR = "load_generator", _("Load generator")
    DNS = "dns", "DNS"
    CDN = "cdn", "CDN"
    LOAD_BALANCER = "load_balancer", _("Load balancer")
    NAT = "nat", _("Elastic IP / NAT")
    GATEWAY = "gateway", _("Gateway or ingress")
    SERVICE = "service", _("Service")
    DATABASE = "database", _("Database")
    CACHE = "cache", _("Cache")
    MESSAGE_QUEUE = "message_queue", _("Message queue")
    OBJECT_STORAGE = "object_storage", _("Object storage")
    EXTERNAL_API = "external_api", _("External API")
    OTHER = "other", _("Other")


class Protocol(models.TextChoices):
    HTTP = "http", "HTTP"
    HTTPS = "https", "HTTPS"
    GRPC = "grpc", "gRPC"
    TCP = "tcp", "TCP"
    MYSQL = "mysql", "MySQL"
    POSTGRESQL = "postgresql", "PostgreSQL"
    REDIS = "redis", "Redis"
    AMQP = "amqp", "AMQP"
    OTHER = "other", _("Other")


class ConnectionReuse(models.TextChoices):
    LONG_LIVED = "long_lived", _("Long-lived")
    SHORT_LIVED = "short_lived", _("Short-lived")
    UNKNOWN = "unknown", _("Unknown")


class NodeState(ColouredChoices):
    NOT_CHECKED = "not_checked", _("Not checked")
    RULED_OUT = "ruled_out", _("Ruled out")
    SUSPECT = "suspect", _("Suspect")

    @classmethod
    def _colours(cls):
        return {cls.NOT_CHECKED: "grey", cls.RULED_OUT: "green", cls.SUSPECT: "red"}


class ItemStatus(ColouredChoices):
    TODO = "todo", _("To do")
    IN_PROGRESS = "in_progress", _("In progress")
    DONE = "done", _("Done")
    NOT_APPLICABLE = "not_applicable", _("Not applicable")

    @classmethod
    def _colours(cls):
        return {
            cls.TODO: "grey",
            cls.IN_PROGRESS: "blue",
            cls.DONE: "green",
            cls.NOT_APPLICABLE: "grey",
        }


# Statuses that count as finished for the progress bar.
SETTLED_ITEM_STATUSES = [ItemStatus.DONE, ItemStatus.NOT_APPLICABLE]


class LoadTool(models.TextChoices):
    WRK = "wrk", "wrk"
    HEY = "hey", "hey"
    AB = "ab", "ab (ApacheBench)"
    K6 = "k6", "k6"


class LoadKind(models.TextChoices):
    CONCURRENCY = "concurrency", _("concurrent connections")
    RATE = "rate", _("requests/s")


# The tools that hold a request rate (an open model) rather than a number of connections.
RATE_TOOLS = [LoadTool.HEY, LoadTool.K6]


class LadderStatus(ColouredChoices):
    QUEUED = "queued", _("Queued")
    RUNNING = "running", _("Running")
    COMPLETED = "completed", _("Completed")
    CANCELLED = "cancelled", _("Cancelled")
    FAILED = "failed", _("Failed")
    IMPORTED = "imported", _("Imported")

    @classmethod
    def _colours(cls):
        return {
            cls.QUEUED: "grey",
            cls.RUNNING: "blue",
            cls.COMPLETED: "green",
            cls.CANCELLED: "orange",
            cls.FAILED: "red",
            cls.IMPORTED: "teal",
        }


ENDED_LADDER_STATUSES = [
    LadderStatus.COMPLETED,
    LadderStatus.CANCELLED,
    LadderStatus.FAILED,
    LadderStatus.IMPORTED,
]


class ProfileFormat(models.TextChoices):
    PERF_SCRIPT = "perf-script", _("perf script text")
    FOLDED = "folded", _("folded stacks")
    ASYNC_PROFILER = "async-profiler", _("async-profiler collapsed stacks")
    PY_SPY = "py-spy", _("py-spy raw stacks")


class CaptureStatus(ColouredChoices):
    ANALYSING = "analysing", _("Analysing")
    READY = "ready", _("Ready")
    FAILED = "failed", _("Failed")

    @classmethod
    def _colours(cls):
        return {cls.ANALYSING: "blue", cls.READY: "green", cls.FAILED: "red"}


class ImportFormat(models.TextChoices):
    WRK = "wrk", _("wrk text")
    WRK2 = "wrk2", _("wrk2 text")
    HEY = "hey", _("hey text")
    AB = "ab", _("ab text")
    K6_JSON = "k6-json", _("k6 JSON summary")
    K6_TEXT = "k6-text", _("k6 text summary")
    JMETER_CSV = "jmeter-csv", _("JMeter CSV results (JTL)")
    LOCUST_CSV = "locust-csv", _("Locust stats history CSV")


class RootCauseCategory(models.TextChoices):
    CPU = "cpu", _("CPU")
    MEMORY = "memory", _("Memory")
    KERNEL = "kernel", _("Kernel")
    STORAGE = "storage", _("Storage")
    NETWORK = "network", _("Network")
    VIRTUALISATION = "virtualisation", _("Virtualisation")
    APPLICATION = "application", _("Application")
    CONFIGURATION = "configuration", _("Configuration")
    OTHER = "other", _("Other")


class EvidenceKind(models.TextChoices):
    """What proves a root cause on a case."""

    FINDING = "finding", _("Finding")
    PROFILE = "profile", _("CPU profile")
    CAPTURE = "capture", _("Packet capture")
    LADDER = "ladder", _("Ladder")
    EVENT = "event", _("Timeline entry")


class BaselineStatus(models.TextChoices):
    MEASURED = "measured", _("measured")
    NOT_INSTALLED = "not_installed", _("not installed")
    NOT_MEASURED = "not_measured", _("not measured")
    FAILED = "failed", _("failed")


class BaselineVerdict(models.TextChoices):
    BETTER = "better", _("better")
    WORSE = "worse", _("worse")
    ABOUT_EQUAL = "about_equal", _("about equal")


class ScanStatus(models.TextChoices):
    NONE = "", _("not scanned")
    SCANNING = "scanning", _("scanning")
    DONE = "done", _("scanned")
    FAILED = "failed", _("failed")
