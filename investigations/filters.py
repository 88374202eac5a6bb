"""One filter per list, shared by the page and the API so that both filter alike."""

from django import forms
from django.db.models import Q, QuerySet

from investigations.choices import Severity, Status


class InvestigationFilter(forms.Form):
    q = forms.CharField(required=False, max_length=200, label="Search")
    team = forms.IntegerField(required=False, min_value=1)
    status = forms.ChoiceField(required=False, choices=[("", "Any status"), *Status.choices])
    severity = forms.ChoiceField(required=False, choices=[("", "Any severity"), *Severity.choices])
    tag = forms.CharField(required=False, max_length=64)

    def apply(self, investigations: QuerySet) -> QuerySet:
        """Filter by the valid fields; call is_valid() first."""
        data = self.cleaned_data
        if data.get("q"):
            text = data["q"].strip()
            investigations = investigations.filter(
                Q(title__icontains=text)
                | Q(symptom_metric__icontains=text)
                | Q(notes__icontains=text)
                | Q(tags__name__icontains=text)
            ).distinct()
        if data.get("team"):
            investigations = investigations.filter(team_id=data["team"])
        if data.get("status"):
            investigations = investigations.filter(status=data["status"])
        if data.get("severity"):
            investigations = investigations.filter(severity=data["severity"])
        if data.get("tag"):
            investigations = investigations.filter(tags__name=data["tag"].strip().lower())
        return investigations
