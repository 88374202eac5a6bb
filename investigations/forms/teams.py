"""Forms of teams, their members and their webhook."""

from django import forms

from investigations.choices import Role


class TeamForm(forms.Form):
    name = forms.CharField()


class MembershipAddForm(forms.Form):
    username = forms.CharField()
    role = forms.ChoiceField(choices=Role.choices, initial=Role.RESPONDER)


class RoleForm(forms.Form):
    role = forms.ChoiceField(choices=Role.choices)


class WebhookForm(forms.Form):
    webhook_url = forms.CharField(
        required=False, label="Webhook URL", help_text="Slack-compatible; empty turns it off"
    )
