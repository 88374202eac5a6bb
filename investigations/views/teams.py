from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST

from investigations.access import is_membership_operator, membership_for_lead, team_for_user
from investigations.choices import Role
from investigations.forms import MembershipAddForm, RoleForm, TeamForm, WebhookForm
from investigations.selectors import memberships_for_user, recent_deliveries, team_members
from investigations.selectors.invitations import (
    invitation_for_invitee,
    invitations_for_user,
    team_invitation_get,
    team_invitations,
)
from investigations.selectors.teams import sign_in_locks
from investigations.services.invitations import (
    invitation_accept,
    invitation_create,
    invitation_decline,
    invitation_withdraw,
)
from investigations.services.teams import (
    membership_add,
    membership_remove,
    membership_set_role,
    membership_unlock,
    team_create,
    team_set_webhook,
)
from investigations.services.webhooks import webhook_send_test
from investigations.views.forms import on_page, submit


@login_required
def team_list(request: HttpRequest) -> HttpResponse:
    page = on_page(
        request,
        "investigations/team_list.html",
        {
            "memberships": memberships_for_user(user=request.user),
            "invitations": invitations_for_user(user=request.user),
        },
    )
    if request.method != "POST":
        return page(TeamForm())
    return submit(
        TeamForm(request.POST),
        lambda data: team_create(user=request.user, name=data["name"]),
        done=lambda team: redirect("team_detail", pk=team.pk),
        failed=page,
    )


@login_required
def team_detail(request: HttpRequest, pk: int) -> HttpResponse:
    team = team_for_user(request.user, pk)
    is_lead = team.user_role == Role.LEAD
    if request.method == "POST":
        team = team_for_user(request.user, pk, Role.LEAD)
        return submit(
            MembershipAddForm(request.POST),
            lambda data: _add_or_invite(request, team, **data),
            done=lambda added: redirect("team_detail", pk=team.pk),
            failed=lambda form: _team_page(request, team, is_lead=is_lead, add_form=form),
        )
    return _team_page(
        request, team, is_lead=is_lead, add_form=MembershipAddForm() if is_lead else None
    )


def _team_page(request: HttpRequest, team, *, is_lead: bool, add_form) -> HttpResponse:
    members = list(team_members(team=team))
    if is_lead:
        locks = sign_in_locks(usernames=[m.user.get_username() for m in members])
        for member in members:
            member.sign_in_locks = locks.get(member.user.get_username(), [])
    return render(
        request,
        "investigations/team_detail.html",
        {
            "team": team,
            "is_lead": is_lead,
            "members": members,
            "roles": Role.choices,
            "add_form": add_form,
            "operator": is_membership_operator(request.user),
            "invitations": team_invitations(team=team) if is_lead else [],
            "invitation_days": settings.INVITATION_DAYS,
            "webhook_form": WebhookForm(initial={"webhook_url": team.webhook_url}),
            "deliveries": recent_deliveries(team=team),
        },
    )


def _add_or_invite(request: HttpRequest, team, *, username: str, role: str) -> None:
    """An operator adds at once; a lead invites, and hears the same whether the name has an
    account or not."""
    if is_membership_operator(request.user):
        membership = membership_add(team=team, username=username, role=role)
        messages.success(
            request, _("%(user)s was added to the team.") % {"user": membership.user.get_username()}
        )
        return
    invitation = invitation_create(team=team, invited_by=request.user, username=username, role=role)
    messages.success(
        request,
        ngettext(
            "%(user)s is invited. If there is a user of this name, they join when they accept "
            "the invitation (within %(days)s day).",
            "%(user)s is invited. If there is a user of this name, they join when they accept "
            "the invitation (within %(days)s days).",
            settings.INVITATION_DAYS,
        )
        % {"user": invitation.username, "days": settings.INVITATION_DAYS},
    )


@require_POST
@login_required
def invitation_answer(request: HttpRequest, pk: int) -> HttpResponse:
    """The invitee accepts or declines, from their teams page."""
    invitation = invitation_for_invitee(user=request.user, invitation_id=pk)
    if invitation is None:
        raise Http404(_("Not found."))
    try:
        if request.POST.get("answer") == "accept":
            invitation_accept(invitation=invitation, user=request.user)
            messages.success(
                request,
                _("You joined %(team)s as %(role)s.")
                % {"team": invitation.team.name, "role": Role(invitation.role).label},
            )
            return redirect("team_detail", pk=invitation.team_id)
        if request.POST.get("answer") == "decline":
            invitation_decline(invitation=invitation, user=request.user)
            messages.info(
                request, _("You declined to join %(team)s.") % {"team": invitation.team.name}
            )
        else:
            messages.error(request, _("Choose Accept or Decline."))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("team_list")


@require_POST
@login_required
def invitation_withdraw_view(request: HttpRequest, pk: int, invitation_pk: int) -> HttpResponse:
    team = team_for_user(request.user, pk, Role.LEAD)
    invitation = team_invitation_get(team=team, invitation_id=invitation_pk)
    if invitation is None:
        raise Http404(_("Not found."))
    try:
        invitation_withdraw(invitation=invitation)
        messages.success(
            request,
            _("The invitation of %(user)s was withdrawn.") % {"user": invitation.username},
        )
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("team_detail", pk=team.pk)


@require_POST
@login_required
def membership_edit(request: HttpRequest, pk: int) -> HttpResponse:
    membership = membership_for_lead(request.user, pk)
    try:
        if request.POST.get("unlock"):
            address = request.POST.get("address", "")
            membership_unlock(membership=membership, address=address)
            messages.success(
                request,
                _("%(user)s may sign in again from %(address)s.")
                % {"user": membership.user.get_username(), "address": address}
                if address
                else _("%(user)s may sign in again.") % {"user": membership.user.get_username()},
            )
        elif request.POST.get("remove"):
            membership_remove(membership=membership)
            if membership.user_id == request.user.pk:
                return redirect("team_list")
        else:
            form = RoleForm(request.POST)
            if form.is_valid():
                membership_set_role(membership=membership, role=form.cleaned_data["role"])
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("team_detail", pk=membership.team_id)


@require_POST
@login_required
def team_webhook(request: HttpRequest, pk: int) -> HttpResponse:
    team = team_for_user(request.user, pk, Role.LEAD)
    if request.POST.get("test"):
        if team.webhook_url:
            webhook_send_test(team=team, user=request.user)
            messages.info(request, _("A test message is on its way; its outcome shows below."))
        else:
            messages.error(request, _("Set a webhook URL first."))
        return redirect("team_detail", pk=team.pk)
    form = WebhookForm(request.POST)
    if form.is_valid():
        try:
            team_set_webhook(team=team, webhook_url=form.cleaned_data["webhook_url"])
            messages.success(request, _("Webhook saved."))
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
    return redirect("team_detail", pk=team.pk)
