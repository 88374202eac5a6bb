from django.conf import settings
from django.db import models

from investigations.choices import InvitationStatus, Role


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


class Invitation(models.Model):
    """A lead's invitation to join a team; no membership exists until the invitee accepts.

    The name is kept as the lead typed it, and `user` is the account of that name when the
    invitation was made, or None: the lead is never told which, so inviting says nothing
    about who has an account."""

    team = models.ForeignKey(Team, on_delete=models.CASCADE, related_name="invitations")
    username = models.CharField(max_length=150)
    user = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="team_invitations",
    )
    role = models.CharField(max_length=20, choices=Role.choices, default=Role.RESPONDER)
    invited_by = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.SET_NULL,
        null=True,
        blank=True,
        related_name="+",
    )
    status = models.CharField(
        max_length=20, choices=InvitationStatus.choices, default=InvitationStatus.PENDING
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    answered_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["team", "username"],
                condition=models.Q(status=InvitationStatus.PENDING),
                name="%(app_label)s_%(class)s_one_pending_per_name",
                violation_error_message="This name already has a pending invitation.",
            )
        ]
        indexes = [
            # The invitee's open invitations, on their teams page and GET /api/invitations.
            models.Index(
                fields=["user", "expires_at"],
                condition=models.Q(status=InvitationStatus.PENDING),
                name="invitation_pending_user_idx",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.username} to {self.team} ({self.status})"


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
