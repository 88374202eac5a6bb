from django.conf import settings
from django.db import models

from investigations.choices import Role


class Team(models.Model):
    name = models.CharField(max_length=200, unique=True)
    # Slack-compatible incoming webhook; empty means no notifications.
    webhook_url = models.URLField(max_length=2000, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["name"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="memberships")
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships"
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.RESPONDER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["team", "user"],
                name="%(app_label)s_%(class)s_unique_team_user",
                violation_error_message="This user is already a member of the team.",
            )
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.team} ({self.role})"

    def can(self, role: str) -> bool:
        return Role.rank(self.role) >= Role.rank(role)


class ApiToken(models.Model):
    """A bearer token for the JSON API. Only its SHA-256 digest is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=200)
    digest = models.CharField(max_length=64, unique=True)
    # The first characters of the token, so a person can tell tokens apart.
    prefix = models.CharField(max_length=12)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)
    # Past this moment the token no longer authenticates (None: tokens made before expiry).
    expires_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
