"""One filter per list, shared by the page and the API so that both filter alike."""

from django import forms
from django.db.models import Q, QuerySet
from django.utils.translation import gettext_lazy as _

from investigations.choices import Severity, Status
from investigations.models import (
    ChecklistItem,
    EnvironmentMember,
    Finding,
    Investigation,
    PathEdge,
    PathNode,
    TimelineEvent,
)


class InvestigationFilter(forms.Form):
    q = forms.CharField(required=False, max_length=200, label=_("Search"))
    team = forms.IntegerField(required=False, min_value=1)
    status = forms.ChoiceField(required=False, choices=[("", _("Any status")), *Status.choices])
    severity = forms.ChoiceField(
        required=False, choices=[("", _("Any severity")), *Severity.choices]
    )
    tag = forms.CharField(required=False, max_length=64)

    def apply(self, investigations: QuerySet) -> QuerySet:
        """Filter by the valid fields; call is_valid() first."""
        data = self.cleaned_data
        if data.get("q"):
            investigations = investigations.filter(_matching(data["q"].strip()))
        if data.get("team"):
            investigations = investigations.filter(team_id=data["team"])
        if data.get("status"):
            investigations = investigations.filter(status=data["status"])
        if data.get("severity"):
            investigations = investigations.filter(severity=data["severity"])
        if data.get("tag"):
            investigations = investigations.filter(tags__name=data["tag"].strip().lower())
        return investigations


def _matching(text: str) -> Q:
    """The investigations where people typed `text`: the case's own fields, its
    sides and tags, its path (nodes, specs, state notes, edges), its timeline, its findings,
    its checklist notes and the names of its hosts. One subquery each, no row explosion."""
    ids = Investigation.objects.filter(
        Q(title__icontains=text)
        | Q(symptom_metric__icontains=text)
        | Q(symptom_load__icontains=text)
        | Q(notes__icontains=text)
        | Q(tags__name__icontains=text)
        | Q(sides__label__icontains=text)
    ).values("pk")
    related = [
        PathNode.objects.filter(
            Q(label__icontains=text)
            | Q(spec_a__icontains=text)
            | Q(spec_b__icontains=text)
            | Q(state_note__icontains=text)
        ),
        PathEdge.objects.filter(notes__icontains=text),
        TimelineEvent.objects.filter(summary__icontains=text, deleted_at=None),
        Finding.objects.filter(
            Q(title__icontains=text) | Q(subject__icontains=text) | Q(explanation__icontains=text)
        ),
        ChecklistItem.objects.filter(Q(notes__icontains=text) | Q(title__icontains=text)),
        EnvironmentMember.objects.filter(host__name__icontains=text),
    ]
    matches = Q(pk__in=ids)
    for rows in related:
        matches |= Q(pk__in=rows.values("investigation_id"))
    return matches
