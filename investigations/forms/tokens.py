"""The API token form."""

from django import forms
from django.utils.translation import gettext_lazy as _


class ApiTokenForm(forms.Form):
    name = forms.CharField(label=_("Name"), help_text=_("What will use it, e.g. 'CI pipeline'"))
