"""Forms of the guided checklist."""

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations import limits
from investigations.choices import ItemStatus


class ChecklistItemForm(forms.Form):
    status = forms.ChoiceField(choices=ItemStatus.choices, required=False)
    status_was = forms.CharField(required=False)
    assignee_was = forms.CharField(required=False)
    assignee = forms.CharField(required=False)
    notes = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2, "maxlength": limits.ENTRY})
    )
    na_reason = forms.CharField(
        required=False,
        label=_("Why not applicable"),
        widget=forms.TextInput(attrs={"maxlength": limits.REASON}),
    )


class ChecklistAddForm(forms.Form):
    prefix = "step"

    title = forms.CharField(
        label=_("Add a step of your own"),
        widget=forms.TextInput(attrs={"maxlength": limits.TITLE}),
    )
