from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from investigations.access import investigation_for_user, ladder_for_user
from investigations.analysis.ladder import figures, find_knee
from investigations.analysis.ladder_compare import compare_figures
from investigations.choices import ENDED_LADDER_STATUSES, LadderStatus, Role
from investigations.forms import ImportForm, LadderForm
from investigations.import_reports import read_summary
from investigations.models import Ladder
from investigations.selectors import (
    ladder_choices,
    ladder_cpu,
    ladder_points,
    ladder_previous_urls,
    ladder_refresh_progress,
    ladder_rows,
    ladder_sides,
    ladders_for,
)
from investigations.selectors.captures import ladder_captures
from investigations.selectors.ladder_compare import ladder_comparison
from investigations.selectors.profiles import ladder_profiles
from investigations.services.ladder_imports import ladder_import, ladder_uploads_read
from investigations.services.ladder_reruns import ladder_rerun
from investigations.services.ladder_results import ladder_analysis
from investigations.services.ladders import ladder_cancel, ladder_request
from investigations.views.forms import on_case, submit
from investigations.views.pages import wants_partial
from investigations.views.panels import panel


def ladders_context(investigation, *, ladder_form=None, import_form=None) -> dict:
    urls = ladder_previous_urls(investigation=investigation)
    initial = {"side_a_url": urls.get("a", ""), "side_b_url": urls.get("b", "")} if urls else {}
    return {
        "ladders": ladders_for(investigation=investigation, limit=10),
        "ladder_form": ladder_form or LadderForm(initial=initial),
        "import_form": import_form
        or ImportForm(ladders=ladder_choices(investigation=investigation)),
    }


@panel(
    name="ladders",
    title=_("Ladder load tests"),
    template="investigations/_ladders.html",
    order=60,
)
def ladders_panel_context(request: HttpRequest, investigation) -> dict:
    failed = getattr(request, "failed_forms", {})
    return ladders_context(
        investigation,
        ladder_form=failed.get("ladder_form"),
        import_form=failed.get("import_form"),
    )


@require_POST
@login_required
def ladder_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = LadderForm(request.POST)
    return submit(
        form,
        lambda data: ladder_request(
            investigation=investigation, user=request.user, **form.service_fields()
        ),
        done=lambda ladder: redirect("ladder_detail", pk=ladder.pk),
        failed=on_case(request, investigation, panel="ladders", name="ladder_form"),
    )


