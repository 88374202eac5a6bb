from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_POST

from investigations.access import investigation_for_user
from investigations.choices import ActionKind, EventKind, Role
from investigations.forms import TimelineEditForm, TimelineEntryForm
from investigations.selectors import (
    STORY,
    timeline_event_get,
    timeline_version,
    timeline_window,
)
from investigations.services.timeline import (
    timeline_entry_add,
    timeline_entry_delete,
    timeline_entry_edit,
)
from investigations.views.case_page import investigation_page
from investigations.views.forms import submit
from investigations.views.pages import query_id, wants_partial
from investigations.views.panels import panel


def timeline_context(
    request: HttpRequest, investigation, *, kind: str | None = None, before: int | None = None
) -> dict:
    if kind is None:
        kind = request.GET.get("kind", "")
    kind = kind if kind in (*EventKind.values, STORY) else ""
    window = timeline_window(
        investigation=investigation, kind=kind, before=before, size=settings.TIMELINE_WINDOW
    )
    return {
        "investigation": investigation,
        # The newest events (a window of them: a long case is drawn a part at a time).
        "events": window.items,
        "earlier": window.earlier,
        "cursor": window.cursor,
        "kind": kind,
        # "Story": what people did and found, without the checklist's bookkeeping.
        "kinds": [(STORY, _("Story")), *EventKind.choices],
        "version": timeline_version(investigation=investigation),
        "poll_ms": settings.TIMELINE_POLL_MS,
        # Notes and actions their author or a lead may edit and delete.
        "may_change": {
            "user_id": request.user.pk,
            "lead": getattr(investigation, "user_role", None) == Role.LEAD,
        },
        "failed_event": getattr(request, "failed_event", None),
        "action_choices": ActionKind.choices,
    }


@panel(
    name="timeline", title=_("Timeline"), template="investigations/_panel_timeline.html", order=90
)
def timeline_panel_context(request: HttpRequest, investigation) -> dict:
    return {**timeline_context(request, investigation), "entry_form": TimelineEntryForm()}


@login_required
@require_http_methods(["GET", "POST"])
def timeline(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the event list (htmx polls it; 204 while nothing changed). POST: add an entry."""
    if request.method == "POST":
        return _timeline_add(request, pk)
    investigation = investigation_for_user(request.user, pk)
    if not wants_partial(request):
        url = reverse("investigation_detail", args=[pk])
        kind = request.GET.get("kind", "")
        known = kind in (*EventKind.values, STORY)
        return redirect(f"{url}?kind={kind}#timeline" if known else url)
    before = query_id(request, "before")
    if before is not None:  # an earlier window, in place of the button that asked for it
        response = render(
            request,
            "investigations/_timeline_window.html",
            timeline_context(request, investigation, before=before),
        )
    elif request.GET.get("v") == timeline_version(investigation=investigation):
        response = HttpResponse(status=204)
    else:
        response = render(
            request, "investigations/_timeline_list.html", timeline_context(request, investigation)
        )
    patch_vary_headers(response, ["HX-Request"])
    return response


def _timeline_add(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)

    def form_again(form) -> HttpResponse:
        if wants_partial(request):
            kind = request.POST.get("filter_kind")
            context = timeline_context(request, investigation, kind=kind)
            context.update({"entry_form": form, "oob": True})
            return render(request, "investigations/_timeline_form.html", context)
        # Without JavaScript: the form again on its own page, with what was typed.
        return render(
            request,
            "investigations/timeline_entry.html",
            {"investigation": investigation, "entry_form": form},
        )

    def added(entry) -> HttpResponse:
        if wants_partial(request):  # a fresh form, of the kind just added
            return form_again(TimelineEntryForm(initial={"kind": request.POST.get("kind")}))
        return redirect(reverse("investigation_detail", args=[pk]) + "#timeline")

    return submit(
        TimelineEntryForm(request.POST),
        lambda data: timeline_entry_add(
            investigation=investigation,
            user=request.user,
            kind=data["kind"],
            action=data["action"],
            occurred_at=data["occurred_at"],
            summary=data["summary"],
        ),
        done=added,
        failed=form_again,
    )


def _changed_entry(request: HttpRequest, pk: int):
    event = timeline_event_get(event_id=pk)
    if event is None:
        raise Http404
    investigation = investigation_for_user(request.user, event.investigation_id, Role.RESPONDER)
    return event, investigation


def _after_change(request: HttpRequest, investigation, *, status: int = 200, **extra):
    if wants_partial(request):
        context = {**timeline_context(request, investigation), **extra}
        return render(request, "investigations/_timeline_list.html", context, status=status)
    if status != 200:
        request.failed_event = extra.get("failed_event")
        return investigation_page(request, investigation, status=status)
    return redirect(reverse("investigation_detail", args=[investigation.pk]) + "#timeline")


@require_POST
@login_required
def timeline_entry_edit_view(request: HttpRequest, pk: int) -> HttpResponse:
    """A note or an action changed by its author or a lead; the old text stays visible."""
    event, investigation = _changed_entry(request, pk)
    return submit(
        TimelineEditForm(request.POST),
        lambda data: timeline_entry_edit(
            event=event,
            user=request.user,
            summary=data["summary"],
            occurred_at=data["occurred_at"],
            action=data["action"] or "",
        ),
        done=lambda edited: _after_change(request, investigation),
        failed=lambda form: _after_change(
            request, investigation, status=400, failed_event={"pk": event.pk, "form": form}
        ),
    )


@require_POST
@login_required
def timeline_entry_delete_view(request: HttpRequest, pk: int) -> HttpResponse:
    event, investigation = _changed_entry(request, pk)
    timeline_entry_delete(event=event, user=request.user)
    return _after_change(request, investigation)
