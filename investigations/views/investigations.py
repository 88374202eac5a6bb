from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from investigations.access import investigation_for_user
from investigations.choices import Role, SideKind
from investigations.filters import InvestigationFilter
from investigations.forms import (
    InvestigationCreateForm,
    InvestigationForm,
    MemberForm,
    SideForm,
    StatusForm,
)
from investigations.selectors import (
    host_pairs,
    hosts_for_user,
    investigation_tag_names,
    member_get,
    side_get,
    team_users,
    teams_for_user,
    teams_with_role,
    users_of_teams,
)
from investigations.selectors import (
    investigation_list as select_investigations,
)
from investigations.services.inventory import member_add, member_remove
from investigations.services.investigations import (
    EDITABLE_FIELDS,
    investigation_create,
    investigation_set_status,
    investigation_update,
    side_update,
)
from investigations.views.case_page import head_context, investigation_page
from investigations.views.forms import on_case, on_page, submit
from investigations.views.pages import form_or, paginate, wants_partial
from investigations.views.panels import panel


@login_required
def investigation_list(request: HttpRequest) -> HttpResponse:
    filters = InvestigationFilter(request.GET or None)
    investigations = select_investigations(user=request.user)
    if filters.is_valid():
        investigations = filters.apply(investigations)
    teams = teams_for_user(user=request.user)
    page = paginate(request, investigations)
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "investigations/investigation_list.html",
        {
            "filters": filters,
            "page": page,
            "teams": teams,
            "query": query.urlencode(),
            "can_create": teams_with_role(
                user=request.user, roles=[Role.RESPONDER, Role.LEAD]
            ).exists(),
        },
    )


@login_required
def investigation_new(request: HttpRequest) -> HttpResponse:
    teams = teams_with_role(user=request.user, roles=[Role.RESPONDER, Role.LEAD])
    if not teams.exists():
        if request.method == "POST":
            raise PermissionDenied(
                _("Only responders and leads of a team may open investigations.")
            )
        messages.info(request, _("Create or join a team before opening an investigation."))
        return redirect("team_list")
    members = users_of_teams(teams=teams)
    form = InvestigationCreateForm(
        request.POST or None,
        teams=teams,
        members=members,
        initial={"side_a_kind": SideKind.OTHER, "side_b_kind": SideKind.OTHER},
    )
    page = on_page(request, "investigations/investigation_form.html", {})
    if request.method != "POST":
        return page(form)

    def create(data):
        fields = form.service_fields()
        if fields["lead"] is None:
            fields.pop("lead")
        return investigation_create(
            team=data["team"],
            user=request.user,
            tags=data["tags"],
            side_a_label=data["side_a_label"],
            side_a_kind=data["side_a_kind"],
            side_b_label=data["side_b_label"],
            side_b_kind=data["side_b_kind"],
            **fields,
        )

    return submit(
        form,
        create,
        done=lambda investigation: redirect("investigation_detail", pk=investigation.pk),
        failed=page,
    )


@login_required
def investigation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    """The title, then frames for the header and every registered panel (see
    views/panels.py), which htmx fills: a feature's panel is drawn by the feature's own
    context function and template, not here."""
    return investigation_page(request, investigation_for_user(request.user, pk))


@require_safe
@login_required
def investigation_head(request: HttpRequest, pk: int) -> HttpResponse:
    """The header's status line, the method's progress and the actions, which the page
    loads once it is in; without JavaScript, on a page of their own (the frame links here)."""
    investigation = investigation_for_user(request.user, pk)
    head = render_to_string("investigations/_head.html", head_context(investigation), request)
    if wants_partial(request):
        response = HttpResponse(head)
    else:
        shown = {"name": "case-head", "title": _("Status and actions")}
        context = {"investigation": investigation, "panel": shown, "card": head}
        response = render(request, "investigations/investigation_panel.html", context)
    patch_vary_headers(response, ["HX-Request"])
    return response


@panel(
    name="symptom",
    title=_("Symptom"),
    template="investigations/_panel_symptom.html",
    order=10,
    half=True,
)
def symptom_context(request: HttpRequest, investigation) -> dict:
    return {"sides": list(investigation.sides.all())}


@panel(
    name="times", title=_("Times"), template="investigations/_panel_times.html", order=20, half=True
)
def times_context(request: HttpRequest, investigation) -> dict:
    return {}


@panel(
    name="environment",
    title=_("Environment"),
    template="investigations/_panel_environment.html",
    order=40,
)
def environment_context(request: HttpRequest, investigation) -> dict:
    sides = list(investigation.sides.all())
    return {
        "sides": sides,
        "side_forms": [
            (
                side,
                form_or(
                    request,
                    f"side_form_{side.key}",
                    lambda side=side: SideForm(
                        initial={"label": side.label, "kind": side.kind}, prefix=side.key
                    ),
                ),
            )
            for side in sides
        ],
        "pairs": host_pairs(investigation=investigation),
        "member_form": form_or(
            request,
            "member_form",
            lambda: MemberForm(hosts=hosts_for_user(user=request.user, team=investigation.team)),
        ),
    }


@login_required
def investigation_edit(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    initial = {f: getattr(investigation, f) for f in EDITABLE_FIELDS}
    initial["tags"] = ", ".join(investigation_tag_names(investigation=investigation))
    form = InvestigationForm(
        request.POST or None, initial=initial, members=team_users(team_id=investigation.team_id)
    )
    page = on_page(
        request, "investigations/investigation_form.html", {"investigation": investigation}
    )
    if request.method != "POST":
        return page(form)
    return submit(
        form,
        lambda data: investigation_update(
            investigation=investigation,
            user=request.user,
            tags=data["tags"] if "tags" in form.changed_data else None,
            **form.service_fields(changed_only=True),
        ),
        done=lambda saved: redirect("investigation_detail", pk=investigation.pk),
        failed=page,
    )


def _back_to(investigation, anchor: str = "") -> HttpResponse:
    return redirect(reverse("investigation_detail", args=[investigation.pk]) + anchor)


@require_POST
@login_required
def investigation_status(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = StatusForm(request.POST)
    if form.is_valid():
        try:
            investigation_set_status(
                investigation=investigation,
                user=request.user,
                status=form.cleaned_data["status"],
                reason=form.cleaned_data["reason"],
            )
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
    return _back_to(investigation)


@require_POST
@login_required
def side_edit(request: HttpRequest, pk: int, key: str) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    side = side_get(investigation=investigation, key=key)
    if side is None:
        raise Http404
    return submit(
        SideForm(request.POST, prefix=key),
        lambda data: side_update(side=side, user=request.user, **data),
        done=lambda saved: _back_to(investigation, "#environment"),
        failed=on_case(request, investigation, panel="environment", name=f"side_form_{key}"),
    )


@require_http_methods(["GET", "POST"])
@login_required
def member_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    if request.method == "GET":  # the address a failed placing left, opened again
        return _back_to(investigation, "#environment")
    form = MemberForm(
        request.POST, hosts=hosts_for_user(user=request.user, team=investigation.team)
    )
    return submit(
        form,
        lambda data: member_add(
            investigation=investigation,
            user=request.user,
            host=data["host"],
            side_key=data["side"],
            role=data["role"],
        ),
        done=lambda member: _back_to(investigation, "#environment"),
        failed=on_case(request, investigation, panel="environment", name="member_form"),
    )


@require_POST
@login_required
def member_delete(request: HttpRequest, pk: int, member_pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    member = member_get(investigation=investigation, member_id=member_pk)
    if member is None:
        raise Http404
    member_remove(member=member, user=request.user)
    return _back_to(investigation, "#environment")
