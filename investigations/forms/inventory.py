"""Forms of the inventory (credentials, hosts) and of placing a host on a side."""

from django import forms
from django.conf import settings

from investigations.choices import HostRole, HostTransport, SideKey


class MemberForm(forms.Form):
    host = forms.ModelChoiceField(queryset=None)
    side = forms.ChoiceField(choices=SideKey.choices)
    role = forms.ChoiceField(choices=HostRole.choices, initial=HostRole.SERVICE)

    def __init__(self, *args, hosts, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["host"].queryset = hosts


class CredentialForm(forms.Form):
    team = forms.ModelChoiceField(queryset=None, empty_label=None)
    name = forms.CharField()
    private_key = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "autocomplete": "off"}),
        strip=False,
        help_text="OpenSSH or PEM; ed25519, ECDSA or RSA. It is never shown again.",
    )
    passphrase = forms.CharField(
        required=False, strip=False, widget=forms.PasswordInput(attrs={"autocomplete": "off"})
    )

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams


class HostForm(forms.Form):
    name = forms.CharField()
    address = forms.CharField(help_text="Host name, IPv4 or IPv6 address")
    port = forms.IntegerField(initial=22, min_value=1, max_value=65535)
    username = forms.CharField()
    credential = forms.ModelChoiceField(queryset=None, required=False)
    jump_host = forms.ModelChoiceField(queryset=None, required=False)
    transport = forms.ChoiceField(
        choices=HostTransport.choices,
        initial=HostTransport.SSH,
        required=False,
        help_text="The local transport runs probes on Perfcase's own machine, without SSH",
    )

    def __init__(self, *args, credentials, jump_hosts, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["credential"].queryset = credentials
        self.fields["jump_host"].queryset = jump_hosts
        # Shown where the local transport is on, or to switch a local host back to SSH.
        if not settings.LOCAL_TRANSPORT and self.initial.get("transport") != HostTransport.LOCAL:
            del self.fields["transport"]

    def clean_transport(self) -> str:
        return self.cleaned_data["transport"] or HostTransport.SSH


class HostCreateForm(HostForm):
    team = forms.ModelChoiceField(queryset=None, empty_label=None)

    field_order = ["team"]

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
