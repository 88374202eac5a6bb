"""Forms of the guided checklist."""

from django import forms

from investigations.choices import ItemStatus


class ChecklistItemForm(forms.Form):
    status = forms.ChoiceField(choices=ItemStatus.choices, required=False)
    status_was = forms.CharField(required=False)
    assignee_was = forms.CharField(required=False)
    assignee = forms.CharField(required=False)
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    na_reason = forms.CharField(required=False, label="Why not applicable")


class ChecklistAddForm(forms.Form):
    prefix = "step"

    title = forms.CharField(label="Add a step of your own")
