from investigations.models.accounts import UserPreference
from investigations.models.baselines import BaselineResult
from investigations.models.captures import Capture
from investigations.models.checklist import ChecklistItem
from investigations.models.collections import Artifact, Collection, CollectionTarget
from investigations.models.diagnoses import Diagnosis
from investigations.models.evidence import FactSnapshot, Finding
from investigations.models.inventory import Credential, EnvironmentMember, Host
from investigations.models.investigations import Investigation, Side, Tag
from investigations.models.jobs import Job
from investigations.models.knowledge import (
    ActionItem,
    CaseRootCause,
    Postmortem,
    RootCause,
    RootCauseRevision,
    SearchDocument,
    SearchTerm,
)
from investigations.models.ladders import Ladder, LadderSample, LadderSide, LadderStep
from investigations.models.path import PathEdge, PathNode
from investigations.models.profiles import Profile
from investigations.models.teams import ApiToken, Invitation, Membership, Team
from investigations.models.timeline import TimelineEvent
from investigations.models.webhooks import WebhookDelivery

__all__ = [
    "ActionItem",
    "CaseRootCause",
    "Postmortem",
    "RootCause",
    "RootCauseRevision",
    "SearchDocument",
    "SearchTerm",
    "ApiToken",
    "BaselineResult",
    "Capture",
    "Artifact",
    "ChecklistItem",
    "Collection",
    "CollectionTarget",
    "FactSnapshot",
    "Finding",
    "Credential",
    "Diagnosis",
    "EnvironmentMember",
    "Host",
    "Investigation",
    "Job",
    "Invitation",
    "Ladder",
    "LadderSample",
    "LadderSide",
    "LadderStep",
    "Membership",
    "PathEdge",
    "PathNode",
    "Profile",
    "Side",
    "Tag",
    "Team",
    "TimelineEvent",
    "UserPreference",
    "WebhookDelivery",
]
