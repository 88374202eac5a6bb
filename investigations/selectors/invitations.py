"""Reads of invitations to teams: an invitee's open ones, a team's open ones."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils import timezone

from investigations.choices import InvitationStatus
from investigations.models import Invitation, Team


def _open() -> QuerySet[Invitation]:
    return Invitation.objects.filter(status=InvitationStatus.PENDING, expires_at__gt=timezone.now())


def invitations_for_user(*, user: AbstractBaseUser) -> QuerySet[Invitation]:
    """The user's unanswered, unexpired invitations, with team and inviter, newest first."""
    return _open().filter(user=user).select_related("team", "invited_by").order_by("-created_at")


def invitation_for_invitee(*, user: AbstractBaseUser, invitation_id: int) -> Invitation | None:
    """The user's own invitation with this id (whatever its state), or None: anyone else's
    is not found, so nobody learns which ids exist."""
    return (
        Invitation.objects.select_related("team")
        .filter(pk=invitation_id, user=user, user__isnull=False)
        .first()
    )


def team_invitations(*, team: Team) -> QuerySet[Invitation]:
    """The team's unanswered, unexpired invitations, with inviter, by name."""
    return _open().filter(team=team).select_related("invited_by", "team").order_by("username")


def team_invitation_get(*, team: Team, invitation_id: int) -> Invitation | None:
    return Invitation.objects.select_related("team").filter(pk=invitation_id, team=team).first()
