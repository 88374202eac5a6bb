"""The baseline pack: its panel (run it, the table), its page (the table, the chart of
the ratios, imports), and the table's exports."""

import math

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST, require_safe

from collectors.baseline import GROUP_LABELS
from investigations.access import investigation_for_user
from investigations.analysis.baseline import (
    DEFAULT_MARGIN,
    NOISY_SPREAD,
    ratio_figure,
    verdict_counts,
)
from investigations.choices import CollectionKind, HostRole, Role
from investigations.downloads import baseline_download
from investigations.forms.baselines import BaselineImportForm
from investigations.forms.collections import start_ids
from investigations.import_reports import read_summary
from investigations.runs.baseline import BaselineParameters
from investigations.selectors.baselines import baseline_table
from investigations.services.baselines import baseline_import, baseline_uploads_read
from investigations.views.forms import submit
from investigations.views.pages import form_failed, form_or
from investigations.views.panels import panel


def _margin(request: HttpRequest) -> float:
    try:
        margin = float(request.GET.get("margin", DEFAULT_MARGIN))
    except ValueError:
        return DEFAULT_MARGIN
    return min(max(margin, 0.0), 1000.0) if math.isfinite(margin) else DEFAULT_MARGIN


def table_context(investigation, margin: float = DEFAULT_MARGIN) -> dict:
    """The table as the templates show it: rows grouped, each group under its label."""
    rows = baseline_table(investigation=investigation, margin=margin)
    roles = dict(HostRole.choices)
    groups = []
    for group, label in GROUP_LABELS.items():
        group_rows = [row for row in rows if row.group == group]
        if group_rows:
            groups.append((gettext(label), group_rows))
    return {
        "baseline_rows": rows,
        "baseline_groups": groups,
        "baseline_counts": verdict_counts(rows),
        "baseline_margin": margin,
        "baseline_noisy_spread": NOISY_SPREAD,
        "role_labels": roles,
    }


@panel(
    name="baseline",
    title=_("Baseline pack"),
    template="investigations/_panel_baseline.html",
    order=52,
)
def baseline_context(request: HttpRequest, investigation) -> dict:
    return {
        **table_context(investigation),
        "baseline_form": form_or(
            request, "baseline_form", lambda: BaselineParameters(auto_id=start_ids("baseline"))
        ),
        "baseline_running": investigation.collections.filter(
            kind=CollectionKind.BASELINE, completed_at__isnull=True
        ).exists(),
    }


@require_safe
@login_required
def baseline_page(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    margin = _margin(request)
    context = table_context(investigation, margin)
    labels = {
        (row.benchmark, row.metric, row.role): " · ".join(
            part
            for part in (
                gettext(row.label),
                gettext(row.metric_label),
                str(context["role_labels"].get(row.role, "")),
            )
            if part
        )
        for row in context["baseline_rows"]
    }
    figure = ratio_figure(
        context["baseline_rows"],
        labels=labels,
        title=gettext("How many times better side A is than side B"),
        axis=gettext("A against B (above 1: A is better; log scale)"),
    )
    return render(
        request,
        "investigations/baseline.html",
        {
            "investigation": investigation,
            **context,
            "figure": figure if figure["data"][0]["y"] else None,
            "can_write": Role.rank(investigation.user_role) >= Role.rank(Role.RESPONDER),
            "import_form": form_or(request, "baseline_import", BaselineImportForm),
        },
    )


@require_safe
@login_required
def baseline_export_view(request: HttpRequest, pk: int, format: str) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk)
    return baseline_download(
        investigation, "csv" if format == "csv" else "markdown", _margin(request)
    )


@require_POST
@login_required
def baseline_import_view(request: HttpRequest, pk: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)

    reports = []

    def imported(rows) -> HttpResponse:
        found = read_summary(reports)
        done = gettext("Baseline results imported.")
        messages.success(request, f"{done} {found}".strip())
        return redirect(reverse("baseline_page", args=[pk]))

    def again(form) -> HttpResponse:
        # The baseline page, the import form on it with its errors and values.
        form_failed(request, baseline_import=form)
        request.method = "GET"
        return baseline_page(request, pk)

    return submit(
        BaselineImportForm(request.POST, request.FILES),
        lambda data: baseline_import(
            investigation=investigation,
            user=request.user,
            side_key=data["side"],
            role=data["role"],
            files=baseline_uploads_read(data["file"]),
            reports=reports,
        ),
        done=imported,
        failed=again,
    )
