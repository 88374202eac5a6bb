"""The postmortem: its page (each written part edited in place), the print view that makes a
clean PDF from the browser, the Markdown download, its action items, and its panel on the
case page."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.http import content_disposition_header
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from investigations import limits
from investigations.access import investigation_for_user
from investigations.analysis.ladder import figures, find_knee
from investigations.analysis.ladder_compare import compare_figures
from investigations.analysis.postmortem_markdown import postmortem_filename
from investigations.analysis.postmortem_markdown import postmortem_markdown as as_markdown
from investigations.choices import Role
from investigations.forms.postmortem import ActionItemForm
from investigations.selectors import ladder_cpu, ladder_points, ladder_sides, ladders_for
from investigations.selectors.postmortem import (
    postmortem_action_get,
    postmortem_actions,
    postmortem_event_choices,
    postmortem_of,
    postmortem_written,
)
from investigations.selectors.teams import team_users
from investigations.services.postmortem import (
    action_item_create,
    action_item_delete,
    action_item_update,
    postmortem_update,
)
from investigations.site_address import site_base_url
from investigations.views.pages import wants_partial
from investigations.views.panels import panel

# The parts people write: (name, heading, what to write there).
SECTIONS = {
    "summary": (
        _("Summary"),
        _("What happened, in a few sentences: what was slow, for whom, why, and how it ended."),
    ),
    "impact": (
        _("Impact"),
        _("Who and what was affected, how badly and for how long."),
    ),
    "fix": (
        _("Fix"),
        _("What was changed to remove the cause."),
    ),
    "verification": (
        _("Verification"),
        _("How the fix was verified: the same ladder run again, and the gap gone."),
    ),
    "lessons": (
        _("Lessons"),
        _("What we learnt, and the alert or check that would have caught it earlier."),
    ),
}


def _can_write(investigation) -> bool:
    return Role.rank(investigation.user_role) >= Role.rank(Role.RESPONDER)


def _section(name: str, report, failed: dict | None = None) -> dict:
    title, help_text = SECTIONS[name]
    failed = failed if failed and failed.get("section") == name else None
    value = report.text(name)
    return {
        "name": name,
        "title": title,
        "help": help_text,
        "value": value,
        "typed": failed["typed"] if failed else value,
        "errors": failed["errors"] if failed else [],
        "limit": limits.NOTES,
    }


def _events_context(investigation, report, failed: dict | None = None) -> dict:
    failed = failed if failed and failed.get("section") == "events" else None
    shown = failed["typed"] if failed else [entry.id for entry in report.events]
    return {
        "choices": postmortem_event_choices(
            investigation=investigation, chosen=report.chosen_event_ids
        ),
        "shown": set(shown),
        "errors": failed["errors"] if failed else [],
    }


def _actions_context(investigation, failed_action: dict | None = None) -> dict:
    return {
        "actions": postmortem_actions(investigation=investigation),
        "team_members": team_users(team_id=investigation.team_id),
        "failed_action": failed_action,
        "title_limit": limits.ENTRY,
    }


def _page_context(request: HttpRequest, investigation, **failed) -> dict:
    report = postmortem_of(investigation)
    return {
        "investigation": investigation,
        "report": report,
        "can_write": _can_write(investigation),
        "sections": {name: _section(name, report, failed.get("text")) for name in SECTIONS},
        "events": _events_context(investigation, report, failed.get("text")),
        **_actions_context(investigation, failed.get("action")),
        **_rerun_context(report),
    }


def _page(request: HttpRequest, investigation, *, status: int = 200, **failed) -> HttpResponse:
    context = _page_context(request, investigation, **failed)
    response = render(request, "investigations/postmortem.html", context, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


@login_required
@require_http_methods(["GET", "POST"])
def postmortem(request: HttpRequest, pk: int) -> HttpResponse:
    """GET: the postmortem page. POST (`section` and its field): save one written part, or
    the timeline entries it tells; htmx gets the part back, in place."""
    if request.method == "GET":
        return _page(request, investigation_for_user(request.user, pk))
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    section = request.POST.get("section", "")
    not_ids = False
    if section in SECTIONS:
        typed = request.POST.get(section, "")
        fields = {section: typed}
    elif section == "events":
        raw = request.POST.getlist("events")
        typed = [int(v) for v in raw if v.isascii() and v.isdigit() and len(v) <= 18]
        not_ids = len(typed) != len(raw)
        fields = {"events": typed}
    else:
        return HttpResponse(status=400)
    failed = None
    try:
        if not_ids:
            raise ValidationError({"events": _("Give a list of timeline entry ids.")})
        postmortem_update(investigation=investigation, user=request.user, **fields)
    except ValidationError as error:
        failed = {"section": section, "typed": typed, "errors": error.messages}
    status = 400 if failed else 200
    if not wants_partial(request):
        if failed:
            return _page(request, investigation, status=400, text=failed)
        return redirect(reverse("postmortem", args=[pk]) + f"#pm-{section}")
    report = postmortem_of(investigation)
    context = {"investigation": investigation, "report": report, "can_write": True}
    if section == "events":
        context["events"] = _events_context(investigation, report, failed)
        template = "investigations/_postmortem_events.html"
    else:
        context["section"] = _section(section, report, failed)
        template = "investigations/_postmortem_text.html"
    response = render(request, template, context, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _actions_answer(request: HttpRequest, investigation, failed_action=None) -> HttpResponse:
    """The action items again: the table in place (htmx), else the page."""
    status = 400 if failed_action else 200
    if not wants_partial(request):
        if failed_action:
            return _page(request, investigation, status=400, action=failed_action)
        return redirect(reverse("postmortem", args=[investigation.pk]) + "#pm-actions")
    context = {
        "investigation": investigation,
        "can_write": True,
        **_actions_context(investigation, failed_action),
    }
    response = render(request, "investigations/_postmortem_actions.html", context, status=status)
    patch_vary_headers(response, ["HX-Request"])
    return response


def _action_fields(request: HttpRequest, form: ActionItemForm) -> dict:
    """The fields the form sent (an absent one is left as it is)."""
    data = form.cleaned_data
    return {name: data[name] for name in ("title", "owner", "due", "done") if name in request.POST}


def _failed_action(key, form: ActionItemForm, error: ValidationError | None = None) -> dict:
    errors = [m for messages in form.errors.values() for m in messages]
    if error is not None:
        errors += error.messages
    return {"key": key, "errors": errors, "data": form.data}


@require_POST
@login_required
def postmortem_action_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = ActionItemForm(request.POST)
    if not form.is_valid():
        return _actions_answer(request, investigation, _failed_action("new", form))
    fields = _action_fields(request, form)
    fields.pop("done", None)
    try:
        action_item_create(investigation=investigation, user=request.user, **fields)
    except ValidationError as error:
        return _actions_answer(request, investigation, _failed_action("new", form, error))
    return _actions_answer(request, investigation)


def _action(request: HttpRequest, pk: int, action_id: int):
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    item = postmortem_action_get(investigation=investigation, action_id=action_id)
    if item is None:
        raise Http404
    return investigation, item


@require_POST
@login_required
def postmortem_action(request: HttpRequest, pk: int, action_id: int) -> HttpResponse:
    """Change an action item: its title, owner and due date, or done."""
    investigation, item = _action(request, pk, action_id)
    form = ActionItemForm(request.POST)
    if not form.is_valid():
        return _actions_answer(request, investigation, _failed_action(item.pk, form))
    fields = _action_fields(request, form)
    if fields.get("done", False) is None:
        fields.pop("done")
    try:
        action_item_update(item=item, user=request.user, **fields)
    except ValidationError as error:
        return _actions_answer(request, investigation, _failed_action(item.pk, form, error))
    return _actions_answer(request, investigation)


@require_POST
@login_required
def postmortem_action_delete(request: HttpRequest, pk: int, action_id: int) -> HttpResponse:
    investigation, item = _action(request, pk, action_id)
    action_item_delete(item=item, user=request.user)
    return _actions_answer(request, investigation)


def _rerun_context(report) -> dict:
    """The newest rerun against the ladder it ran again: the verdict, table and charts, as
    the rerun's page shows them (_ladder_compare.html)."""
    check = report.rerun
    if check is None:
        return {}
    return {
        "comparison": check.comparison,
        "comparison_before": check.before.pk,
        "comparison_after": check.after.pk,
        "compare_charts": compare_figures(
            check.points["before"],
            check.points["after"],
            check.labels,
            {"before": f"#{check.before.pk}", "after": f"#{check.after.pk}"},
            check.comparison.load,
            _("load (%(kind)s)") % {"kind": check.after.get_load_kind_display()},
        ),
    }


