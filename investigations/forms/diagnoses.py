"""The form of a new diagnosis run (the case page's "Diagnose")."""

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations.choices import LoadTool
from investigations.forms.ladders import parse_steps
from investigations.models.diagnoses import DiagnosisStage


class DiagnosisForm(forms.Form):
    prefix = "diagnosis"

    stages = forms.MultipleChoiceField(
        choices=DiagnosisStage.choices,
        initial=[stage.value for stage in DiagnosisStage],
        widget=forms.CheckboxSelectMultiple,
        label=_("Stages"),
        help_text=_("In the method's order; each one can be left out"),
    )
    side_a_url = forms.CharField(
        required=False,
        label=_("URL on side A"),
        help_text=_("The ladder's load goes there; empty with no earlier ladder: no ladder"),
    )
    side_b_url = forms.CharField(required=False, label=_("URL on side B"))
    steps = forms.CharField(
        required=False, label=_("Steps"), help_text=_("The load of each step, e.g. 10, 20, 50")
    )
    step_seconds = forms.IntegerField(
        required=False, min_value=1, max_value=600, label=_("Seconds a step")
    )
    tool = forms.ChoiceField(
        choices=LoadTool.choices, required=False, initial=LoadTool.WRK, label=_("Tool")
    )
    seconds = forms.IntegerField(
        initial=20,
        min_value=1,
        max_value=120,
        label=_("Seconds at the knee"),
        help_text=_("How long the knee's load is held while sampling, profiling and capturing"),
    )
    process_a = forms.CharField(
        required=False,
        max_length=64,
        label=_("Process on side A"),
        help_text=_("Empty: the one listening on the URL's port, found on the service host"),
    )
    process_b = forms.CharField(required=False, max_length=64, label=_("Process on side B"))
    budget_seconds = forms.IntegerField(
        initial=900,
        min_value=30,
        max_value=4 * 3600,
        label=_("Budget (seconds)"),
        help_text=_("Stages that would not fit are cut, and named"),
    )

    def clean_steps(self):
        text = (self.cleaned_data.get("steps") or "").strip()
        return parse_steps(text) if text else None

    def service_fields(self) -> dict:
        """The diagnosis_request keywords from the cleaned form."""
        data = self.cleaned_data
        load = {
            key: data.get(key)
            for key in ("side_a_url", "side_b_url", "steps", "step_seconds", "tool")
            if data.get(key) not in (None, "", [])
        }
        return {
            "load": load or None,
            "process_a": data.get("process_a") or "",
            "process_b": data.get("process_b") or "",
            "seconds": data.get("seconds"),
            "stages": data.get("stages"),
            "budget_seconds": data.get("budget_seconds"),
        }
