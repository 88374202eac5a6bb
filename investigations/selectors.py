"""Reads. Each function says what it fetches so that pages do not run hidden queries."""

from dataclasses import dataclass
from itertools import zip_longest

from django.db.models import Count, Max, QuerySet

from investigations.choices import HostRole, SideKey
from investigations.models import (
    ApiToken,
    Credential,
    EnvironmentMember,
    Host,
    Investigation,
    Membership,
    Team,
    TimelineEvent,
    WebhookDelivery,
)


def teams_for_user(user) -> QuerySet[Team]:
    return Team.objects.filter(memberships__user=user).order_by("name")


def teams_with_role(user, roles) -> QuerySet[Team]:
    # One filter() call, so that user and role are conditions on the same membership row.
    return Team.objects.filter(memberships__user=user, memberships__role__in=roles).order_by("name")


def investigation_list(*, user) -> QuerySet[Investigation]:
    """The investigations of the user's teams, with team, lead and tags loaded."""
    return (
        Investigation.objects.filter(team__memberships__user=user)
        .select_related("team", "lead")
        .prefetch_related("tags")
    )


def timeline_events(*, investigation: Investigation, kind: str = "") -> QuerySet[TimelineEvent]:
    events = investigation.events.select_related("author")
    return events.filter(kind=kind) if kind else events


def timeline_version(*, investigation: Investigation) -> str:
    """Changes whenever an event is added; events are never edited, so count and id suffice."""
    stats = investigation.events.aggregate(count=Count("id"), last=Max("id"))
    return f"{stats['count']}-{stats['last'] or 0}"


@dataclass
class HostPair:
    role: str
    role_label: str
    a: EnvironmentMember | None
    b: EnvironmentMember | None

    @property
    def members(self) -> list[EnvironmentMember | None]:
        return [self.a, self.b]


def host_pairs(*, investigation: Investigation) -> list[HostPair]:
    """Hosts of the same role on both sides, side by side (in name order within a role)."""
    members = EnvironmentMember.objects.filter(investigation=investigation).select_related(
        "host", "side"
    )
    by_role: dict[str, dict[str, list[EnvironmentMember]]] = {}
    for member in members:
        by_role.setdefault(member.role, {SideKey.A: [], SideKey.B: []})[member.side.key].append(
            member
        )
    pairs = []
    for role, label in HostRole.choices:
        sides = by_role.get(role)
        if not sides:
            continue
        for a, b in zip_longest(sides[SideKey.A], sides[SideKey.B]):
            pairs.append(HostPair(role, label, a, b))
    return pairs


def hosts_for_user(*, user, team: Team | None = None) -> QuerySet[Host]:
    hosts = Host.objects.filter(team__memberships__user=user).select_related(
        "team", "credential", "jump_host"
    )
    return hosts.filter(team=team) if team else hosts


def credentials_for_user(*, user, team: Team | None = None) -> QuerySet[Credential]:
    credentials = Credential.objects.filter(team__memberships__user=user).select_related("team")
    return credentials.filter(team=team) if team else credentials


def team_members(*, team: Team) -> QuerySet[Membership]:
    return team.memberships.select_related("user").order_by("user__username")


def recent_deliveries(*, team: Team, limit: int = 10) -> QuerySet[WebhookDelivery]:
    return team.deliveries.all()[:limit]


def api_tokens_for(*, user) -> QuerySet[ApiToken]:
    return ApiToken.objects.filter(user=user)