def _ladder_charts(investigation) -> list[dict]:
    """Each ladder's charts (throughput, latency, CPU against load), oldest ladder first, as
    the ladder's page draws them; a chart without a single value is left out."""
    drawn = []
    for ladder in reversed(list(ladders_for(investigation=investigation))):
        sides = ladder_sides(ladder=ladder)
        points = ladder_points(sides)
        if not any(points.values()):
            continue
        knees = {side: find_knee(side_points) for side, side_points in points.items()}
        labels = {side.side.key: side.side.label for side in sides}
        load_title = _("load (%(kind)s)") % {"kind": ladder.get_load_kind_display()}
        charts = [
            {"id": f"ladder-{ladder.pk}-{name}", "figure": figure}
            for name, figure in figures(
                points, ladder_cpu(sides=sides), knees, labels, load_title
            ).items()
            if any(value is not None for trace in figure["data"] for value in trace["y"])
        ]
        drawn.append({"ladder": ladder, "charts": charts})
    return drawn


@require_safe
@login_required
def postmortem_print(request: HttpRequest, pk: int) -> HttpResponse:
    """The write-up alone, laid out for paper: the browser's Print makes the PDF."""
    investigation = investigation_for_user(request.user, pk)
    report = postmortem_of(investigation)
    context = {
        "investigation": investigation,
        "report": report,
        "sections": SECTIONS,
        "ladder_charts": _ladder_charts(investigation),
        **_rerun_context(report),
    }
    return render(request, "investigations/postmortem_print.html", context)


def markdown_response(report, request: HttpRequest | None) -> HttpResponse:
    """The Markdown export as a download named after the case (the page's link and the
    API answer alike), its links whole: PERFCASE_BASE_URL's, else the request's address."""
    response = HttpResponse(
        as_markdown(report, base_url=site_base_url(request)),
        content_type="text/markdown; charset=utf-8",
    )
    response["Content-Disposition"] = content_disposition_header(True, postmortem_filename(report))
    return response


@require_safe
@login_required
def postmortem_markdown(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    return markdown_response(postmortem_of(investigation), request)


@panel(
    name="postmortem",
    title=_("Postmortem"),
    template="investigations/_panel_postmortem.html",
    order=95,
)
def postmortem_panel_context(request: HttpRequest, investigation) -> dict:
    open_actions = [a for a in postmortem_actions(investigation=investigation) if not a.done]
    count = len(open_actions)
    note = ngettext("%(count)d open action", "%(count)d open actions", count) % {"count": count}
    return {
        "postmortem_written": postmortem_written(investigation=investigation),
        "open_actions": open_actions,
        "heading_note": note if count else "",
    }
