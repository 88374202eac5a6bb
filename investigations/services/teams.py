from urllib.parse import urlsplit

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from investigations.choices import InvitationStatus, Role
from investigations.models import Invitation, Membership, Team
from investigations.webhook_addresses import AddressRefused, webhook_address

User = get_user_model()


@transaction.atomic
def team_create(*, user, name: str) -> Team:
    """A new team, with its creator as its first lead."""
    name = " ".join(name.split())
    if not name:
        raise ValidationError({"name": _("Give the team a name.")})
    if len(name) > 200:
        raise ValidationError({"name": _("A team name has at most 200 characters.")})
    if Team.objects.filter(name__iexact=name).exists():
        raise ValidationError({"name": _("A team with this name already exists.")})
    team = Team.objects.create(name=name)
    Membership.objects.create(team=team, user=user, role=Role.LEAD)
    return team


def role_check(role: str) -> None:
    if role not in Role.values:
        raise ValidationError(
            {"role": _("Choose one of: %(choices)s.") % {"choices": ", ".join(Role.values)}}
        )


@transaction.atomic
def membership_add(*, team: Team, username: str, role: str) -> Membership:
    """An operator's direct add, without the person's consent (leads invite instead:
    services/invitations.py). It may say that a name has no account: operators know."""
    role_check(role)
    user = User.objects.filter(username=username.strip()).first()
    if user is None:
        raise ValidationError(
            {"username": _("There is no user named %(name)s.") % {"name": repr(username.strip())}}
        )
    if Membership.objects.filter(team=team, user=user).exists():
        raise ValidationError({"username": _("This user is already a member of the team.")})
    membership = Membership.objects.create(team=team, user=user, role=role)
    # An invitation of the name to this team has nothing left to ask.
    Invitation.objects.filter(
        team=team, username=user.get_username(), status=InvitationStatus.PENDING
    ).update(status=InvitationStatus.WITHDRAWN, answered_at=timezone.now())
    return membership


def _ensure_a_lead_remains(membership: Membership) -> None:
    others = Membership.objects.filter(team_id=membership.team_id, role=Role.LEAD).exclude(
        pk=membership.pk
    )
    if membership.role == Role.LEAD and not others.exists():
        raise ValidationError(
            {"role": _("A team needs at least one lead; make someone else lead first.")}
        )


@transaction.atomic
def membership_set_role(*, membership: Membership, role: str) -> Membership:
    role_check(role)
    if role != Role.LEAD:
        _ensure_a_lead_remains(membership)
    membership.role = role
    membership.save(update_fields=["role"])
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership) -> None:
    _ensure_a_lead_remains(membership)
    membership.delete()


def team_set_webhook(*, team: Team, webhook_url: str) -> Team:
    url = webhook_url.strip()
    if url:
        if len(url) > 2000:
            raise ValidationError({"webhook_url": _("A URL has at most 2000 characters.")})
        try:
            parts = urlsplit(url)
            port = parts.port or (443 if parts.scheme == "https" else 80)
        except ValueError:
            parts, port = None, 0
        if parts is None or parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValidationError({"webhook_url": _("Enter an http:// or https:// URL.")})
        try:
            # The delivery's own check, so what is saved is what may be delivered.
            webhook_address(parts.hostname, port, unresolved_ok=True)
        except AddressRefused as error:
            raise ValidationError({"webhook_url": str(error)}) from None
    team.webhook_url = url
    team.save(update_fields=["webhook_url"])
    return team


def membership_unlock(*, membership: Membership, address: str = "") -> int:
    """A lead lets a member sign in again after too many failed sign-ins: the failures
    recorded for the user name at this address (at every address without one) are
    forgotten. Returns how many records went."""
    from axes.utils import reset

    return reset(username=membership.user.get_username(), ip=address.strip() or None)
