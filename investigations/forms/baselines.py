"""The form of baseline results imported from files."""

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations.choices import HostRole
from investigations.forms.ladder_imports import MultipleFileField


class BaselineImportForm(forms.Form):
    prefix = "baseline"

    side = forms.ChoiceField(choices=[("a", "A"), ("b", "B")], label=_("Side"))
    role = forms.ChoiceField(
        choices=[("", _("(none)")), *HostRole.choices],
        required=False,
        label=_("Role of the host it ran on"),
        help_text=_("Rows pair results of the same role on both sides"),
    )
    file = MultipleFileField(
        label=_("Files"),
        help_text=_(
            "fio --output-format=json, iperf3 -J, or sysbench cpu or memory output: one "
            "benchmark a file."
        ),
    )
