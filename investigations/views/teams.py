from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from investigations.access import membership_for_lead, team_for_user
from investigations.choices import Role
from investigations.forms import MembershipAddForm, RoleForm, TeamForm, WebhookForm, attach_errors
from investigations.selectors import memberships_for_user, recent_deliveries, team_members
from investigations.selectors.teams import locked_out_usernames
from investigations.services.teams import (
    membership_add,
    membership_remove,
    membership_set_role,
    membership_unlock,
    team_create,
    team_set_webhook,
)
from investigations.services.webhooks import webhook_send_test


@login_required
def team_list(request: HttpRequest) -> HttpResponse:
    form = TeamForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            team = team_create(user=request.user, name=form.cleaned_data["name"])
        except ValidationError as error:
            attach_errors(form, error)
        else:
            return redirect("team_detail", pk=team.pk)
    return render(
        request,
        "investigations/team_list.html",
        {"memberships": memberships_for_user(user=request.user), "form": form},
    )


@login_required
def team_detail(request: HttpRequest, pk: int) -> HttpResponse:
    team = team_for_user(request.user, pk)
    is_lead = team.user_role == Role.LEAD
    add_form = MembershipAddForm(request.POST or None) if is_lead else None
    if request.method == "POST":
        team = team_for_user(request.user, pk, Role.LEAD)
        if add_form.is_valid():
            try:
                membership_add(team=team, **add_form.cleaned_data)
            except ValidationError as error:
                attach_errors(add_form, error)
            else:
                return redirect("team_detail", pk=team.pk)
    members = team_members(team=team)
    return render(
        request,
        "investigations/team_detail.html",
        {
            "team": team,
            "is_lead": is_lead,
            "members": members,
            "locked": locked_out_usernames(usernames=[m.user.get_username() for m in members])
            if is_lead
            else set(),
            "roles": Role.choices,
            "add_form": add_form,
            "webhook_form": WebhookForm(initial={"webhook_url": team.webhook_url}),
            "deliveries": recent_deliveries(team=team),
        },
    )


@require_POST
@login_required
def membership_edit(request: HttpRequest, pk: int) -> HttpResponse:
    membership = membership_for_lead(request.user, pk)
    try:
        if request.POST.get("unlock"):
            membership_unlock(membership=membership)
            messages.success(
                request,
                _("%(user)s may sign in again.") % {"user": membership.user.get_username()},
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
