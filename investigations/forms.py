"""Page forms check types and shapes; the services check the rules and say what is wrong."""

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError

from collectors.facts import validate_path, validate_service
from investigations.choices import (
    MANUAL_EVENT_KINDS,
    ActionKind,
    ConnectionReuse,
    Direction,
    EventKind,
    HostRole,
    HostTransport,
    ImportFormat,
    ItemStatus,
    LoadKind,
    LoadTool,
    NodeState,
    PathNodeKind,
    Protocol,
    Role,
    Severity,
    SideKey,
    SideKind,
)
from investigations.services.investigations import EDITABLE_FIELDS

DATETIME_WIDGET = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


def attach_errors(form: forms.Form, error: ValidationError) -> None:
    """Put a service's errors on the form fields they name, the rest on the form itself."""
    if not hasattr(error, "error_dict"):
        form.add_error(None, error)
        return
    for field, messages in error.message_dict.items():
        form.add_error(field if field in form.fields else None, messages)


class MinuteDateTimeField(forms.DateTimeField):
    """Shown and typed to the minute, so a time that matches to the minute is unchanged."""

    widget = DATETIME_WIDGET

    def has_changed(self, initial, data) -> bool:
        try:
            value = self.to_python(data)
        except ValidationError:
            return True
        return _to_minute(initial) != _to_minute(value)


def _to_minute(value):
    return value.replace(second=0, microsecond=0) if value else None


def _datetime_field(label: str) -> forms.DateTimeField:
    return MinuteDateTimeField(required=False, label=label)


