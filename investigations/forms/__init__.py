"""Page forms, one module per sub-domain as in services/. They check types and shapes; the
services check the rules and say what is wrong. Everything is re-exported here: import
from `investigations.forms`."""

from investigations.forms.checklist import (
    ChecklistAddForm,
    ChecklistItemForm,
)
from investigations.forms.collections import CollectFactsForm, start_ids
from investigations.forms.errors import attach_errors
from investigations.forms.fields import (
    DATETIME_WIDGET,
    MinuteDateTimeField,
)
from investigations.forms.hostkeys import HostKeyTrustForm
from investigations.forms.inventory import (
    CredentialForm,
    HostCreateForm,
    HostForm,
    MemberForm,
)
from investigations.forms.investigations import (
    InvestigationCreateForm,
    InvestigationForm,
    SideForm,
    StatusForm,
)
from investigations.forms.ladder_imports import (
    ImportForm,
    MultipleFileField,
    MultipleFileInput,
)
from investigations.forms.ladders import (
    LadderForm,
    parse_steps,
)
from investigations.forms.path import (
    PathEdgeForm,
    PathNodeEditForm,
    PathNodeForm,
    PathNodeStateForm,
    PathTextForm,
    format_values,
    parse_values,
)
from investigations.forms.teams import (
    MembershipAddForm,
    RoleForm,
    TeamForm,
    WebhookForm,
)
from investigations.forms.timeline import TimelineEditForm, TimelineEntryForm
from investigations.forms.tokens import ApiTokenForm

__all__ = [
    "ApiTokenForm",
    "attach_errors",
    "start_ids",
    "ChecklistAddForm",
    "ChecklistItemForm",
    "CollectFactsForm",
    "CredentialForm",
    "DATETIME_WIDGET",
    "format_values",
    "HostCreateForm",
    "HostForm",
    "HostKeyTrustForm",
    "ImportForm",
    "InvestigationCreateForm",
    "InvestigationForm",
    "LadderForm",
    "MemberForm",
    "MembershipAddForm",
    "MinuteDateTimeField",
    "MultipleFileField",
    "MultipleFileInput",
    "parse_steps",
    "parse_values",
    "PathEdgeForm",
    "PathNodeEditForm",
    "PathNodeForm",
    "PathNodeStateForm",
    "PathTextForm",
    "RoleForm",
    "SideForm",
    "StatusForm",
    "TeamForm",
    "TimelineEditForm",
    "TimelineEntryForm",
    "WebhookForm",
]
