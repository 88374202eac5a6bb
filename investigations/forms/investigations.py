"""Forms of an investigation and its sides."""

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations import limits
from investigations.choices import Direction, Severity, SideKind
from investigations.forms.fields import MinuteDateTimeField
from investigations.services.investigations import EDITABLE_FIELDS


def _datetime_field(label: str) -> forms.DateTimeField:
    return MinuteDateTimeField(required=False, label=label)


class InvestigationForm(forms.Form):
    MAX_LENGTHS = {
        "title": limits.TITLE,
        "symptom_metric": limits.SHORT,
        "symptom_load": limits.SHORT,
        "notes": limits.NOTES,
        "side_a_label": limits.SHORT,
        "side_b_label": limits.SHORT,
    }

    title = forms.CharField(label=_("Title"), widget=forms.TextInput(attrs={"autofocus": True}))
    severity = forms.ChoiceField(
        choices=Severity.choices, initial=Severity.SEV3, label=_("Severity")
    )
    tags = forms.CharField(
        required=False, label=_("Tags"), help_text=_("Comma-separated, e.g. cpu, kernel, tls")
    )
    symptom_metric = forms.CharField(
        required=False, label=_("Metric"), help_text=_("e.g. average latency, TPS, p99")
    )
    symptom_unit = forms.CharField(required=False, label=_("Unit"), max_length=64)
    symptom_load = forms.CharField(
        required=False, label=_("Under what load"), help_text=_("e.g. 500 concurrent users")
    )
    symptom_value_a = forms.FloatField(required=False, label=_("Value on side A"))
    symptom_value_b = forms.FloatField(required=False, label=_("Value on side B"))
    symptom_direction = forms.ChoiceField(
        choices=Direction.choices, initial=Direction.LOWER_IS_BETTER, label=_("Direction")
    )
    started_at = _datetime_field(_("Impact started"))
    detected_at = _datetime_field(_("Detected"))
    mitigated_at = _datetime_field(_("Mitigated"))
    resolved_at = _datetime_field(_("Resolved"))
    lead = forms.ModelChoiceField(queryset=None, required=False, label=_("Lead"))
    notes = forms.CharField(
        required=False, label=_("Notes"), widget=forms.Textarea(attrs={"rows": 5})
    )

    def __init__(self, *args, members, **kwargs):
        super().__init__(*args, **kwargs)
        # The browser stops at the limits the services enforce (investigations/limits.py).
        for name, limit in self.MAX_LENGTHS.items():
            if name in self.fields:
                self.fields[name].widget.attrs["maxlength"] = limit
        self.fields["lead"].queryset = members
        self.fields["lead"].empty_label = _("No lead")
        self.fields["lead"].label_from_instance = lambda user: user.get_username()

    def service_fields(self, *, changed_only: bool = False) -> dict:
        """The cleaned values as investigation_create/update take them."""
        names = [n for n in EDITABLE_FIELDS if not changed_only or n in self.changed_data]
        fields = {name: self.cleaned_data[name] for name in names}
        for name in ["symptom_metric", "symptom_unit", "symptom_load", "notes"]:
            if name in fields:
                fields[name] = fields[name] or ""
        return fields


class InvestigationCreateForm(InvestigationForm):
    team = forms.ModelChoiceField(queryset=None, empty_label=None, label=_("Team"))
    side_a_label = forms.CharField(
        label=_("Side A label"), initial="A", help_text=_("e.g. ours, VM")
    )
    side_a_kind = forms.ChoiceField(label=_("Side A kind"), choices=SideKind.choices)
    side_b_label = forms.CharField(label=_("Side B label"), initial="B", help_text=_("e.g. theirs"))
    side_b_kind = forms.ChoiceField(label=_("Side B kind"), choices=SideKind.choices)

    field_order = ["team", "title"]

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        self.fields["lead"].empty_label = _("Me")


class StatusForm(forms.Form):
    status = forms.CharField()
    # Closing without a confirmed root cause: a lead says why.
    reason = forms.CharField(required=False, max_length=limits.REASON)


class SideForm(forms.Form):
    label = forms.CharField(
        label=_("Label"), widget=forms.TextInput(attrs={"maxlength": limits.SHORT})
    )
    kind = forms.ChoiceField(choices=SideKind.choices, label=_("Kind"))