class InvestigationForm(forms.Form):
    title = forms.CharField(widget=forms.TextInput(attrs={"autofocus": True}))
    severity = forms.ChoiceField(choices=Severity.choices, initial=Severity.SEV3)
    tags = forms.CharField(required=False, help_text="Comma-separated, e.g. cpu, kernel, tls")
    symptom_metric = forms.CharField(
        required=False, label="Metric", help_text="e.g. average latency, TPS, p99"
    )
    symptom_unit = forms.CharField(required=False, label="Unit", max_length=64)
    symptom_load = forms.CharField(
        required=False, label="Under what load", help_text="e.g. 500 concurrent users"
    )
    symptom_value_a = forms.FloatField(required=False, label="Value on side A")
    symptom_value_b = forms.FloatField(required=False, label="Value on side B")
    symptom_direction = forms.ChoiceField(
        choices=Direction.choices, initial=Direction.LOWER_IS_BETTER, label="Direction"
    )
    started_at = _datetime_field("Impact started")
    detected_at = _datetime_field("Detected")
    mitigated_at = _datetime_field("Mitigated")
    resolved_at = _datetime_field("Resolved")
    lead = forms.ModelChoiceField(queryset=None, required=False)
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 5}))

    def __init__(self, *args, members, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["lead"].queryset = members
        self.fields["lead"].empty_label = "No lead"
        self.fields["lead"].label_from_instance = lambda user: user.get_username()

    def service_fields(self, *, changed_only: bool = False) -> dict:
        """The cleaned values as investigation_create/update take them."""
        names = [n for n in EDITABLE_FIELDS if not changed_only or n in self.changed_data]
        fields = {name: self.cleaned_data[name] for name in names}
        for name in ["symptom_metric", "symptom_unit", "symptom_load", "notes"]:
            if name in fields:
                fields[name] = fields[name] or ""
        return fields


class InvestigationCreateForm(InvestigationForm):
    team = forms.ModelChoiceField(queryset=None, empty_label=None)
    side_a_label = forms.CharField(label="Side A label", initial="A", help_text="e.g. ours, VM")
    side_a_kind = forms.ChoiceField(label="Side A kind", choices=SideKind.choices)
    side_b_label = forms.CharField(label="Side B label", initial="B", help_text="e.g. theirs")
    side_b_kind = forms.ChoiceField(label="Side B kind", choices=SideKind.choices)

    field_order = ["team", "title"]

    def __init__(self, *args, teams, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["team"].queryset = teams
        self.fields["lead"].empty_label = "Me"


class StatusForm(forms.Form):
    status = forms.CharField()


class SideForm(forms.Form):
    label = forms.CharField()
    kind = forms.ChoiceField(choices=SideKind.choices)


class TimelineEntryForm(forms.Form):
    kind = forms.ChoiceField(
        choices=[(k, EventKind(k).label) for k in MANUAL_EVENT_KINDS], initial=EventKind.NOTE
    )
    action = forms.ChoiceField(required=False, choices=[("", "—"), *ActionKind.choices])
    occurred_at = forms.DateTimeField(
        required=False, label="When", widget=DATETIME_WIDGET, help_text="Empty means now"
    )
    summary = forms.CharField(widget=forms.Textarea(attrs={"rows": 2}), label="What happened")


class MemberForm(forms.Form):
    host = forms.ModelChoiceField(queryset=None)
    side = forms.ChoiceField(choices=SideKey.choices)
    role = forms.ChoiceField(choices=HostRole.choices, initial=HostRole.SERVICE)

    def __init__(self, *args, hosts, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["host"].queryset = hosts


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


class ApiTokenForm(forms.Form):
    name = forms.CharField(help_text="What will use it, e.g. 'CI pipeline'")


class CollectFactsForm(forms.Form):
    service = forms.CharField(
        required=False,
        label="Service process",
        help_text="Optional: a process name (as in /proc/PID/comm, e.g. java) or a PID",
    )
    paths = forms.CharField(
        required=False,
        label="Mounts of",
        help_text="Optional: paths whose mount options to record, separated by spaces",
    )

    def clean_service(self) -> str:
        try:
            return validate_service(self.cleaned_data["service"])
        except ValueError as error:
            raise ValidationError(str(error)) from None

    def clean_paths(self) -> list[str]:
        paths = self.cleaned_data["paths"].split()
        for path in paths:
            try:
                validate_path(path)
            except ValueError as error:
                raise ValidationError(f"{path[:80]}: {error}") from None
        return paths


class HostKeyTrustForm(forms.Form):
    fingerprint = forms.CharField()


def parse_values(text: str) -> dict[str, str]:
    """`key: value` lines (or key=value) into a dict; blank lines are skipped."""
    values = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        separator = ":" if ":" in line else "="
        key, found, value = line.partition(separator)
        if not found or not key.strip():
            raise ValidationError(f"Line {number}: write 'key: value'.")
        values[key.strip()] = value.strip()
    return values


def format_values(values: dict) -> str:
    return "\n".join(f"{key}: {value}" for key, value in values.items())


class PathTextForm(forms.Form):
    prefix = "path"

    text = forms.CharField(
        label="Path in one line",
        widget=forms.TextInput(
            attrs={"placeholder": "loadgen -> lb -> gateway -> app -[mysql:3306]-> db:mysql"}
        ),
    )


class PathNodeForm(forms.Form):
    prefix = "node"

    kind = forms.ChoiceField(choices=PathNodeKind.choices, initial=PathNodeKind.SERVICE)
    label = forms.CharField()


class PathNodeEditForm(PathNodeForm):
    prefix = "spec"

    spec_a = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Side A"
    )
    spec_b = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Side B"
    )
    values_a = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        label="Values on A",
        help_text="One 'key: value' per line, e.g. new conn/s: 50k",
    )
    values_b = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 3}), label="Values on B"
    )
    hosts_a = forms.ModelMultipleChoiceField(queryset=None, required=False, label="Hosts on A")
    hosts_b = forms.ModelMultipleChoiceField(queryset=None, required=False, label="Hosts on B")

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

    state = forms.ChoiceField(choices=NodeState.choices)
    note = forms.CharField(
        required=False, widget=forms.Textarea(attrs={"rows": 2}), label="Evidence"
    )
    link = forms.URLField(required=False, assume_scheme="https")
    file = forms.FileField(required=False)
    collection = forms.ModelChoiceField(queryset=None, required=False)

    def __init__(self, *args, collections, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["collection"].queryset = collections


class PathEdgeForm(forms.Form):
    prefix = "edge"

    source = forms.ModelChoiceField(queryset=None, label="From")
    target = forms.ModelChoiceField(queryset=None, label="To")
    protocol = forms.ChoiceField(choices=Protocol.choices, initial=Protocol.HTTP)
    port = forms.IntegerField(required=False, min_value=1, max_value=65535)
    tls = forms.BooleanField(required=False, label="TLS")
    reuse = forms.ChoiceField(choices=ConnectionReuse.choices, initial=ConnectionReuse.UNKNOWN)

    def __init__(self, *args, nodes, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["source"].queryset = nodes
        self.fields["target"].queryset = nodes


class ChecklistItemForm(forms.Form):
    status = forms.ChoiceField(choices=ItemStatus.choices, required=False)
    status_was = forms.CharField(required=False)
    assignee_was = forms.CharField(required=False)
    assignee = forms.CharField(required=False)
    notes = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))
    na_reason = forms.CharField(required=False, label="Why not applicable")


