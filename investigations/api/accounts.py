from django.contrib.auth import authenticate
from django.http import Http404
from ninja import Router, Status
from ninja.errors import AuthenticationError

from investigations.access import team_for_user
from investigations.api.schemas import (
    ErrorOut,
    Id,
    MembershipIn,
    MembershipOut,
    TeamIn,
    TeamOut,
    TokenIn,
    TokenOut,
)
from investigations.choices import Role
from investigations.models import Membership
from investigations.selectors import membership_get, memberships_for_user, team_members
from investigations.services.teams import membership_add, membership_remove, team_create
from investigations.services.tokens import api_token_create

router = Router(tags=["accounts"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


@router.post(
    "/auth/token", auth=None, response={200: TokenOut, 401: ErrorOut, 422: ErrorOut, 429: ErrorOut}
)
def token_create(request, payload: TokenIn):
    """Exchange a username and password for a new API token (shown once), valid for
    PERFCASE_API_TOKEN_DAYS (30 by default). 429: too many failed sign-ins for this user or
    from this address; wait, or ask a team lead to unlock you."""
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


@router.post("/teams/{team_id}/members", response={201: MembershipOut, **ERRORS})
def team_members_add(request, team_id: Id, payload: MembershipIn):
    team = team_for_user(request.user, team_id, Role.LEAD)
    membership = membership_add(team=team, username=payload.username, role=payload.role)
    return Status(
        201,
        {"id": membership.pk, "username": membership.user.get_username(), "role": membership.role},
    )


@router.delete("/teams/{team_id}/members/{membership_id}", response={204: None, **ERRORS})
def team_members_remove(request, team_id: Id, membership_id: Id):
    team = team_for_user(request.user, team_id, Role.LEAD)
    membership = membership_get(team=team, membership_id=membership_id)
    if membership is None:
        raise Http404
    membership_remove(membership=membership)
    return Status(204, None)
