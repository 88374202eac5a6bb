from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from investigations.access import investigation_for_user
from investigations.choices import Role, SideKind, Status, allowed_status_moves
from investigations.connections import unready_reason
from investigations.filters import InvestigationFilter
from investigations.forms import (
    CollectFactsForm,
    InvestigationCreateForm,
    InvestigationForm,
    MemberForm,
    SideForm,
    StatusForm,
    TimelineEntryForm,
    attach_errors,
)
from investigations.models import EnvironmentMember
from investigations.selectors import (
    collections_for,
    fact_pairs,
    findings_for,
    host_pairs,
    hosts_for_user,
    team_users,
    teams_for_user,
    teams_with_role,
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
from investigations.views.checklist import checklist_context
from investigations.views.ladders import ladders_context
from investigations.views.pages import paginate
from investigations.views.path import path_context, requested_node
from investigations.views.timeline import timeline_context

User = get_user_model()


@login_required
def investigation_list(request: HttpRequest) -> HttpResponse:
    filters = InvestigationFilter(request.GET or None)
    investigations = select_investigations(user=request.user)
    if filters.is_valid():
        investigations = filters.apply(investigations)
    teams = teams_for_user(request.user)
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
            "can_create": teams_with_role(request.user, [Role.RESPONDER, Role.LEAD]).exists(),
        },
    )


@login_required
def investigation_new(request: HttpRequest) -> HttpResponse:
    teams = teams_with_role(request.user, [Role.RESPONDER, Role.LEAD])
    if not teams.exists():
        if request.method == "POST":
            raise PermissionDenied("Only responders and leads of a team may open investigations.")
        messages.info(request, "Create or join a team before opening an investigation.")
        return redirect("team_list")
    members = User.objects.filter(memberships__team__in=teams).distinct().order_by("username")
    form = InvestigationCreateForm(
        request.POST or None,
        teams=teams,
        members=members,
        initial={"side_a_kind": SideKind.OTHER, "side_b_kind": SideKind.OTHER},
    )
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        fields = form.service_fields()
        if fields["lead"] is None:
            fields.pop("lead")
        try:
            investigation = investigation_create(
                team=data["team"],
                user=request.user,
                tags=data["tags"],
                side_a_label=data["side_a_label"],
                side_a_kind=data["side_a_kind"],
                side_b_label=data["side_b_label"],
                side_b_kind=data["side_b_kind"],
                **fields,
            )
        except ValidationError as error:
            attach_errors(form, error)
        else:
            return redirect("investigation_detail", pk=investigation.pk)
    return render(request, "investigations/investigation_form.html", {"form": form})


@login_required
def investigation_detail(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    can_write = Role.rank(investigation.user_role) >= Role.rank(Role.RESPONDER)
    sides = list(investigation.sides.all())
    context = {
        "investigation": investigation,
        "can_write": can_write,
        "is_lead": investigation.user_role == Role.LEAD,
        "sides": sides,
        "side_forms": [
            (side, SideForm(initial={"label": side.label, "kind": side.kind}, prefix=side.key))
            for side in sides
        ],
        "pairs": host_pairs(investigation=investigation),
        "member_form": MemberForm(hosts=hosts_for_user(user=request.user, team=investigation.team)),
        "status_moves": [Status(s) for s in allowed_status_moves(investigation.status)],
        **evidence_context(investigation),
        **checklist_context(investigation),
        **ladders_context(investigation),
        **path_context(investigation, request.user, node=requested_node(request, investigation)),
        **timeline_context(request, investigation),
    }
    if can_write:
        context["entry_form"] = TimelineEntryForm()
    return render(request, "investigations/investigation_detail.html", context)


def evidence_context(investigation) -> dict:
    """The evidence panel: collections with their progress, findings, hosts not ready."""
    placed = {m.host for m in investigation.members.select_related("host")}
    findings = list(findings_for(investigation=investigation))
    return {
        "collections": collections_for(investigation=investigation),
        "collect_form": CollectFactsForm(),
        "unready_hosts": sorted(
            ((host, reason) for host in placed if (reason := unready_reason(host))),
            key=lambda item: item[0].name,
        ),
        "findings": findings,
        "open_findings": sum(1 for f in findings if f.status == "open"),
        "comparable_pairs": sum(
            1 for p in fact_pairs(investigation=investigation, load_facts=False) if p.complete
        ),
    }


@login_required
def investigation_edit(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    initial = {f: getattr(investigation, f) for f in EDITABLE_FIELDS}
    initial["tags"] = ", ".join(investigation.tags.values_list("name", flat=True))
    form = InvestigationForm(
        request.POST or None, initial=initial, members=team_users(team_id=investigation.team_id)
    )
    if request.method == "POST" and form.is_valid():
        try:
            investigation_update(
                investigation=investigation,
                user=request.user,
                tags=form.cleaned_data["tags"] if "tags" in form.changed_data else None,
                **form.service_fields(changed_only=True),
            )
        except ValidationError as error:
            attach_errors(form, error)
        else:
            return redirect("investigation_detail", pk=investigation.pk)
    return render(
        request,
        "investigations/investigation_form.html",
        {"form": form, "investigation": investigation},
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
                investigation=investigation, user=request.user, status=form.cleaned_data["status"]
            )
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
    return _back_to(investigation)


@require_POST
@login_required
def side_edit(request: HttpRequest, pk: int, key: str) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    side = get_object_or_404(investigation.sides, key=key)
    form = SideForm(request.POST, prefix=key)
    if not form.is_valid():
        messages.error(request, "A side needs a label and a kind.")
        return _back_to(investigation, "#environment")
    try:
        side_update(side=side, user=request.user, **form.cleaned_data)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return _back_to(investigation, "#environment")


@require_POST
@login_required
def member_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = MemberForm(
        request.POST, hosts=hosts_for_user(user=request.user, team=investigation.team)
    )
    if form.is_valid():
        data = form.cleaned_data
        try:
            member_add(
                investigation=investigation,
                user=request.user,
                host=data["host"],
                side_key=data["side"],
                role=data["role"],
            )
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
    else:
        messages.error(request, "Choose a host of the team's inventory, a side and a role.")
    return _back_to(investigation, "#environment")


@require_POST
@login_required
def member_delete(request: HttpRequest, pk: int, member_pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    member = get_object_or_404(EnvironmentMember, pk=member_pk, investigation=investigation)
    member_remove(member=member, user=request.user)
    return _back_to(investigation, "#environment")
