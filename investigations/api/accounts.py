from django.contrib.auth import authenticate
from django.http import Http404
from ninja import Router, Status
from ninja.errors import AuthenticationError

from investigations.access import is_membership_operator, team_for_member_adder, team_for_user
from investigations.api.schemas import (
    ErrorOut,
    Id,
    InvitationOut,
    MembershipIn,
    MembershipOut,
    TeamIn,
    TeamOut,
    TokenIn,
    TokenOut,
)
from investigations.choices import Role
from investigations.models import Invitation, Membership
from investigations.selectors import membership_get, memberships_for_user, team_members
from investigations.selectors.invitations import (
    invitation_for_invitee,
    invitations_for_user,
    team_invitation_get,
    team_invitations,
)
from investigations.services.invitations import (
    invitation_accept,
    invitation_create,
    invitation_decline,
    invitation_withdraw,
)
from investigations.services.teams import membership_add, membership_remove, team_create
from investigations.services.tokens import api_token_create

router = Router(tags=["accounts"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


@router.post(
    "/auth/token", auth=None, response={200: TokenOut, 401: ErrorOut, 422: ErrorOut, 429: ErrorOut}
)
def token_create(request, payload: TokenIn):
    """Exchange a username and password for a new API token (shown once), valid for
    PERFCASE_API_TOKEN_DAYS (30 by default). 429: too many failed sign-ins for this user name
    from this address (ask a team lead to unlock you), or from this address for any names
    (wait the seconds in Retry-After)."""
    user = authenticate(request, username=payload.username, password=payload.password)
    if user is None:
        raise AuthenticationError()
    token, raw = api_token_create(user=user, name="API login")
    return {"token": raw, "expires_at": token.expires_at}


def _team_out(membership: Membership) -> dict:
    return {"id": membership.team_id, "name": membership.team.name, "role": membership.role}


@router.get("/teams", response=list[TeamOut])
def teams_list(request):
    return [_team_out(m) for m in memberships_for_user(user=request.user)]


@router.post("/teams", response={201: TeamOut, **ERRORS})
def teams_create(request, payload: TeamIn):
    """Create a team; the caller becomes its lead."""
    team = team_create(user=request.user, name=payload.name)
    return Status(201, {"id": team.pk, "name": team.name, "role": Role.LEAD})


@router.get("/teams/{team_id}/members", response={200: list[MembershipOut], **ERRORS})
def team_members_list(request, team_id: Id):
    team = team_for_user(request.user, team_id)
    return [
        {"id": m.pk, "username": m.user.get_username(), "role": m.role}
        for m in team_members(team=team)
    ]


@router.post(
    "/teams/{team_id}/members", response={201: MembershipOut, 202: InvitationOut, **ERRORS}
)
def team_members_add(request, team_id: Id, payload: MembershipIn):
    """A lead invites the user of this name (202, status `invited`): they become a member
    when they accept it (`POST /api/invitations/{id}/accept`) within PERFCASE_INVITATION_DAYS.
    The answer is the same whether or not the name has an account. An operator (the admin,
    or staff with the `investigations.add_membership` permission) adds directly (201)."""
    team = team_for_member_adder(request.user, team_id)
    if is_membership_operator(request.user):
        membership = membership_add(team=team, username=payload.username, role=payload.role)
        return Status(
            201,
            {
                "id": membership.pk,
                "username": membership.user.get_username(),
                "role": membership.role,
            },
        )
    invitation = invitation_create(
        team=team, invited_by=request.user, username=payload.username, role=payload.role
    )
    return Status(202, {**_invitation_out(invitation), "status": "invited"})


def _invitation_out(invitation: Invitation) -> dict:
    return {
        "id": invitation.pk,
        "team": invitation.team_id,
        "team_name": invitation.team.name,
        "username": invitation.username,
        "role": invitation.role,
        "status": invitation.status,
        "invited_by": invitation.invited_by.get_username() if invitation.invited_by else None,
        "expires_at": invitation.expires_at,
    }


@router.get("/teams/{team_id}/invitations", response={200: list[InvitationOut], **ERRORS})
def team_invitations_list(request, team_id: Id):
    """The team's pending invitations (leads only)."""
    team = team_for_user(request.user, team_id, Role.LEAD)
    return [_invitation_out(i) for i in team_invitations(team=team)]


@router.delete("/teams/{team_id}/invitations/{invitation_id}", response={204: None, **ERRORS})
def team_invitations_withdraw(request, team_id: Id, invitation_id: Id):
    """Withdraw a pending invitation (leads only); 400 once it was answered or expired."""
    team = team_for_user(request.user, team_id, Role.LEAD)
    invitation = team_invitation_get(team=team, invitation_id=invitation_id)
    if invitation is None:
        raise Http404
    invitation_withdraw(invitation=invitation)
    return Status(204, None)


@router.get("/invitations", response={200: list[InvitationOut], **ERRORS})
def invitations_list(request):
    """Your pending invitations to teams."""
    return [_invitation_out(i) for i in invitations_for_user(user=request.user)]


def _own_invitation(request, invitation_id: int) -> Invitation:
    invitation = invitation_for_invitee(user=request.user, invitation_id=invitation_id)
    if invitation is None:
        raise Http404
    return invitation


@router.post("/invitations/{invitation_id}/accept", response={200: TeamOut, **ERRORS})
def invitations_accept(request, invitation_id: Id):
    """Join the team with the invited role; 400 once it was answered, withdrawn or expired,
    404 for an invitation that is not yours."""
    membership = invitation_accept(
        invitation=_own_invitation(request, invitation_id), user=request.user
    )
    return _team_out(membership)


@router.post("/invitations/{invitation_id}/decline", response={204: None, **ERRORS})
def invitations_decline(request, invitation_id: Id):
    invitation_decline(invitation=_own_invitation(request, invitation_id), user=request.user)
    return Status(204, None)


@router.delete("/teams/{team_id}/members/{membership_id}", response={204: None, **ERRORS})
def team_members_remove(request, team_id: Id, membership_id: Id):
    team = team_for_user(request.user, team_id, Role.LEAD)
    membership = membership_get(team=team, membership_id=membership_id)
    if membership is None:
        raise Http404
    membership_remove(membership=membership)
    return Status(204, None)
