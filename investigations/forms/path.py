"""Forms of the traffic path: a path in one line, its nodes (hops), their states, edges."""

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from investigations.choices import ConnectionReuse, NodeState, PathNodeKind, Protocol


def parse_values(text: str) -> dict[str, str]:
    """`key: value` lines (or key=value) into a dict; blank lines are skipped."""
    values = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        separator = ":" if ":" in line else "="
        key, found, value = line.partition(separator)
        if not found or not key.strip():
            raise ValidationError(_("Line %(number)s: write 'key: value'.") % {"number": number})
        values[key.strip()] = value.strip()
    return values


def format_values(values: dict) -> str:
    return "\n".join(f"{key}: {value}" for key, value in values.items())


class PathTextForm(forms.Form):
    prefix = "path"

    text = forms.CharField(
        label=_("Path in one line"),
        widget=forms.TextInput(
            attrs={"placeholder": "loadgen -> lb -> gateway -> app -[mysql:3306]-> db:mysql"}
        ),
    )


class PathNodeForm(forms.Form):
    prefix = "node"

    kind = forms.ChoiceField(
        choices=PathNodeKind.choices, initial=PathNodeKind.SERVICE, label=_("Kind")
    )
    label = forms.CharField(label=_("Label"))


class PathNodeEditForm(PathNodeForm):
    prefix = "spec"

    spec_a = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label=_("Side A")
    )
    spec_b = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label=_("Side B")
    )
    values_a = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        label=_("Values on A"),
        help_text=_("One 'key: value' per line, e.g. new conn/s: 50k"),
    )
    values_b = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), label=_("Values on B")
    )
    hosts_a = forms.ModelMultipleChoiceField(queryset=None, required=False, label=_("Hosts on A"))
    hosts_b = forms.ModelMultipleChoiceField(queryset=None, required=False, label=_("Hosts on B"))

    def __init__(self, *args, hosts, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["hosts_a"].queryset = hosts
        self.fields["hosts_b"].queryset = hosts

    def clean_values_a(self):
        return parse_values(self.cleaned_data["values_a"])

    def clean_values_b(self):
        return parse_values(self.cleaned_data["values_b"])


class PathNodeStateForm(forms.Form):
    prefix = "state"

    state = forms.ChoiceField(choices=NodeState.choices, label=_("State"))
    note = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label=_("Evidence")
    )
    link = forms.URLField(required=False, assume_scheme="https", label=_("Link"))
    file = forms.FileField(required=False, label=_("File"))
    collection = forms.ModelChoiceField(queryset=None, required=False, label=_("Collection"))

    def __init__(self, *args, collections, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["collection"].queryset = collections


class PathEdgeForm(forms.Form):
    prefix = "edge"

    source = forms.ModelChoiceField(queryset=None, label=_("From"))
    target = forms.ModelChoiceField(queryset=None, label=_("To"))
    protocol = forms.ChoiceField(
        choices=Protocol.choices, initial=Protocol.HTTP, label=_("Protocol")
    )
    port = forms.IntegerField(required=False, min_value=1, max_value=65535, label=_("Port"))
    tls = forms.BooleanField(required=False, label="TLS")
    reuse = forms.ChoiceField(
        choices=ConnectionReuse.choices, initial=ConnectionReuse.UNKNOWN, label=_("Reuse")
    )

    def __init__(self, *args, nodes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["source"].queryset = nodes
        self.fields["target"].queryset = nodes
