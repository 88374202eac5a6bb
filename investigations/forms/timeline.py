"""The timeline's entry form."""

from django import forms

from investigations.choices import MANUAL_EVENT_KINDS, ActionKind, EventKind
from investigations.forms.fields import DATETIME_WIDGET


class TimelineEntryForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[(k, EventKind(k).label) for k in MANUAL_EVENT_KINDS], initial=EventKind.NOTE
    )
    action = forms.ChoiceField(required=False, choices=[("", "—"), *ActionKind.choices])
    occurred_at = forms.DateTimeField(
        required=False, label="When", widget=DATETIME_WIDGET, help_text="Empty means now"
    )
    summary = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), label="What happened")
