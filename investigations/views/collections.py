from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from investigations.access import (
    artifact_for_user,
    collection_for_user,
    finding_for_user,
    investigation_for_user,
)
from investigations.choices import ENDED_TARGET_STATUSES, Role
from investigations.forms import CollectFactsForm
from investigations.selectors import fact_pair_diffs
from investigations.services.collections import collection_request, targets_expire_overdue
from investigations.services.findings import finding_set_status
from investigations.views.pages import wants_partial


@require_POST
@login_required
def collection_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = CollectFactsForm(request.POST)
    if form.is_valid():
        try:
            collection_request(
                investigation=investigation,
                user=request.user,
                service=form.cleaned_data["service"],
                paths=form.cleaned_data["paths"],
            )
        except ValidationError as error:
            messages.error(request, " ".join(error.messages))
    else:
        messages.error(request, " ".join(m for ms in form.errors.values() for m in ms))
    return redirect(reverse("investigation_detail", args=[pk]) + "#evidence")


@login_required
def collection_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The progress of one collection; htmx polls it and stops when every target ended."""
    collection = collection_for_user(request.user, pk)
    if not wants_partial(request):
        return redirect(
            reverse("investigation_detail", args=[collection.investigation_id]) + "#evidence"
        )
    targets_expire_overdue(collection=collection)
    targets = list(collection.targets.select_related("host", "side").prefetch_related("artifacts"))
    done = all(t.status in ENDED_TARGET_STATUSES for t in targets)
    response = render(
        request,
        "investigations/_collection.html",
        {"collection": collection, "targets": targets, "done": done},
    )
    if done:
        # htmx swaps this last answer in, then stops polling.
        response.status_code = HttpResponseStopPolling.status_code
    patch_vary_headers(response, ["HX-Request"])
    return response


@login_required
def facts_diff(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    only_differences = request.GET.get("only") == "1"
    pairs = fact_pair_diffs(investigation=investigation, only_differences=only_differences)
    return render(
        request,
        "investigations/facts_diff.html",
        {"investigation": investigation, "pairs": pairs, "only_differences": only_differences},
    )


@require_POST
@login_required
def finding_status(request: HttpRequest, pk: int) -> HttpResponse:
    finding = finding_for_user(request.user, pk, Role.RESPONDER)
    try:
        finding_set_status(
            finding=finding, user=request.user, status=request.POST.get("status", "")
        )
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect(reverse("investigation_detail", args=[finding.investigation_id]) + "#findings")


@login_required
def artifact_download(request: HttpRequest, pk: int) -> FileResponse:
    artifact = artifact_for_user(request.user, pk)
    try:
        content = artifact.file.open("rb")
    except FileNotFoundError:
        raise Http404("The raw output is no longer stored.") from None
    response = FileResponse(content, as_attachment=True, filename=artifact.name)
    response["Content-Type"] = "text/plain; charset=utf-8"
    return response
