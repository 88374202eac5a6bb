"""The form of an action item of a postmortem."""

from django import forms


class ActionItemForm(forms.Form):
    """The shapes of an action item's fields; services/postmortem.py checks the rules."""

    title = forms.CharField(required=False, strip=False)
    owner = forms.IntegerField(required=False, min_value=1, max_value=2**63 - 1)
    due = forms.DateField(required=False, input_formats=["%Y-%m-%d"])
    done = forms.TypedChoiceField(
        required=False,
        choices=[("true", "true"), ("false", "false")],
        coerce=lambda value: value == "true",
        empty_value=None,
    )
