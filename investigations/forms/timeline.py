"""The timeline's entry form."""

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations import limits
from investigations.choices import MANUAL_EVENT_KINDS, ActionKind, EventKind
from investigations.forms.fields import DATETIME_WIDGET


class TimelineEntryForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[(k, EventKind(k).label) for k in MANUAL_EVENT_KINDS],
        initial=EventKind.NOTE,
        label=_("Kind"),
    )
    action = forms.ChoiceField(
        required=False, choices=[("", "—"), *ActionKind.choices], label=_("Action")
    )
    occurred_at = forms.DateTimeField(
        required=False, label=_("When"), widget=DATETIME_WIDGET, help_text=_("Empty means now")
    )
    summary = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 2, "maxlength": limits.ENTRY}),
        label=_("What happened"),
    )


class TimelineEditForm(forms.Form):
    """A note or an action changed by its author or a lead (its kind stays)."""

    action = TimelineEntryForm.base_fields["action"]
    occurred_at = forms.DateTimeField(label=_("When"), widget=DATETIME_WIDGET)
    summary = TimelineEntryForm.base_fields["summary"]
