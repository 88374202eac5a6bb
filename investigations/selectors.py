"""Reads. Each function says what it fetches so that pages do not run hidden queries."""

from dataclasses import dataclass
from itertools import zip_longest

from django.contrib.auth import get_user_model
from django.db.models import Case, Count, IntegerField, Max, QuerySet, Value, When
from django.shortcuts import get_object_or_404
from django.utils import timezone

from investigations.analysis.diagram import DiagramEdge, DiagramNode, figure
from investigations.analysis.diff import ONLY_A, ONLY_B, SAME, VOLATILE, diff_facts
from investigations.analysis.ladder import Point, mark
from investigations.analysis.steps import ladder_outcome
from investigations.choices import (
    ACTIVE_FINDING_STATUSES,
    OVERDUE_MESSAGE,
    SETTLED_ITEM_STATUSES,
    FindingSeverity,
    HostRole,
    LadderStatus,
    SideKey,
)
from investigations.models import (
    ApiToken,
    ChecklistItem,
    Collection,
    CollectionTarget,
    Credential,
    EnvironmentMember,
    FactSnapshot,
    Finding,
    Host,
    Investigation,
    Ladder,
    Membership,
    PathEdge,
    PathNode,
    Team,
    TimelineEvent,
    WebhookDelivery,
)


def team_users(*, team_id: int) -> QuerySet:
    """The users of a team, by name: who may lead an investigation or own a checklist item."""
    return get_user_model().objects.filter(memberships__team_id=team_id).order_by("username")


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


def latest_snapshots(
    *, investigation: Investigation, load_facts: bool = True
) -> dict[tuple[int, str], FactSnapshot]:
    """The newest fact snapshot of each host on each side: {(host id, side key): snapshot}.

    Two queries: the newest ids, then those rows (older snapshots' facts are never loaded,
    nor the newest ones' without load_facts).
    """
    newest = (
        FactSnapshot.objects.filter(investigation=investigation)
        .values("host", "side")
        .annotate(last=Max("id"))
        .values_list("last", flat=True)
    )
    snapshots = FactSnapshot.objects.filter(id__in=list(newest)).select_related("host", "side")
    if not load_facts:
        snapshots = snapshots.defer("facts", "probes")
    return {(s.host_id, s.side.key): s for s in snapshots}


@dataclass
class FactPair:
    roles: list[str]
    a: EnvironmentMember
    b: EnvironmentMember
    snapshot_a: FactSnapshot | None
    snapshot_b: FactSnapshot | None

    @property
    def key(self) -> str:
        return f"{self.a.host_id}:{self.b.host_id}"

    @property
    def complete(self) -> bool:
        return self.snapshot_a is not None and self.snapshot_b is not None


def fact_pairs(*, investigation: Investigation, load_facts: bool = True) -> list[FactPair]:
    """Every host pair with both sides present, once per pair of hosts, with their newest
    snapshots (without their facts and probes unless load_facts)."""
    snapshots = latest_snapshots(investigation=investigation, load_facts=load_facts)
    pairs: dict[tuple[int, int], FactPair] = {}
    for pair in host_pairs(investigation=investigation):
        if pair.a is None or pair.b is None:
            continue
        key = (pair.a.host_id, pair.b.host_id)
        if key in pairs:
            pairs[key].roles.append(pair.role_label)
            continue
        pairs[key] = FactPair(
            roles=[pair.role_label],
            a=pair.a,
            b=pair.b,
            snapshot_a=snapshots.get((pair.a.host_id, SideKey.A)),
            snapshot_b=snapshots.get((pair.b.host_id, SideKey.B)),
        )
    return list(pairs.values())


@dataclass
class PairDiff:
    pair: FactPair
    rows: list  # analysis.diff.DiffRow
    differences: int
    one_sided: int

    @property
    def categories(self) -> dict[str, list]:
        grouped: dict[str, list] = {}
        for row in self.rows:
            grouped.setdefault(row.category, []).append(row)
        return grouped


def fact_pair_diffs(
    *, investigation: Investigation, only_differences: bool = False
) -> list[PairDiff]:
    """Each host pair's newest facts side by side, with the counts that matter."""
    diffs = []
    for pair in fact_pairs(investigation=investigation):
        rows = diff_facts(
            pair.snapshot_a.facts if pair.snapshot_a else {},
            pair.snapshot_b.facts if pair.snapshot_b else {},
        )
        differences = sum(1 for row in rows if row.counted)
        one_sided = sum(1 for row in rows if row.kind in (ONLY_A, ONLY_B))
        if only_differences:
            rows = [row for row in rows if row.kind not in (SAME, VOLATILE)]
        diffs.append(PairDiff(pair, rows, differences, one_sided))
    return diffs


