"""Forms of the inventory (credentials, hosts) and of placing a host on a side."""

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from investigations.choices import HostRole, HostTransport, SideKey
from investigations.validators import normalise_address, validate_username


class MemberForm(forms.Form):
    host = forms.ModelChoiceField(queryset=None, label=_("Host"))
    side = forms.ChoiceField(choices=SideKey.choices, label=_("Side"))
    role = forms.ChoiceField(choices=HostRole.choices, initial=HostRole.SERVICE, label=_("Role"))

    def __init__(self, *args, hosts, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["host"].queryset = hosts


class CredentialForm(forms.Form):
    team = forms.ModelChoiceField(queryset=None, empty_label=None, label=_("Team"))
    name = forms.CharField(label=_("Name"))
    private_key = forms.CharField(
        label=_("Private key"),
        widget=forms.Textarea(attrs={"rows": 8, "spellcheck": "false", "autocomplete": "off"}),
        strip=False,
        help_text=_("OpenSSH or PEM; ed25519, ECDSA or RSA. It is never shown again."),
    )
    passphrase = forms.CharField(
        required=False,
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "off"}),
        label=_("Passphrase"),
    )

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams


class HostForm(forms.Form):
    name = forms.CharField(label=_("Name"))
    # Asked of SSH hosts only: "This machine" (the local transport) has no address or user.
    address = forms.CharField(
        label=_("Address"), help_text=_("Host name, IPv4 or IPv6 address"), required=False
    )
    port = forms.IntegerField(
        initial=22, min_value=1, max_value=65535, label=_("Port"), required=False
    )
    username = forms.CharField(label=_("Username"), required=False)
    credential = forms.ModelChoiceField(queryset=None, required=False, label=_("Credential"))
    jump_host = forms.ModelChoiceField(queryset=None, required=False, label=_("Jump host"))
    transport = forms.ChoiceField(
        label=_("Transport"),
        choices=HostTransport.choices,
        initial=HostTransport.SSH,
        required=False,
        help_text=_("The local transport runs probes on Perfcase's own machine, without SSH"),
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

    def clean(self) -> dict:
        """Every error at once: what an SSH host needs, checked as the service checks it."""
        data = super().clean()
        if data.get("transport", HostTransport.SSH) == HostTransport.LOCAL:
            data.update(address="localhost", port=22, username="")
            return data
        for field in ("address", "port", "username"):
            if data.get(field) in (None, "") and field not in self.errors:
                self.add_error(field, forms.Field.default_error_messages["required"])
        if data.get("address") and "address" not in self.errors:
            try:
                data["address"] = normalise_address(data["address"])
            except ValidationError as error:
                self.add_error("address", error)
        if data.get("username") and "username" not in self.errors:
            try:
                validate_username(data["username"])
            except ValidationError as error:
                self.add_error("username", error)
        return data


class HostCreateForm(HostForm):
    team = forms.ModelChoiceField(queryset=None, empty_label=None, label=_("Team"))

    field_order = ["team"]

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