class ChecklistAddForm(forms.Form):
    prefix = "step"

    title = forms.CharField(label="Add a step of your own")


def parse_steps(text: str) -> list[int]:
    words = [w for w in text.replace(",", " ").split() if w]
    if not words or not all(w.isdigit() for w in words):
        raise ValidationError("Give the loads as whole numbers, e.g. 10, 20, 50, 100.")
    return [int(w) for w in words]


class LadderForm(forms.Form):
    prefix = "ladder"

    side_a_url = forms.CharField(label="URL on side A", help_text="http:// or https://")
    side_b_url = forms.CharField(label="URL on side B")
    steps = forms.CharField(initial="10, 20, 50, 100, 200", help_text="The load of each step")
    load_kind = forms.TypedChoiceField(
        choices=LoadKind.choices,
        required=False,
        empty_value=LoadKind.CONCURRENCY,
        initial=LoadKind.CONCURRENCY,
        label="Load is",
        help_text="requests/s: hey or k6 hold the rate whatever the latency",
    )
    step_seconds = forms.IntegerField(
        initial=30, min_value=1, max_value=600, label="Seconds a step"
    )
    warmup_seconds = forms.IntegerField(
        initial=5, min_value=0, max_value=300, label="Warm-up seconds"
    )
    tool = forms.ChoiceField(choices=LoadTool.choices, initial=LoadTool.WRK)
    stop_error_rate = forms.FloatField(
        initial=5, min_value=0.01, max_value=100, label="Stop above errors (%)"
    )
    stop_p99_ms = forms.FloatField(required=False, min_value=0.001, label="Stop above p99 (ms)")
    margin = forms.FloatField(
        initial=20, min_value=1, max_value=99, label="Sides differ beyond (%)"
    )

    def clean_steps(self) -> list[int]:
        return parse_steps(self.cleaned_data["steps"])

    def service_fields(self) -> dict:
        data = dict(self.cleaned_data)
        data["stop_error_rate"] = data["stop_error_rate"] / 100
        data["margin"] = data["margin"] / 100
        return data


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

    side = forms.ChoiceField(choices=[("a", "A"), ("b", "B")])
    format = forms.ChoiceField(choices=ImportFormat.choices)
    file = MultipleFileField(
        label="Files", help_text="One file per run; several runs at different loads make steps."
    )
    load = forms.FloatField(
        required=False,
        min_value=0.001,
        label="Load",
        help_text="Only for hey (its -c) and wrk2 (its -R) when the file lacks the command line.",
    )
    ladder = forms.ModelChoiceField(
        queryset=None, required=False, empty_label="a new ladder", label="Onto"
    )

    def __init__(self, *args, ladders, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["ladder"].queryset = ladders

    def files_read(self) -> list[tuple[str, bytes]]:
        return [(upload.name, upload.read()) for upload in self.cleaned_data["file"]]
