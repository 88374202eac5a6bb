"""Forms of teams, their members and their webhook."""

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations.choices import Role


class TeamForm(forms.Form):
    name = forms.CharField(label=_("Name"))


class MembershipAddForm(forms.Form):
    username = forms.CharField(label=_("Username"), max_length=150)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.RESPONDER, label=_("Role"))


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices, label=_("Role"))


class WebhookForm(forms.Form):
    webhook_url = forms.CharField(
        required=False,
        label=_("Webhook URL"),
        help_text=_("Slack-compatible; empty turns it off"),
    )
