from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from investigations.access import investigation_for_user
from investigations.analysis.ladder import figures, find_knee
from investigations.choices import ENDED_LADDER_STATUSES, Role
from investigations.forms import ImportForm, LadderForm, attach_errors
from investigations.models import Ladder
from investigations.selectors import ladder_rows, ladders_for
from investigations.services.ladder_imports import ladder_import
from investigations.services.ladders import (
    ladder_analysis,
    ladder_cancel,
    ladder_points,
    ladder_request,
    ladders_expire_overdue,
)
from investigations.views.pages import wants_partial


def ladders_context(investigation, *, ladder_form=None, import_form=None) -> dict:
    ladders = ladders_for(investigation=investigation)[:10]
    previous = investigation.ladders.exclude(sides__url="").prefetch_related("sides__side").first()
    initial = {}
    if previous is not None:
        urls = {side.side.key: side.url for side in previous.sides.all()}
        initial = {"side_a_url": urls.get("a", ""), "side_b_url": urls.get("b", "")}
    return {
        "ladders": ladders,
        "ladder_form": ladder_form or LadderForm(initial=initial),
        "import_form": import_form or ImportForm(ladders=investigation.ladders.all()),
    }


def _ladder_for_user(user, pk: int, role: str = Role.VIEWER) -> Ladder:
    ladder = get_object_or_404(Ladder.objects.select_related("investigation"), pk=pk)
    ladder.investigation = investigation_for_user(user, ladder.investigation_id, role)
    return ladder


@require_POST
@login_required
def ladder_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = LadderForm(request.POST)
    if form.is_valid():
        try:
            ladder = ladder_request(
                investigation=investigation, user=request.user, **form.service_fields()
            )
        except ValidationError as error:
            attach_errors(form, error)
        else:
            return redirect("ladder_detail", pk=ladder.pk)
    for field, errors in form.errors.items():
        label = form.fields[field].label if field in form.fields else ""
        messages.error(request, f"{label}: {' '.join(errors)}" if label else " ".join(errors))
    return redirect(reverse("investigation_detail", args=[pk]) + "#ladders")


@require_POST
@login_required
def ladder_import_view(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = ImportForm(request.POST, request.FILES, ladders=investigation.ladders.all())
    if form.is_valid():
        data = form.cleaned_data
        try:
            ladder = ladder_import(
                investigation=investigation,
                user=request.user,
                side_key=data["side"],
                format=data["format"],
                files=form.files_read(),
                ladder=data["ladder"],
                load=data["load"],
            )
        except ValidationError as error:
            attach_errors(form, error)
        else:
            count = len(data["file"])
            messages.success(
                request,
                f"Imported {count} file{'s' if count != 1 else ''} onto side "
                f"{data['side'].upper()}.",
            )
            return redirect("ladder_detail", pk=ladder.pk)
    for errors in form.errors.values():
        messages.error(request, " ".join(errors))
    return redirect(reverse("investigation_detail", args=[pk]) + "#ladders")


def _detail_context(ladder: Ladder) -> dict:
    ladders_expire_overdue()
    # Only the fields a run changes: the investigation (with the user's role) stays.
    ladder.refresh_from_db(fields=["status", "analysis", "cancel_requested_at", "finished_at"])
    sides = list(ladder.sides.select_related("side", "load_generator").prefetch_related("steps"))
    points = ladder_points(ladder)
    knees = {side: find_knee(side_points) for side, side_points in points.items()}
    analysis = ladder.analysis or ladder_analysis(ladder)
    labels = {side.side.key: side.side.label for side in sides}
    cpu = {side.side.key: [step.cpu for step in side.steps.all()] for side in sides}
    return {
        "ladder": ladder,
        "investigation": ladder.investigation,
        "sides": sides,
        "analysis": analysis,
        "knees": knees,
        "rows": ladder_rows(ladder=ladder),
        # A chart without a single value (CPU, for imported results) is left out.
        "charts": {
            name: figure
            for name, figure in figures(
                points, cpu, knees, labels, f"load ({ladder.get_load_kind_display()})"
            ).items()
            if any(value is not None for trace in figure["data"] for value in trace["y"])
        },
        "done": ladder.status in ENDED_LADDER_STATUSES,
        "can_write": ladder.investigation.user_role != Role.VIEWER,
    }


@login_required
def ladder_detail(request: HttpRequest, pk: int) -> HttpResponse:
    ladder = _ladder_for_user(request.user, pk)
    context = _detail_context(ladder)
    if wants_partial(request):
        response = render(request, "investigations/_ladder_progress.html", context)
        if context["done"]:
            # The final answer is swapped in, then htmx stops polling (and the page reloads
            # its charts, see the template).
            response.status_code = HttpResponseStopPolling.status_code
    else:
        response = render(request, "investigations/ladder_detail.html", context)
    patch_vary_headers(response, ["HX-Request"])
    return response


@require_POST
@login_required
def ladder_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    ladder = _ladder_for_user(request.user, pk, Role.RESPONDER)
    try:
        ladder_cancel(ladder=ladder, user=request.user)
        messages.info(request, "Cancelling: the load tools are being stopped on both sides.")
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("ladder_detail", pk=ladder.pk)
