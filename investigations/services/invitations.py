"""Invitations to a team: a lead invites a user name, the person of that name accepts (and
only then becomes a member) or declines; the lead may withdraw it; it lapses after
INVITATION_DAYS."""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from investigations.choices import InvitationStatus
from investigations.models import Invitation, Membership, Team
from investigations.services.teams import role_check

PENDING = InvitationStatus.PENDING
# Django's own user name limit.
USERNAME_MAX = 150


@transaction.atomic
def invitation_create(*, team: Team, invited_by, username: str, role: str) -> Invitation:
    """Invite whoever has this user name. The row and the answer are alike whether or not
    the name has an account, so a lead learns nothing about who exists. Inviting a name
    with a pending invitation renews it (its role and expiry)."""
    role_check(role)
    name = username.strip()
    if not name:
        raise ValidationError({"username": _("Give the user name of the person to invite.")})
    if len(name) > USERNAME_MAX:
        raise ValidationError(
            {"username": _("A user name has at most %(count)s characters.") % {"count": 150}}
        )
    # The lead sees the members anyway: saying so tells nothing new.
    if Membership.objects.filter(team=team, user__username=name).exists():
        raise ValidationError({"username": _("This user is already a member of the team.")})
    now = timezone.now()
    Invitation.objects.filter(team=team, username=name, status=PENDING, expires_at__lte=now).update(
        status=InvitationStatus.EXPIRED
    )
    invitation = (
        Invitation.objects.select_for_update().filter(team=team, username=name, status=PENDING)
    ).first() or Invitation(
        team=team, username=name, user=get_user_model().objects.filter(username=name).first()
    )
    invitation.role = role
    invitation.invited_by = invited_by
    invitation.expires_at = now + timedelta(days=settings.INVITATION_DAYS)
    try:
        with transaction.atomic():
            invitation.save()
    except IntegrityError:  # the same name invited at the same moment by another lead
        raise ValidationError(
            {"username": _("This name was invited a moment ago; see the pending invitations.")}
        ) from None
    return invitation


def _not_pending(invitation: Invitation) -> ValidationError:
    if invitation.status == PENDING or invitation.status == InvitationStatus.EXPIRED:
        return ValidationError(
            _("This invitation has expired; ask a lead of the team to invite you again.")
        )
    if invitation.status == InvitationStatus.WITHDRAWN:
        return ValidationError(_("This invitation was withdrawn by a lead of the team."))
    return ValidationError(_("This invitation was already answered."))


def _answer(invitation: Invitation, status: str) -> None:
    """Close a pending invitation with a conditional UPDATE, so that of two answers at once
    (accept in one tab, withdraw in another) exactly one wins."""
    now = timezone.now()
    answered = Invitation.objects.filter(
        pk=invitation.pk, status=PENDING, expires_at__gt=now
    ).update(status=status, answered_at=now)
    if not answered:
        invitation.refresh_from_db()
        raise _not_pending(invitation)
    invitation.status, invitation.answered_at = status, now


def _check_invitee(invitation: Invitation, user) -> None:
    # Selectors hand a user only their own invitations; this guards other callers.
    if invitation.user_id is None or invitation.user_id != user.pk:
        raise PermissionDenied(_("This invitation is not yours."))


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user) -> Membership:
    """The invitee joins the team with the role they were invited to."""
    _check_invitee(invitation, user)
    if Membership.objects.filter(team_id=invitation.team_id, user=user).exists():
        raise ValidationError(_("You are already a member of this team."))
    _answer(invitation, InvitationStatus.ACCEPTED)
    return Membership.objects.create(team_id=invitation.team_id, user=user, role=invitation.role)


@transaction.atomic
def invitation_decline(*, invitation: Invitation, user) -> Invitation:
    _check_invitee(invitation, user)
    _answer(invitation, InvitationStatus.DECLINED)
    return invitation


@transaction.atomic
def invitation_withdraw(*, invitation: Invitation) -> Invitation:
    """A lead takes back an invitation nobody has answered yet."""
    _answer(invitation, InvitationStatus.WITHDRAWN)
    return invitation
