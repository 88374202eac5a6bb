"""The case page's "Diagnose": the form that starts a diagnosis run, and the run's stages
live (polled while it runs, as a ladder's page is)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from investigations.access import diagnosis_for_user, investigation_for_user
from investigations.choices import Role
from investigations.forms.diagnoses import DiagnosisForm
from investigations.models.diagnoses import DiagnosisStatus
from investigations.selectors import ladder_previous_urls
from investigations.selectors.diagnoses import (
    diagnosis_latest,
    diagnosis_progress,
    diagnosis_read,
    last_ladder_settings,
    stage_out,
)
from investigations.services.diagnoses import diagnosis_cancel, diagnosis_request
from investigations.views.forms import on_case, submit
from investigations.views.pages import form_or, wants_partial
from investigations.views.panels import panel

ACTIVE = (DiagnosisStatus.QUEUED, DiagnosisStatus.RUNNING)


def diagnosis_initial(investigation) -> dict:
    """The form's first values: the last ladder's load, else its URLs."""
    settings = last_ladder_settings(investigation=investigation)
    if settings is not None:
        return {
            "side_a_url": settings["side_a_url"],
            "side_b_url": settings["side_b_url"],
            "steps": ", ".join(str(step) for step in settings["steps"]),
            "step_seconds": settings["step_seconds"],
            "tool": settings["tool"],
        }
    urls = ladder_previous_urls(investigation=investigation)
    return {"side_a_url": urls.get("a", ""), "side_b_url": urls.get("b", "")}


def live_context(diagnosis) -> dict:
    diagnosis = diagnosis_read(diagnosis)
    percent, left = diagnosis_progress(diagnosis)
    return {
        "diagnosis": diagnosis,
        "stages": [stage_out(stage) for stage in diagnosis.stages],
        "percent": percent,
        "seconds_left": left,
        "done": diagnosis.status not in ACTIVE,
    }


@panel(
    name="diagnosis",
    title=_("Diagnosis"),
    template="investigations/_panel_diagnosis.html",
    order=45,
)
def diagnosis_panel_context(request: HttpRequest, investigation) -> dict:
    latest = diagnosis_latest(investigation=investigation)
    return {
        "diagnosis_form": form_or(
            request,
            "diagnosis_form",
            lambda: DiagnosisForm(initial=diagnosis_initial(investigation)),
        ),
        **(live_context(latest) if latest is not None else {}),
    }


@require_POST
@login_required
def diagnosis_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = DiagnosisForm(request.POST)
    return submit(
        form,
        lambda data: diagnosis_request(
            investigation=investigation, user=request.user, **form.service_fields()
        ),
        done=lambda diagnosis: redirect(
            reverse("investigation_detail", args=[investigation.pk]) + "#diagnosis"
        ),
        failed=on_case(request, investigation, panel="diagnosis", name="diagnosis_form"),
    )


@login_required
def diagnosis_live(request: HttpRequest, pk: int) -> HttpResponse:
    """The run's stages: a partial for htmx's polling (stopped once it has ended), or the
    case page's section without JavaScript."""
    diagnosis = diagnosis_for_user(request.user, pk)
    if not wants_partial(request):
        return redirect(
            reverse("investigation_detail", args=[diagnosis.investigation_id]) + "#diagnosis"
        )
    context = live_context(diagnosis)
    context["can_write"] = diagnosis.user_role != Role.VIEWER
    response = render(request, "investigations/_diagnosis_live.html", context)
    if context["done"]:
        response.status_code = HttpResponseStopPolling.status_code
    patch_vary_headers(response, ["HX-Request"])
    return response


@require_POST
@login_required
def diagnosis_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    diagnosis = diagnosis_for_user(request.user, pk, Role.RESPONDER)
    try:
        diagnosis_cancel(diagnosis=diagnosis, user=request.user)
        messages.info(request, _("Cancelling: what the diagnosis started is being stopped."))
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect(
        reverse("investigation_detail", args=[diagnosis.investigation_id]) + "#diagnosis"
    )
