from django.contrib import messages
from django.contrib.auth import get_user_model
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_http_methods, require_POST

from investigations.access import investigation_for_user
from investigations.choices import ItemStatus, Role
from investigations.forms import ChecklistAddForm, ChecklistItemForm
from investigations.models import ChecklistItem
from investigations.selectors import (
    checklist_items,
    checklist_progress,
    checklist_version,
    my_checklist_items,
)
from investigations.services.checklist import checklist_item_add, checklist_item_update
from investigations.views.pages import wants_partial

User = get_user_model()


def checklist_context(investigation) -> dict:
    items = list(checklist_items(investigation=investigation))
    settled, total = checklist_progress(items)
    return {
        "investigation": investigation,
        "items": items,
        "settled": settled,
        "total": total,
        "percent": round(100 * settled / total) if total else 0,
        "statuses": ItemStatus.choices,
        "team_members": User.objects.filter(memberships__team_id=investigation.team_id).order_by(
            "username"
        ),
        "checklist_version": checklist_version(investigation=investigation),
        "can_write": investigation.user_role != Role.VIEWER,
        "add_form": ChecklistAddForm(),
    }


def _partial(request: HttpRequest, investigation) -> HttpResponse:
    # oob: the header's progress bar is swapped along with the list.
    context = {**checklist_context(investigation), "oob": True}
    response = render(request, "investigations/_checklist.html", context)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _back(investigation) -> HttpResponse:
    return redirect(reverse("investigation_detail", args=[investigation.pk]) + "#checklist")


@login_required
@require_http_methods(["GET", "POST"])
def checklist(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the checklist (htmx polls it; 204 while unchanged). POST: add a step."""
    if request.method == "GET":
        investigation = investigation_for_user(request.user, pk)
        if not wants_partial(request):
            return _back(investigation)
        if request.GET.get("v") == checklist_version(investigation=investigation):
            response = HttpResponse(status=204)
            patch_vary_headers(response, ["HX-Request"])
            return response
        return _partial(request, investigation)
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = ChecklistAddForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError("Write what the step is.")
        checklist_item_add(
            investigation=investigation, user=request.user, title=form.cleaned_data["title"]
        )
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return _partial(request, investigation) if wants_partial(request) else _back(investigation)


@require_POST
@login_required
def checklist_item(request: HttpRequest, pk: int) -> HttpResponse:
    item = get_object_or_404(ChecklistItem.objects.select_related("investigation"), pk=pk)
    investigation = investigation_for_user(request.user, item.investigation_id, Role.RESPONDER)
    form = ChecklistItemForm(request.POST)
    changes = {}
    if form.is_valid():
        data = form.cleaned_data
        if "status" in request.POST:
            changes["status"] = data["status"] or None
        if "assignee" in request.POST:
            username = data["assignee"].strip()
            changes["assignee"] = (
                User.objects.filter(username=username).first() if username else None
            )
            if username and changes["assignee"] is None:
                messages.error(request, f"There is no user named {username!r}.")
                changes.pop("assignee")
        for field in ("notes", "na_reason"):
            if field in request.POST:
                changes[field] = data[field]
    try:
        checklist_item_update(item=item, user=request.user, **changes)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return _partial(request, investigation) if wants_partial(request) else _back(investigation)


@login_required
def my_items(request: HttpRequest) -> HttpResponse:
    items = list(my_checklist_items(user=request.user))
    return render(request, "investigations/my_items.html", {"items": items})
