from django.conf import settings
from django.db import models
from django.utils.translation import gettext

from investigations.choices import HostRole, HostTransport


class Credential(models.Model):
    """An SSH private key, encrypted at rest; only its fingerprint is ever shown again."""

    team = models.ForeignKey("Team", on_delete=models.CASCADE, related_name="credentials")
    name = models.CharField(max_length=200)
    key_type = models.CharField(max_length=32)
    fingerprint = models.CharField(max_length=100)
    encrypted_private_key = models.TextField()
    encrypted_passphrase = models.TextField(blank=True)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "name"],
                name="%(app_label)s_%(class)s_unique_team_name",
                violation_error_message="The team already has a credential with this name.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.fingerprint})"


class Host(models.Model):
    team = models.ForeignKey("Team", on_delete=models.CASCADE, related_name="hosts")
    name = models.CharField(max_length=200)
    address = models.CharField(max_length=255)
    port = models.PositiveIntegerField(default=22)
    username = models.CharField(max_length=64)
    credential = models.ForeignKey(
        Credential, on_delete=models.PROTECT, null=True, blank=True, related_name="hosts"
    )
    jump_host = models.ForeignKey(
        "self", on_delete=models.PROTECT, null=True, blank=True, related_name="jumped_hosts"
    )
    transport = models.CharField(
        max_length=10, choices=HostTransport.choices, default=HostTransport.SSH
    )
    # The pinned host key: a connection that meets another key is refused.
    host_key_type = models.CharField(max_length=40, blank=True)
    host_key_fingerprint = models.CharField(max_length=100, blank=True)
    host_key_trusted_at = models.DateTimeField(null=True, blank=True)
    host_key_trusted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    # The key the last scan saw, waiting for a person to compare and trust it.
    scanned_key_type = models.CharField(max_length=40, blank=True)
    scanned_key_fingerprint = models.CharField(max_length=100, blank=True)
    scanned_at = models.DateTimeField(null=True, blank=True)
    # The last scan a person asked for, run in a worker (its status: ScanStatus).
    job = models.OneToOneField(
        "Job", on_delete=models.SET_NULL, null=True, blank=True, related_name="+"
    )
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "name"],
                name="%(app_label)s_%(class)s_unique_team_name",
                violation_error_message="The team already has a host with this name.",
            ),
            models.CheckConstraint(
                condition=models.Q(port__gte=1, port__lte=65535),
                name="%(app_label)s_%(class)s_port_range",
                violation_error_message="The SSH port must be between 1 and 65535.",
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def reach(self) -> str:
        """How the host is reached, as people read it: user@address:port, or this machine."""
        if self.transport == HostTransport.LOCAL:
            return gettext("this machine")
        return f"{self.username}@{self.address}:{self.port}"


class EnvironmentMember(models.Model):
    """A host placed on one side of an investigation with a role."""

    investigation = models.ForeignKey(
        "Investigation", on_delete=models.CASCADE, related_name="members"
    )
    side = models.ForeignKey("Side", on_delete=models.CASCADE, related_name="members")
    host = models.ForeignKey(Host, on_delete=models.PROTECT, related_name="placements")
    role = models.CharField(max_length=20, choices=HostRole.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["role", "host__name"]
        constraints = [
            models.UniqueConstraint(
                fields=["side", "host", "role"],
                name="%(app_label)s_%(class)s_unique_side_host_role",
                violation_error_message="This host already has this role on this side.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.host} as {self.role} on {self.side}"
