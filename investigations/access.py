"""Who may see and touch what. One helper per object and access level: outsiders get 404
(they must not learn that the object exists), members below the role get 403."""

from django.core.exceptions import ObjectDoesNotExist, PermissionDenied
from django.http import Http404
from django.utils.translation import gettext_lazy as _

from investigations.choices import Role
from investigations.models import (
    Artifact,
    Collection,
    Credential,
    Finding,
    Host,
    Investigation,
    Ladder,
    Membership,
    RootCause,
    Team,
)

# What a member below the role is told: a whole sentence per role, for translation.
ROLE_REFUSALS = {
    Role.RESPONDER: _("Only responders of this team may do this."),
    Role.LEAD: _("Only leads of this team may do this."),
}


def role_in_team(user, team_id: int) -> str | None:
    if not user.is_authenticated:
        return None
    roles = Membership.objects.filter(user=user, team_id=team_id).values_list("role", flat=True)
    # A slice, not first(): one row at most, and no ORDER BY to build on every request.
    return next(iter(roles[:1]), None)


def require_role(user, team_id: int, role: str = Role.VIEWER) -> str:
    held = role_in_team(user, team_id)
    if held is None:
        raise Http404(_("Not found."))
    if Role.rank(held) < Role.rank(role):
        raise PermissionDenied(ROLE_REFUSALS[role])
    return held


def _team_id(obj) -> int:
    if isinstance(obj, Team):
        return obj.pk
    if isinstance(obj, Artifact):
        return obj.collection.investigation.team_id
    if isinstance(obj, Collection | Finding | Ladder) or hasattr(obj, "investigation_id"):
        # Evidence of any kind belongs to its investigation's team.
        return obj.investigation.team_id
    return obj.team_id


def _for_user(queryset, pk: int, user, role: str):
    """The object with this pk if the user holds `role` in its team, else 404 or 403."""
    try:  # get(), not first(): no ORDER BY to build on every request
        obj = queryset.get(pk=pk)
    except ObjectDoesNotExist:
        raise Http404(_("Not found.")) from None
    obj.user_role = require_role(user, _team_id(obj), role)
    return obj


def team_for_user(user, pk: int, role: str = Role.VIEWER) -> Team:
    return _for_user(Team.objects.all(), pk, user, role)


def investigation_for_user(user, pk: int, role: str = Role.VIEWER) -> Investigation:
    return _for_user(Investigation.objects.select_related("team", "lead"), pk, user, role)


def host_for_user(user, pk: int, role: str = Role.VIEWER) -> Host:
    hosts = Host.objects.select_related("team", "credential", "jump_host", "job")
    return _for_user(hosts, pk, user, role)


def credential_for_user(user, pk: int, role: str = Role.VIEWER) -> Credential:
    return _for_user(Credential.objects.select_related("team"), pk, user, role)


def membership_for_lead(user, pk: int) -> Membership:
    return _for_user(Membership.objects.select_related("team", "user"), pk, user, Role.LEAD)


def collection_for_user(user, pk: int, role: str = Role.VIEWER) -> Collection:
    return _for_user(Collection.objects.select_related("investigation"), pk, user, role)


def finding_for_user(user, pk: int, role: str = Role.VIEWER) -> Finding:
    return _for_user(Finding.objects.select_related("investigation"), pk, user, role)


def artifact_for_user(user, pk: int, role: str = Role.VIEWER) -> Artifact:
    return _for_user(Artifact.objects.select_related("collection__investigation"), pk, user, role)


def ladder_for_user(user, pk: int, role: str = Role.VIEWER) -> Ladder:
    return _for_user(Ladder.objects.select_related("investigation__team"), pk, user, role)


def diagnosis_for_user(user, pk: int, role: str = Role.VIEWER):
    from investigations.models import Diagnosis

    return _for_user(Diagnosis.objects.select_related("investigation", "job"), pk, user, role)


def profile_for_user(user, pk: int, role: str = Role.VIEWER):
    from investigations.models import Profile

    return _for_user(
        Profile.objects.select_related("investigation", "host", "side"), pk, user, role
    )


def capture_for_user(user, pk: int, role: str = Role.VIEWER):
    from investigations.models import Capture

    return _for_user(
        Capture.objects.select_related("investigation", "host", "side", "job"), pk, user, role
    )


# --- the knowledge base ----------------------------------------------------------------------
# An entry of a team is read by its members and edited by its leads; an entry of the
# installation (`team` empty) is read by every signed-in user and edited only by operators:
# staff holding the model permission, which making a team never grants.


def knowledge_operator(user, action: str = "change") -> bool:
    """Staff (or a superuser) holding `investigations.<action>_rootcause`."""
    return bool(
        user.is_authenticated
        and user.is_active
        and (user.is_staff or user.is_superuser)
        and user.has_perm(f"investigations.{action}_rootcause")
    )


def root_cause_can_edit(user, root_cause: RootCause) -> bool:
    if root_cause.team_id is None:
        return knowledge_operator(user, "change")
    return role_in_team(user, root_cause.team_id) == Role.LEAD


def root_cause_for_user(user, pk: int, *, edit: bool = False) -> RootCause:
    """The entry if the user may read it (else 404) and, with `edit`, edit it (else 403)."""
    root_cause = RootCause.objects.select_related("team").filter(pk=pk).first()
    readable = root_cause is not None and (
        role_in_team(user, root_cause.team_id) is not None
        if root_cause.team_id
        else user.is_authenticated
    )
    if not readable:
        raise Http404(_("No such root cause in the knowledge base."))
    if edit and not root_cause_can_edit(user, root_cause):
        raise PermissionDenied(root_cause_edit_refusal(root_cause))
    return root_cause


def root_cause_edit_refusal(root_cause: RootCause):
    if root_cause.team_id:
        return ROLE_REFUSALS[Role.LEAD]
    return _(
        "Only operators holding the permission to change root causes may edit the entries "
        "every team reads."
    )


def is_membership_operator(user) -> bool:
    """Operators add people to teams directly, without an invitation: the admin, or Django
    staff holding the investigations.add_membership permission."""
    if not (user.is_authenticated and user.is_active):
        return False
    return user.is_superuser or (user.is_staff and user.has_perm("investigations.add_membership"))


def team_for_member_adder(user, pk: int) -> Team:
    """The team someone is added to or invited to: any team for an operator, else the
    caller's own team where they are lead (404 for outsiders, 403 below lead)."""
    if is_membership_operator(user):
        try:
            return Team.objects.get(pk=pk)
        except Team.DoesNotExist:
            raise Http404(_("Not found.")) from None
    return team_for_user(user, pk, Role.LEAD)
