"""The form of load-test results imported from files."""

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations.choices import ImportFormat


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """One or more files, as a list (Django's recipe for <input type=file multiple>)."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None):
        if isinstance(data, list | tuple):
            return [super(MultipleFileField, self).clean(item, initial) for item in data]
        return [super().clean(data, initial)]


class ImportForm(forms.Form):
    prefix = "import"

    side = forms.ChoiceField(choices=[("a", "A"), ("b", "B")], label=_("Side"))
    format = forms.ChoiceField(choices=ImportFormat.choices, label=_("Format"))
    file = MultipleFileField(
        label=_("Files"),
        help_text=_("One file per run; several runs at different loads make steps."),
    )
    load = forms.FloatField(
        required=False,
        min_value=0.001,
        label=_("Load"),
        help_text=_(
            "Only for hey (its -c) and wrk2 (its -R) when the file lacks the command line, "
            "and for a k6 JSON summary without a vus metric (its VUs)."
        ),
    )
    ladder = forms.ModelChoiceField(
        queryset=None, required=False, empty_label=_("a new ladder"), label=_("Onto")
    )

    def __init__(self, *args, ladders, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["ladder"].queryset = ladders