def findings_for(*, investigation: Investigation, status: str = "") -> QuerySet[Finding]:
    """Findings, the most severe first; open and confirmed ones before the rest."""
    severity_rank = Case(
        *[When(severity=s, then=Value(FindingSeverity.rank(s))) for s in FindingSeverity.values],
        output_field=IntegerField(),
    )
    settled = Case(
        When(status__in=ACTIVE_FINDING_STATUSES, then=Value(0)),
        default=Value(1),
        output_field=IntegerField(),
    )
    findings = investigation.findings.select_related("host_a", "host_b").order_by(
        settled, severity_rank, "rule", "subject"
    )
    return findings.filter(status=status) if status else findings


def read_overdue_as_failed(rows: list) -> list:
    """Rows (collection targets, ladder sides) still running past their deadline read as
    failed: their worker is gone, and the worker's sweep records it within SWEEP_SECONDS.
    Only the loaded objects change: a read never writes."""
    now = timezone.now()
    for row in rows:
        if row.status == "running" and row.deadline_at is not None and row.deadline_at < now:
            row.status, row.error = "failed", OVERDUE_MESSAGE
    return rows


def collection_targets(*, collection: Collection) -> list[CollectionTarget]:
    """The collection's targets with host, side and artifacts loaded; overdue ones read as
    failed."""
    return read_overdue_as_failed(
        list(collection.targets.select_related("host", "side").prefetch_related("artifacts"))
    )


def collection_with_targets(*, collection_id: int) -> Collection:
    """The collection (404 if none) with its targets, hosts and sides loaded into
    `targets.all()`; overdue targets read as failed."""
    collection = get_object_or_404(
        Collection.objects.prefetch_related("targets__host", "targets__side"), pk=collection_id
    )
    read_overdue_as_failed(list(collection.targets.all()))
    return collection


def collections_for(*, investigation: Investigation, limit: int = 5) -> list[Collection]:
    """The newest collections with their targets, hosts and sides loaded; overdue targets
    read as failed."""
    collections = list(
        investigation.collections.prefetch_related(
            "targets__host", "targets__side", "targets__artifacts"
        )[:limit]
    )
    for collection in collections:
        read_overdue_as_failed(list(collection.targets.all()))
    return collections


def path_nodes(*, investigation: Investigation) -> QuerySet[PathNode]:
    return investigation.path_nodes.prefetch_related("hosts_a", "hosts_b")


def path_edges(*, investigation: Investigation) -> QuerySet[PathEdge]:
    return investigation.path_edges.select_related("source", "target")


def path_figure(*, nodes, edges) -> dict:
    """The plotly figure of the traffic path, from nodes and edges already loaded."""
    return figure(
        [DiagramNode(n.pk, n.label, n.get_kind_display(), n.state, n.specs_differ) for n in nodes],
        [
            DiagramEdge(
                e.source_id, e.target_id, e.summary if e.protocol != "other" or e.tls else ""
            )
            for e in edges
        ],
    )


def checklist_items(*, investigation: Investigation) -> QuerySet[ChecklistItem]:
    return investigation.checklist.select_related("assignee")


def checklist_progress(items) -> tuple[int, int]:
    """(settled, total): done or not applicable, out of all."""
    items = list(items)
    return sum(1 for i in items if i.status in SETTLED_ITEM_STATUSES), len(items)


def checklist_version(*, investigation: Investigation) -> str:
    stats = investigation.checklist.aggregate(count=Count("id"), last=Max("updated_at"))
    last = stats["last"].timestamp() if stats["last"] else 0
    return f"{stats['count']}-{last}"


def my_checklist_items(*, user) -> QuerySet[ChecklistItem]:
    """The user's unfinished items in their teams' investigations, newest case first."""
    return (
        ChecklistItem.objects.filter(assignee=user, investigation__team__memberships__user=user)
        .exclude(status__in=SETTLED_ITEM_STATUSES)
        .select_related("investigation__team")
        .order_by("-investigation__created_at", "position")
    )


