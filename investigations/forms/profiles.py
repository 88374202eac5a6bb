"""The form of CPU profiles imported from files."""

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations.choices import ProfileFormat
from investigations.forms.ladder_imports import MultipleFileField
from investigations.services.profiles import AUTO


class ProfileImportForm(forms.Form):
    prefix = "profile"

    side = forms.ChoiceField(choices=[("a", "A"), ("b", "B")], label=_("Side"))
    format = forms.ChoiceField(
        choices=[(AUTO, _("Recognise it from the file")), *ProfileFormat.choices],
        initial=AUTO,
        label=_("Format"),
    )
    file = MultipleFileField(
        label=_("Files"),
        help_text=_(
            "perf script output, or folded stacks (stackcollapse-perf.pl, async-profiler, "
            "py-spy): one profile a file."
        ),
    )
