from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import FileResponse, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST
from django_htmx.http import HttpResponseStopPolling

from investigations.access import (
    artifact_for_user,
    collection_for_user,
    finding_for_user,
    investigation_for_user,
)
from investigations.choices import ENDED_TARGET_STATUSES, CollectionKind, Role
from investigations.connections import unready_reason
from investigations.forms import CollectFactsForm, start_ids
from investigations.kinds import kind_named
from investigations.runs import plan_for
from investigations.selectors import (
    collection_targets,
    collections_for,
    fact_pair_diffs,
    fact_pairs,
    findings_for,
    host_pairs,
)
from investigations.selectors.findings import STORY_PAIR, story_findings_count
from investigations.selectors.root_causes import confirmed_root_cause_ids
from investigations.services.collections import collection_cancel, collection_request
from investigations.services.findings import finding_set_status
from investigations.views.baselines import table_context as baseline_table_context
from investigations.views.evidence_items import stored_file
from investigations.views.forms import on_case, submit
from investigations.views.pages import form_or, wants_partial
from investigations.views.panels import panel


@panel(
    name="evidence",
    title=_("Evidence"),
    template="investigations/_panel_evidence.html",
    order=50,
)
def evidence_context(request: HttpRequest, investigation) -> dict:
    """The evidence panel: collections with their progress, hosts not ready, pairs to compare."""
    pairs = host_pairs(investigation=investigation)
    placed = {member.host for pair in pairs for member in pair.members if member}
    return {
        "pairs": pairs,
        "collections": collections_for(investigation=investigation),
        "collect_form": form_or(
            request, "collect_form", lambda: CollectFactsForm(auto_id=start_ids("facts"))
        ),
        "unready_hosts": sorted(
            ((host, reason) for host in placed if (reason := unready_reason(host))),
            key=lambda item: item[0].name,
        ),
        # Findings recorded from the story, which no host facts can back while none is placed.
        "story_findings": 0 if pairs else story_findings_count(investigation=investigation),
        "comparable_pairs": sum(
            1 for p in fact_pairs(investigation=investigation, load_facts=False) if p.complete
        ),
    }


@panel(
    name="findings",
    title=_("Findings"),
    template="investigations/_panel_findings.html",
    order=70,
)
def findings_context(request: HttpRequest, investigation) -> dict:
    findings = list(findings_for(investigation=investigation))
    count = sum(1 for f in findings if f.status == "open")
    return {
        "findings": findings,
        "story_pair": STORY_PAIR,
        # What the rules had to compare: pairs with facts from both hosts.
        "compared": [
            pair
            for pair in fact_pairs(investigation=investigation, load_facts=False)
            if pair.complete
        ]
        if not findings
        else [],
        "sides": list(investigation.sides.all()),
        "confirmed_root_causes": confirmed_root_cause_ids(investigation=investigation),
        "heading_note": gettext("%(count)s open") % {"count": count} if count else "",
    }


# Where each kind's start form lives on the investigation page: its panel, and the name
# the panel's context reads it by (`form_or`), so a form that failed is drawn there again.
def start_form_of(kind: str) -> tuple[str, str]:
    """The panel a kind's start form lives in and its name there (its descriptor says);
    the facts form's for a kind that names none."""
    try:
        named = kind_named(kind)
    except LookupError:
        named = kind_named(CollectionKind.FACTS)
    if not named.start_form:
        named = kind_named(CollectionKind.FACTS)
    return named.panel, named.start_form


@require_POST
@login_required
def collection_new(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    kind = request.POST.get("kind") or CollectionKind.FACTS
    try:
        plan = plan_for(kind)
    except LookupError:
        messages.error(request, gettext("Choose a kind of evidence to collect."))
        return redirect(reverse("investigation_detail", args=[pk]) + "#evidence")
    # The kind's plan validates its own parameters: the form the page showed.
    form = plan.parameters_form(data=request.POST, auto_id=start_ids(kind))
    fields = form.base_fields
    panel_name, name = start_form_of(kind)
    return submit(
        form,
        lambda data: collection_request(
            investigation=investigation,
            user=request.user,
            kind=kind,
            parameters={
                field_name: (
                    request.POST.getlist(field_name)
                    if isinstance(field, forms.MultipleChoiceField)
                    else request.POST.get(field_name, "")
                )
                for field_name, field in fields.items()
            },
        ),
        done=lambda collection: redirect(reverse("investigation_detail", args=[pk]) + "#evidence"),
        failed=on_case(request, investigation, panel=panel_name, name=name),
    )


@require_POST
@login_required
def collection_cancel_view(request: HttpRequest, pk: int) -> HttpResponse:
    collection = collection_for_user(request.user, pk, Role.RESPONDER)
    try:
        collection_cancel(collection=collection, user=request.user)
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    else:
        messages.success(request, gettext("Cancel requested: the hosts stop what was started."))
    return redirect(
        reverse("investigation_detail", args=[collection.investigation_id]) + "#evidence"
    )


@login_required
def collection_status(request: HttpRequest, pk: int) -> HttpResponse:
    """The progress of one collection; htmx polls it and stops when every target ended."""
    collection = collection_for_user(request.user, pk)
    if not wants_partial(request):
        return redirect(
            reverse("investigation_detail", args=[collection.investigation_id]) + "#evidence"
        )
    targets = collection_targets(collection=collection)
    done = all(t.status in ENDED_TARGET_STATUSES for t in targets)
    can_write = Role.rank(collection.user_role) >= Role.rank(Role.RESPONDER)
    response = render(
        request,
        "investigations/_collection.html",
        {"collection": collection, "targets": targets, "done": done, "can_write": can_write},
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
        {
            "investigation": investigation,
            "pairs": pairs,
            "only_differences": only_differences,
            # Beside the facts, the benchmarks: the other half of "are the sides the same?"
            **baseline_table_context(investigation),
        },
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
    return stored_file(
        artifact.file,
        filename=artifact.name,
        gone=_("The raw output is no longer stored."),
        content_type="text/plain; charset=utf-8",
    )