def ladders_for(*, investigation: Investigation) -> QuerySet:
    """The investigation's ladders, newest first, with their sides loaded."""
    return investigation.ladders.prefetch_related("sides__side")


def ladder_sides(*, ladder) -> list:
    """The ladder's sides, A then B, each with its side, load generator and steps loaded
    (two queries): what ladder_points and ladder_rows read. A side still running past its
    deadline reads as failed, and the ladder's status with it (read_overdue_as_failed)."""
    sides = list(ladder.sides.select_related("side", "load_generator").prefetch_related("steps"))
    running = sum(side.status == LadderStatus.RUNNING for side in sides)
    read_overdue_as_failed(sides)
    if running != sum(side.status == LadderStatus.RUNNING for side in sides):
        ladder.status = ladder_outcome(
            cancel_requested=ladder.cancel_requested_at is not None,
            side_statuses=[side.status for side in sides],
        ) or ladder.status
    return sides


def ladder_points(sides) -> dict[str, list[Point]]:
    """Each side's steps as the analysis reads them, from sides loaded by ladder_sides."""
    points: dict[str, list[Point]] = {"a": [], "b": []}
    for side in sides:
        points[side.side.key] = [
            Point(
                index=step.index,
                load=step.load,
                rps=step.rps,
                p50=step.latency_ms.get("p50"),
                p99=step.latency_ms.get("p99"),
                error_rate=step.error_rate,
            )
            for step in side.steps.all()
        ]
    return points


@dataclass
class LadderRow:
    """One load of the per-step table: both sides, the ratio A/B, and the verdict."""

    load: float
    a: object | None  # LadderStep
    b: object | None
    rps_ratio: float | None
    rps_mark: str
    p99_ratio: float | None
    p99_mark: str
    # How far apart the two sides really started this step, in milliseconds.
    skew_ms: float | None = None

    @property
    def sides(self) -> list:
        return [self.a, self.b]


def _skew_ms(a, b) -> float | None:
    if a is None or b is None or a.started_at is None or b.started_at is None:
        return None
    return abs((a.started_at - b.started_at).total_seconds()) * 1000


def ladder_rows(*, ladder, sides) -> list[LadderRow]:
    """The per-step table, from sides loaded by ladder_sides."""
    steps: dict[str, dict[float, object]] = {"a": {}, "b": {}}
    for side in sides:
        for step in side.steps.all():
            steps[side.side.key][step.load] = step
    rows = []
    for load in sorted(set(steps["a"]) | set(steps["b"])):
        a, b = steps["a"].get(load), steps["b"].get(load)
        a_p99 = a.latency_ms.get("p99") if a else None
        b_p99 = b.latency_ms.get("p99") if b else None
        rows.append(
            LadderRow(
                load=load,
                a=a,
                b=b,
                rps_ratio=a.rps / b.rps if a and b and b.rps else None,
                rps_mark=mark(
                    a.rps if a else None,
                    b.rps if b else None,
                    higher_is_better=True,
                    margin=ladder.margin,
                ),
                p99_ratio=a_p99 / b_p99 if a_p99 and b_p99 else None,
                p99_mark=mark(a_p99, b_p99, higher_is_better=False, margin=ladder.margin),
                skew_ms=_skew_ms(a, b),
            )
        )
    return rows


def ladder_cancel_requested(*, ladder_id: int) -> bool:
    """Whether a person asked the ladder to stop (one indexed query)."""
    return Ladder.objects.filter(pk=ladder_id, cancel_requested_at__isnull=False).exists()


def ladder_load_generator(*, investigation: Investigation, side_key: str):
    """The side's first host with the role load generator (its EnvironmentMember, with
    host and side loaded), or None."""
    return (
        EnvironmentMember.objects.filter(
            investigation=investigation, side__key=side_key, role=HostRole.LOAD_GENERATOR
        )
        .select_related("host", "side")
        .order_by("host__name")
        .first()
    )


def ladder_service_hosts(*, ladder_side) -> list[Host]:
    """The hosts with the role service on the ladder side's side, with what connecting to
    them reads (credential, jump host) loaded: the hosts its samplers watch."""
    return [
        member.host
        for member in EnvironmentMember.objects.filter(
            investigation_id=ladder_side.ladder.investigation_id,
            side_id=ladder_side.side_id,
            role=HostRole.SERVICE,
        ).select_related("host__credential", "host__jump_host__credential")
    ]
