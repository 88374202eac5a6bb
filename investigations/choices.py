"""Every set of choices in one place, each with the colour its badge has in the UI.

Badges are rendered by the `badge` template tag from `colour`; nothing else picks colours.
"""

from django.db import models


class ColouredChoices(models.TextChoices):
    @classmethod
    def colour(cls, value: str) -> str:
        return cls._colours().get(value, "grey")

    @classmethod
    def _colours(cls) -> dict[str, str]:
        return {}


class Role(ColouredChoices):
    VIEWER = "viewer", "Viewer"
    RESPONDER = "responder", "Responder"
    LEAD = "lead", "Lead"

    @classmethod
    def rank(cls, value: str) -> int:
        return [cls.VIEWER, cls.RESPONDER, cls.LEAD].index(value)

    @classmethod
    def _colours(cls):
        return {cls.VIEWER: "grey", cls.RESPONDER: "blue", cls.LEAD: "purple"}


class Status(ColouredChoices):
    OPEN = "open", "Open"
    MITIGATED = "mitigated", "Mitigated"
    RESOLVED = "resolved", "Resolved"
    CLOSED = "closed", "Closed"

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
    SEV1 = "sev1", "SEV1 critical"
    SEV2 = "sev2", "SEV2 major"
    SEV3 = "sev3", "SEV3 minor"
    SEV4 = "sev4", "SEV4 low"

    @classmethod
    def _colours(cls):
        return {cls.SEV1: "red", cls.SEV2: "orange", cls.SEV3: "yellow", cls.SEV4: "grey"}


class Direction(models.TextChoices):
    LOWER_IS_BETTER = "lower", "Lower is better (latency, time)"
    HIGHER_IS_BETTER = "higher", "Higher is better (throughput, QPS)"


class SideKey(models.TextChoices):
    A = "a", "A"
    B = "b", "B"


class SideKind(models.TextChoices):
    BARE_METAL = "bare_metal", "Bare metal"
    VM = "vm", "Virtual machine"
    CONTAINER = "container", "Container"
    MANAGED = "managed", "Managed service"
    OTHER = "other", "Other"


class HostRole(models.TextChoices):
    LOAD_GENERATOR = "load_generator", "Load generator"
    LOAD_BALANCER = "load_balancer", "Load balancer"
    GATEWAY = "gateway", "Gateway"
    SERVICE = "service", "Service"
    DATABASE = "database", "Database"
    CACHE = "cache", "Cache"
    MESSAGE_QUEUE = "message_queue", "Message queue"
    OTHER = "other", "Other"


