"""A case's root causes: the panel that shows those confirmed (with their evidence), those
its findings point to, and the form that confirms one; confirming and withdrawing."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.db import transaction
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect
from django.urls import reverse
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_POST

from investigations.access import investigation_for_user
from investigations.choices import EvidenceKind, Role
from investigations.forms.root_causes import CaseRootCauseForm
from investigations.selectors.knowledge import root_causes_for_team
from investigations.selectors.root_causes import (
    case_root_causes,
    offered_evidence,
    pointed_root_causes,
)
from investigations.services.knowledge import (
    case_root_cause_confirm,
    case_root_cause_remove,
    root_cause_create,
)
from investigations.views.forms import on_case, submit
from investigations.views.pages import form_or
from investigations.views.panels import panel


@panel(
    name="root_cause",
    title=_("Root cause"),
    template="investigations/_panel_root_cause.html",
    order=75,
)
def root_cause_context(request: HttpRequest, investigation) -> dict:
    offered = offered_evidence(investigation=investigation)
    confirmed = case_root_causes(investigation=investigation)
    return {
        "confirmed_causes": confirmed,
        "pointed_causes": pointed_root_causes(investigation=investigation),
        "cause_form": form_or(
            request, "cause", lambda: _cause_form(None, investigation, offered=offered)
        ),
        "evidence_kinds": EvidenceKind,
        "heading_note": ", ".join(c.root_cause.local_title for c in confirmed),
    }


def _cause_form(data, investigation, *, offered) -> CaseRootCauseForm:
    return CaseRootCauseForm(
        data,
        offered=offered,
        entries=root_causes_for_team(team_id=investigation.team_id),
        writes=investigation.user_role == Role.LEAD,
    )


def _entry(investigation, root_cause_id: int):
    """An entry the case may name, else 404."""
    return get_object_or_404(root_causes_for_team(team_id=investigation.team_id), pk=root_cause_id)


def _to_panel(investigation) -> HttpResponse:
    return redirect(reverse("investigation_detail", args=[investigation.pk]) + "#root_cause")


@require_POST
@login_required
def case_root_cause_new(request: HttpRequest, pk: int) -> HttpResponse:
    """Confirm a root cause: an entry of the knowledge base, or a new one written here."""
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    form = _cause_form(
        request.POST, investigation, offered=offered_evidence(investigation=investigation)
    )

    @transaction.atomic
    def confirm(data):
        entry = data["root_cause"] or root_cause_create(
            user=request.user,
            team=investigation.team,
            title=data["new_title"],
            title_zh=data["new_title_zh"],
            category=data["new_category"],
        )
        case_root_cause_confirm(
            investigation=investigation,
            user=request.user,
            root_cause=entry,
            evidence=form.evidence_items(),
            fix=data["fix"],
        )
        return entry

    def confirmed(entry) -> HttpResponse:
        messages.success(
            request, gettext("Root cause confirmed: %(title)s") % {"title": entry.local_title}
        )
        return _to_panel(investigation)

    return submit(
        form,
        confirm,
        done=confirmed,
        failed=on_case(request, investigation, panel="root_cause", name="cause"),
    )


@require_POST
@login_required
def case_root_cause_propose(request: HttpRequest, pk: int, root_cause_id: int) -> HttpResponse:
    """Confirm the entry the case's findings point to, those findings as its evidence."""
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    entry = _entry(investigation, root_cause_id)
    findings = investigation.findings.filter(root_cause=entry).exclude(status="dismissed")
    case_root_cause_confirm(
        investigation=investigation,
        user=request.user,
        root_cause=entry,
        evidence=[
            {"kind": EvidenceKind.FINDING, "id": pk} for pk in findings.values_list("pk", flat=True)
        ],
    )
    messages.success(
        request, gettext("Root cause confirmed: %(title)s") % {"title": entry.local_title}
    )
    return _to_panel(investigation)


@require_POST
@login_required
def case_root_cause_withdraw(request: HttpRequest, pk: int, root_cause_id: int) -> HttpResponse:
    investigation = investigation_for_user(request.user, pk, Role.RESPONDER)
    entry = _entry(investigation, root_cause_id)
    case_root_cause_remove(investigation=investigation, user=request.user, root_cause=entry)
    return _to_panel(investigation)
