"""Reads of load ladders: their sides, steps, the per-step table and what a run reads."""

from dataclasses import dataclass

from django.db.models import QuerySet
from django.utils import timezone

from collectors.phrase import Phrase
from investigations.analysis.ladder import Point, mark
from investigations.analysis.steps import ladder_outcome, late_start
from investigations.choices import NEVER_RAN, OVERDUE_MESSAGE, HostRole, LadderStatus
from investigations.jobs import JobKind, read_job, register
from investigations.models import EnvironmentMember, Host, Investigation, Ladder, LadderSide

# A ladder side's run: one side's load generator stepping through the ladder.
LADDER_SIDE_JOB = register(
    JobKind(
        "ladder_side",
        overdue={LadderStatus.QUEUED.value: NEVER_RAN, LadderStatus.RUNNING.value: OVERDUE_MESSAGE},
    )
)


def ladders_for(*, investigation: Investigation, limit: int | None = None) -> QuerySet[Ladder]:
    """The investigation's ladders, newest first (the newest `limit` if given), with their
    sides loaded."""
    ladders = investigation.ladders.prefetch_related("sides__side", "sides__job")
    return ladders[:limit] if limit is not None else ladders


def ladder_choices(*, investigation: Investigation) -> QuerySet[Ladder]:
    """The investigation's ladders, newest first (the rows only): what a form offers."""
    return investigation.ladders.all()


def ladder_get(*, investigation: Investigation, ladder_id: int) -> Ladder | None:
    """The investigation's ladder with this id, or None (the row only)."""
    return investigation.ladders.filter(pk=ladder_id).first()


def ladder_previous_urls(*, investigation: Investigation) -> dict[str, str]:
    """The URLs of the newest ladder that had any, by side key ({} if none): what a new
    ladder's form starts from. Two queries."""
    previous = investigation.ladders.exclude(sides__url="").prefetch_related("sides__side").first()
    if previous is None:
        return {}
    return {side.side.key: side.url for side in previous.sides.all()}


def ladder_refresh_progress(*, ladder: Ladder) -> None:
    """Reload into the loaded ladder only the fields a run changes (one query)."""
    ladder.refresh_from_db(fields=["status", "analysis", "cancel_requested_at", "finished_at"])


def ladder_sides(*, ladder: Ladder) -> list[LadderSide]:
    """The ladder's sides, A then B, each with its side, load generator and steps loaded
    (two queries): what ladder_points and ladder_rows read. A side still running past its
    deadline reads as failed, and the ladder's status with it; a read never writes."""
    sides = list(
        ladder.sides.select_related("side", "load_generator", "job").prefetch_related("steps")
    )
    running = sum(side.status == LadderStatus.RUNNING for side in sides)
    now = timezone.now()
    for side in sides:
        read_job(side.job, LADDER_SIDE_JOB, now=now)
    if running != sum(side.status == LadderStatus.RUNNING for side in sides):
        ladder.status = (
            ladder_outcome(
                cancel_requested=ladder.cancel_requested_at is not None,
                side_statuses=[side.status for side in sides],
            )
            or ladder.status
        )
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


def ladder_cpu(*, sides: list[LadderSide]) -> dict[str, list[dict]]:
    """Each side's CPU use per step, by side key, from sides loaded by ladder_sides."""
    return {side.side.key: [step.cpu for step in side.steps.all()] for side in sides}


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
    # Why the later side began late, when one began well after its planned moment.
    late_start: Phrase | None = None

    @property
    def sides(self) -> list:
        return [self.a, self.b]


def _skew_ms(a, b) -> float | None:
    if a is None or b is None or a.started_at is None or b.started_at is None:
        return None
    return abs((a.started_at - b.started_at).total_seconds()) * 1000


def ladder_rows(*, ladder: Ladder, sides: list[LadderSide]) -> list[LadderRow]:
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
                late_start=late_start(load=f"{load:,g}", a=a, b=b),
            )
        )
    return rows


def ladder_cancel_requested(*, ladder_id: int) -> bool:
    """Whether a person asked the ladder to stop (one indexed query)."""
    return Ladder.objects.filter(pk=ladder_id, cancel_requested_at__isnull=False).exists()


def ladder_load_generator(
    *, investigation: Investigation, side_key: str
) -> EnvironmentMember | None:
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


def ladder_service_hosts(*, ladder_side: LadderSide) -> list[Host]:
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
