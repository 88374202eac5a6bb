"""The API token form."""

from django import forms


class ApiTokenForm(forms.Form):
    name = forms.CharField(help_text="What will use it, e.g. 'CI pipeline'")