class EventKind(ColouredChoices):
    NOTE = "note", "Note"
    ACTION = "action", "Action"
    STATUS = "status", "Status change"
    CHANGE = "change", "Edit"
    ENVIRONMENT = "environment", "Environment"
    COLLECTION = "collection", "Collection"
    FINDING = "finding", "Finding"
    PATH = "path", "Traffic path"
    CHECKLIST = "checklist", "Checklist"
    LADDER = "ladder", "Ladder"

    @classmethod
    def _colours(cls):
        return {
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
    RATE_LIMIT = "rate_limit", "Rate limit"
    RESTART = "restart", "Restart"
    SCALE_OUT = "scale_out", "Scale out"
    ROLLBACK = "rollback", "Roll back"
    DEPLOY = "deploy", "Deploy"
    FIX = "fix", "Fix"
    OTHER = "other", "Other"


class DeliveryStatus(ColouredChoices):
    PENDING = "pending", "Pending"
    SENDING = "sending", "Sending"
    DELIVERED = "delivered", "Delivered"
    FAILED = "failed", "Failed"

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
    LOCAL = "local", "This machine (local transport)"


class CollectionKind(models.TextChoices):
    FACTS = "facts", "Host facts"


class TargetStatus(ColouredChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    SUCCEEDED = "succeeded", "Succeeded"
    FAILED = "failed", "Failed"

    @classmethod
    def _colours(cls):
        return {cls.QUEUED: "grey", cls.RUNNING: "blue", cls.SUCCEEDED: "green", cls.FAILED: "red"}


ENDED_TARGET_STATUSES = [TargetStatus.SUCCEEDED, TargetStatus.FAILED]
# What a target or a ladder side still running past its deadline ends with.
OVERDUE_MESSAGE = "Gave up: no result within the time limit."


class FindingSeverity(ColouredChoices):
    HIGH = "high", "High"
    MEDIUM = "medium", "Medium"
    LOW = "low", "Low"
    INFO = "info", "Info"

    @classmethod
    def rank(cls, value: str) -> int:
        return [cls.HIGH, cls.MEDIUM, cls.LOW, cls.INFO].index(value)

    @classmethod
    def _colours(cls):
        return {cls.HIGH: "red", cls.MEDIUM: "orange", cls.LOW: "yellow", cls.INFO: "grey"}


class FindingStatus(ColouredChoices):
    OPEN = "open", "Open"
    CONFIRMED = "confirmed", "Confirmed"
    DISMISSED = "dismissed", "Dismissed"
    RESOLVED = "resolved", "Resolved"

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
    LOAD_GENERATOR = "load_generator", "Load generator"
    DNS = "dns", "DNS"
    CDN = "cdn", "CDN"
    LOAD_BALANCER = "load_balancer", "Load balancer"
    NAT = "nat", "Elastic IP / NAT"
    GATEWAY = "gateway", "Gateway or ingress"
    SERVICE = "service", "Service"
    DATABASE = "database", "Database"
    CACHE = "cache", "Cache"
    MESSAGE_QUEUE = "message_queue", "Message queue"
    OBJECT_STORAGE = "object_storage", "Object storage"
    EXTERNAL_API = "external_api", "External API"
    OTHER = "other", "Other"


class Protocol(models.TextChoices):
    HTTP = "http", "HTTP"
    HTTPS = "https", "HTTPS"
    GRPC = "grpc", "gRPC"
    TCP = "tcp", "TCP"
    MYSQL = "mysql", "MySQL"
    POSTGRESQL = "postgresql", "PostgreSQL"
    REDIS = "redis", "Redis"
    AMQP = "amqp", "AMQP"
    OTHER = "other", "Other"


class ConnectionReuse(models.TextChoices):
    LONG_LIVED = "long_lived", "Long-lived"
    SHORT_LIVED = "short_lived", "Short-lived"
    UNKNOWN = "unknown", "Unknown"


class NodeState(ColouredChoices):
    NOT_CHECKED = "not_checked", "Not checked"
    RULED_OUT = "ruled_out", "Ruled out"
    SUSPECT = "suspect", "Suspect"

    @classmethod
    def _colours(cls):
        return {cls.NOT_CHECKED: "grey", cls.RULED_OUT: "green", cls.SUSPECT: "red"}


class ItemStatus(ColouredChoices):
    TODO = "todo", "To do"
    IN_PROGRESS = "in_progress", "In progress"
    DONE = "done", "Done"
    NOT_APPLICABLE = "not_applicable", "Not applicable"

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
    CONCURRENCY = "concurrency", "concurrent connections"
    RATE = "rate", "requests/s"


# The tools that hold a request rate (an open model) rather than a number of connections.
RATE_TOOLS = [LoadTool.HEY, LoadTool.K6]


class LadderStatus(ColouredChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    COMPLETED = "completed", "Completed"
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"
    IMPORTED = "imported", "Imported"

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


class ImportFormat(models.TextChoices):
    WRK = "wrk", "wrk text"
    WRK2 = "wrk2", "wrk2 text"
    HEY = "hey", "hey text"
    AB = "ab", "ab text"
    K6_JSON = "k6-json", "k6 JSON summary"
    K6_TEXT = "k6-text", "k6 text summary"
    JMETER_CSV = "jmeter-csv", "JMeter CSV results (JTL)"
    LOCUST_CSV = "locust-csv", "Locust stats history CSV"