@require_POST
@login_required
def ladder_import_view(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = ImportForm(
        request.POST, request.FILES, ladders=ladder_choices(investigation=investigation)
    )

    def imported(ladder) -> HttpResponse:
        count, side = len(form.cleaned_data["file"]), form.cleaned_data["side"]
        messages.success(
            request,
            ngettext(
                "Imported %(count)d file onto side %(side)s.",
                "Imported %(count)d files onto side %(side)s.",
                count,
            )
            % {"count": count, "side": side.upper()}
            + (" " + read_summary(getattr(ladder, "read_report", None))).rstrip(),
        )
        return redirect("ladder_detail", pk=ladder.pk)

    return submit(
        form,
        lambda data: ladder_import(
            investigation=investigation,
            user=request.user,
            side_key=data["side"],
            format=data["format"],
            files=ladder_uploads_read(data["file"]),
            ladder=data["ladder"],
            load=data["load"],
        ),
        done=imported,
        failed=on_case(request, investigation, panel="ladders", name="import_form"),
    )


def _progress_context(ladder: Ladder) -> dict:
    """What the polled progress table reads."""
    ladder_refresh_progress(ladder=ladder)
    return {
        "ladder": ladder,
        "sides": ladder_sides(ladder=ladder),
        "done": ladder.status in ENDED_LADDER_STATUSES,
    }


def _detail_context(ladder: Ladder) -> dict:
    context = _progress_context(ladder)
    sides = context["sides"]
    # What changes as the ladder runs: while it is the same, a poll answers 204.
    version = "-".join(
        [ladder.status, str(ladder.cancel_requested_at is not None)]
        + [f"{s.status}.{s.current_step}.{len(s.steps.all())}" for s in sides]
    )
    points = ladder_points(sides)
    knees = {side: find_knee(side_points) for side, side_points in points.items()}
    labels = {side.side.key: side.side.label for side in sides}
    cpu = ladder_cpu(sides=sides)
    rows = ladder_rows(ladder=ladder, sides=sides)
    return {
        **context,
        "investigation": ladder.investigation,
        "analysis": ladder.analysis or ladder_analysis(ladder=ladder, points=points),
        "knees": knees,
        "rows": rows,
        # Steps a side began well after its planned moment, with what was measured of why.
        "late_rows": [row for row in rows if row.late_start],
        # A chart without a single value (CPU, for imported results) is left out.
        "charts": {
            name: figure
            for name, figure in figures(
                points,
                cpu,
                knees,
                labels,
                _("load (%(kind)s)") % {"kind": ladder.get_load_kind_display()},
            ).items()
            if any(value is not None for trace in figure["data"] for value in trace["y"])
        },
        "can_write": ladder.user_role != Role.VIEWER,
        "profiles": ladder_profiles(ladder=ladder),
        "captures": ladder_captures(ladder=ladder),
        "version": version,
        "finished_steps": min((len(s.steps.all()) for s in sides), default=0),
        "can_rerun": ladder.status in ENDED_LADDER_STATUSES
        and ladder.status != LadderStatus.IMPORTED
        and all(side.url and not side.source for side in sides),
        "reruns": list(ladder.reruns.values_list("pk", flat=True)),
        **_comparison_context(ladder, sides),
    }


def _comparison_context(ladder: Ladder, sides) -> dict:
    """A rerun's comparison with the ladder it ran again: the verdict, the table and the
    charts of both runs per side."""
    if ladder.rerun_of_id is None:
        return {}
    comparison, points = ladder_comparison(before=ladder.rerun_of, after=ladder, sides=sides)
    labels = {side.side.key: side.side.label for side in sides}
    return {
        "comparison": comparison,
        "comparison_before": ladder.rerun_of_id,
        "comparison_after": ladder.pk,
        "compare_charts": compare_figures(
            points["before"],
            points["after"],
            labels,
            {"before": f"#{ladder.rerun_of_id}", "after": f"#{ladder.pk}"},
            comparison.load,
            _("load (%(kind)s)") % {"kind": ladder.get_load_kind_display()},
        ),
    }


@login_required
def ladder_detail(request: HttpRequest, pk: int) -> HttpResponse:
    ladder = ladder_for_user(request.user, pk)
    if wants_partial(request):
        context = _detail_context(ladder)
        if request.GET.get("v") == context["version"] and not context["done"]:
            response = HttpResponse(status=204)
        else:
            response = render(request, "investigations/_ladder_live.html", context)
        if context["done"]:
            # The final answer is swapped in, then htmx stops polling.
            response.status_code = HttpResponseStopPolling.status_code
    else:
        response = render(request, "investigations/ladder_detail.html", _detail_context(ladder))
    patch_vary_headers(response, ["HX-Request"])
    return response


@require_POST
@login_required
def ladder_rerun_view(request: HttpRequest, pk: int) -> HttpResponse:
    """Run the ladder again with the same settings: the new ladder's page, or this one's
    with why not."""
    ladder = ladder_for_user(request.user, pk, Role.RESPONDER)
    try:
        rerun = ladder_rerun(ladder=ladder, user=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
        return redirect("ladder_detail", pk=ladder.pk)
    messages.success(
        request,
        _("Ladder #%(ladder)s runs ladder #%(before)s again with the same settings.")
        % {"ladder": rerun.pk, "before": ladder.pk},
    )
    return redirect("ladder_detail", pk=rerun.pk)


@require_POST
@login_required
def ladder_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    ladder = ladder_for_user(request.user, pk, Role.RESPONDER)
    try:
        ladder_cancel(ladder=ladder, user=request.user)
        messages.info(request, _("Cancelling: the load tools are being stopped on both sides."))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("ladder_detail", pk=ladder.pk)
