from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_POST

from investigations.access import investigation_for_user
from investigations.choices import ItemStatus, Role
from investigations.forms import ChecklistAddForm, ChecklistItemForm
from investigations.selectors import (
    checklist_item_get,
    checklist_items,
    checklist_progress,
    checklist_version,
    my_checklist_items,
    team_users,
)
from investigations.selectors.baselines import baseline_summary
from investigations.services.checklist import (
    assignee_named,
    checklist_item_add,
    checklist_item_update,
)
from investigations.views.case_page import investigation_page
from investigations.views.forms import submit
from investigations.views.pages import form_failed, form_or, wants_partial
from investigations.views.panels import panel
from investigations.views.progress import progress_bar


def checklist_context(investigation, request: HttpRequest | None = None) -> dict:
    items = list(checklist_items(investigation=investigation))
    return {
        "investigation": investigation,
        "items": items,
        **progress_bar(*checklist_progress(items)),
        "statuses": ItemStatus.choices,
        "team_members": team_users(team_id=investigation.team_id),
        "checklist_version": checklist_version(investigation=investigation),
        "can_write": investigation.user_role != Role.VIEWER,
        "add_form": form_or(request, "checklist_add_form", ChecklistAddForm),
        # A step whose change failed: its own form again, with the errors and the text typed.
        "failed_item": getattr(request, "failed_item", None),
        # The "same sides" step shows the baseline beside the facts diff.
        "baseline_counts": baseline_summary(investigation=investigation),
    }


@panel(name="checklist", title=_("Checklist"), template="investigations/_checklist.html", order=80)
def checklist_panel_context(request: HttpRequest, investigation) -> dict:
    return checklist_context(investigation, request)


def _partial(request: HttpRequest, investigation, *, status: int = 200, **extra) -> HttpResponse:
    # oob: the header's progress bar is swapped along with the list.
    context = {**checklist_context(investigation, request), "oob": True, **extra}
    response = render(request, "investigations/_checklist.html", context, status=status)
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

    def failed(form) -> HttpResponse:
        form_failed(request, checklist_add_form=form)
        return _failed(request, investigation)

    return submit(
        ChecklistAddForm(request.POST),
        lambda data: checklist_item_add(
            investigation=investigation, user=request.user, title=data["title"]
        ),
        done=lambda item: _done(request, investigation),
        failed=failed,
    )


@require_POST
@login_required
def checklist_item(request: HttpRequest, pk: int) -> HttpResponse:
    item = checklist_item_get(item_id=pk)
    if item is None:
        raise Http404
    investigation = investigation_for_user(request.user, item.investigation_id, Role.RESPONDER)
    form = ChecklistItemForm(request.POST)

    def failed(form) -> HttpResponse:
        # The step's own form again, with the errors and the text typed.
        request.failed_item = {
            "pk": item.pk,
            "errors": [m for ms in form.errors.values() for m in ms],
            "notes": request.POST.get("notes", ""),
            "na_reason": request.POST.get("na_reason", ""),
        }
        return _failed(request, investigation)

    return submit(
        form,
        lambda data: checklist_item_update(item=item, user=request.user, **_changes(request, form)),
        done=lambda saved: _done(request, investigation),
        failed=failed,
    )


def _done(request: HttpRequest, investigation) -> HttpResponse:
    if not wants_partial(request):
        return _back(investigation)
    return _partial(request, investigation)


def _failed(request: HttpRequest, investigation) -> HttpResponse:
    """A checklist form that failed, shown with its errors where it was: the panel (htmx) or
    the whole page at the panel (without JavaScript)."""
    if wants_partial(request):
        return _partial(request, investigation, status=400)
    return investigation_page(request, investigation, status=400)


def _changes(request: HttpRequest, form: ChecklistItemForm) -> dict:
    """What the person changed. A field that still shows the value the page was drawn with
    (status_was, assignee_was) is not a change: a stale page cannot undo a colleague's."""
    data, changes = form.cleaned_data, {}
    for field in ("status", "assignee"):
        if field in request.POST and request.POST.get(f"{field}_was") != data[field]:
            changes[field] = data[field]
    if "status" in changes:
        changes["status"] = changes["status"] or None
    if "assignee" in changes:
        changes["assignee"] = assignee_named(username=changes["assignee"])
    for field in ("notes", "na_reason"):
        if field in request.POST:
            changes[field] = data[field]
    return changes


@login_required
def my_items(request: HttpRequest) -> HttpResponse:
    items = list(my_checklist_items(user=request.user))
    return render(request, "investigations/my_items.html", {"items": items})
