"""The postmortem as one plain structure: what people wrote (models.Postmortem, the action
items) and what the case says as it is (symptom, times, timeline, the method's steps, root
causes with their evidence, ladders). The page, the print view, the Markdown export and the
API all read this one structure.

Texts the machinery stored (timeline entries, checklist evidence, knees) come in the
reader's language: build it inside the request's language.
"""

from dataclasses import dataclass, field
from datetime import date, datetime, timedelta

from django.urls import reverse
from django.utils import timezone
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from investigations.analysis.postmortem_markdown import duration_text
from investigations.choices import (
    Direction,
    EventKind,
    EvidenceKind,
    ItemStatus,
    LadderStatus,
    Severity,
    Status,
)
from investigations.kinds import evidence_kinds, kinds
from investigations.models import (
    ActionItem,
    Investigation,
    Postmortem,
    TimelineEvent,
)
from investigations.phrases import stored_text
from investigations.selectors.checklist import checklist_items
from investigations.selectors.ladder_compare import RerunCheck, rerun_check
from investigations.selectors.ladders import ladders_for
from investigations.selectors.timeline import timeline_events

# The timeline entries a postmortem tells until people choose: what people did and wrote,
# how the status moved, and the root causes.
DEFAULT_EVENT_KINDS = [EventKind.NOTE, EventKind.ACTION, EventKind.STATUS, EventKind.ROOT_CAUSE]
# The written parts, in the order the write-up shows them.
WRITTEN = ("summary", "impact", "fix", "verification", "lessons")
# The case's own times, and the durations between them.
TIMES = [
    ("started_at", _("Impact started")),
    ("detected_at", _("Detected")),
    ("mitigated_at", _("Mitigated")),
    ("resolved_at", _("Resolved")),
]
DURATIONS = [
    ("to_detect", _("Time to detect"), "started_at", "detected_at"),
    ("to_mitigate", _("Time to mitigate"), "started_at", "mitigated_at"),
    ("to_resolve", _("Time to resolve"), "started_at", "resolved_at"),
]


@dataclass
class Symptom:
    metric: str
    unit: str
    load: str
    value_a: float | None
    value_b: float | None
    direction: str
    direction_label: str
    # How many times worse A is than B (above 1: A is worse), or None.
    ratio: float | None

    @property
    def stated(self) -> bool:
        return bool(self.metric or self.value_a is not None or self.value_b is not None)


@dataclass
class Duration:
    key: str
    label: str
    # Between the two times, or None when either is missing.
    value: timedelta | None

    @property
    def seconds(self) -> float | None:
        return None if self.value is None else self.value.total_seconds()

    @property
    def text(self) -> str:
        return duration_text(self.value)


@dataclass
class Moment:
    key: str
    label: str
    at: datetime | None
    # From the impact's start to this time (None for the start itself).
    since_start: Duration | None = None


@dataclass
class Entry:
    """A timeline entry as the write-up tells it."""

    id: int
    occurred_at: datetime
    kind: str
    kind_label: str
    action_label: str
    author: str  # a user name, or "Perfcase" for what it wrote itself
    summary: str  # in the reader's language (people's words as written)


@dataclass
class MethodStep:
    key: str
    title: str
    status: str
    status_label: str
    evidence: str
    notes: str
    na_reason: str
    assignee: str


@dataclass
class Evidence:
    kind: str
    kind_label: str
    id: int
    label: str
    url: str  # a path on this site, or "" when the evidence is gone


@dataclass
class CaseCause:
    id: int  # the knowledge base entry
    title: str
    category_label: str
    url: str
    fix: str
    confirmed_by: str
    confirmed_at: datetime
    evidence: list[Evidence]


@dataclass
class LadderVerdict:
    id: int
    status: str
    status_label: str
    created_at: datetime
    load_kind_label: str
    steps: list
    # {side key: (load or None, reason)}, in the reader's language.
    knees: dict[str, tuple[float | None, str]]
    divergence_load: float | None
    divergence: str
    url: str
    has_results: bool


@dataclass
class Action:
    id: int
    title: str
    owner: int | None
    owner_name: str
    due: date | None
    done: bool
    done_at: datetime | None
    created_at: datetime
    overdue: bool


@dataclass
class PostmortemReport:
    investigation_id: int
    title: str
    team: str
    lead: str
    severity: str
    severity_label: str
    status: str
    status_label: str
    sides: dict[str, str]  # {"a": label, "b": label}
    symptom: Symptom
    times: list[Moment]
    durations: list[Duration]
    # What people wrote.
    summary: str = ""
    impact: str = ""
    fix: str = ""
    verification: str = ""
    lessons: str = ""
    written: bool = False
    updated_by: str = ""
    updated_at: datetime | None = None
    # The entries it tells: the ones people chose (events_chosen), else the default kinds.
    chosen_event_ids: list[int] = field(default_factory=list)
    events_chosen: bool = False
    events: list[Entry] = field(default_factory=list)
    method: list[MethodStep] = field(default_factory=list)
    root_causes: list[CaseCause] = field(default_factory=list)
    ladders: list[LadderVerdict] = field(default_factory=list)
    # Each registered kind's own section, by kind (the ladders' is `ladders` as well).
    sections: dict[str, list] = field(default_factory=dict)
    actions: list[Action] = field(default_factory=list)
    # The newest completed rerun against the ladder it ran again (selectors/ladder_compare).
    rerun: RerunCheck | None = None

    def text(self, name: str) -> str:
        return getattr(self, name)

    @property
    def open_actions(self) -> list[Action]:
        return [a for a in self.actions if not a.done]


def _name(user) -> str:
    return user.get_username() if user is not None else ""


def _entry(event: TimelineEvent) -> Entry:
    return Entry(
        id=event.pk,
        occurred_at=event.occurred_at,
        kind=event.kind,
        kind_label=str(EventKind(event.kind).label) if event.kind in EventKind.values else "",
        action_label=event.get_action_display() if event.action else "",
        author=_name(event.author) or "Perfcase",
        summary=stored_text(event, "summary"),
    )


def postmortem_events(*, investigation: Investigation, chosen: list[int]) -> list[Entry]:
    """The chosen entries in time order (deleted ones left out), or, if none are chosen, the
    default kinds. One query."""
    events = timeline_events(investigation=investigation)
    if chosen:
        events = events.filter(pk__in=chosen)
    else:
        events = events.filter(kind__in=DEFAULT_EVENT_KINDS)
    return [_entry(event) for event in events]


def postmortem_event_choices(*, investigation: Investigation, chosen: list[int]) -> list[Entry]:
    """What the picker offers: the story (everything but the checklist's bookkeeping and the
    postmortem's own edits) and whatever is already chosen. One query."""
    events = timeline_events(investigation=investigation).exclude(
        kind__in=[EventKind.CHECKLIST, EventKind.POSTMORTEM]
    )
    extra = timeline_events(investigation=investigation).filter(pk__in=chosen)
    return [_entry(event) for event in (events | extra).distinct()]


def _method(investigation: Investigation) -> list[MethodStep]:
    steps = []
    for item in checklist_items(investigation=investigation):
        steps.append(
            MethodStep(
                key=item.key,
                # The method's own steps are stored in English and read in each language.
                title=item.title if item.custom else gettext(item.title),
                status=item.status,
                status_label=str(ItemStatus(item.status).label),
                evidence=stored_text(item, "evidence"),
                notes=item.notes,
                na_reason=item.na_reason,
                assignee=_name(item.assignee),
            )
        )
    return steps


def _evidence_labels(investigation: Investigation, causes) -> dict[tuple[str, int], Evidence]:
    """Each piece of evidence named by the causes, as a label and a link (a query a kind)."""
    by_key = {kind.key: kind for kind in evidence_kinds()}
    wanted: dict[str, set[int]] = {}
    for cause in causes:
        for item in cause.evidence or []:
            if isinstance(item, dict) and item.get("kind") in by_key:
                wanted.setdefault(item["kind"], set()).add(item.get("id"))
    found: dict[tuple[str, int], Evidence] = {}
    for key, ids in wanted.items():
        kind = by_key[key]
        for row, label, url in kind.evidence.labelled(investigation, ids, postmortem=True):
            found[(key, row.pk)] = Evidence(key, str(kind.label), row.pk, label, url)
    return found


def _root_causes(investigation: Investigation) -> list[CaseCause]:
    causes = list(investigation.case_root_causes.select_related("root_cause", "confirmed_by"))
    labels = _evidence_labels(investigation, causes)
    by_key = {kind.key: kind for kind in evidence_kinds()}
    result = []
    for cause in causes:
        evidence = []
        for item in cause.evidence or []:
            if not isinstance(item, dict) or item.get("kind") not in by_key:
                continue
            kind, obj_id = item["kind"], item.get("id")
            evidence.append(
                labels.get(
                    (kind, obj_id),
                    # Deleted since: still named, no longer linked.
                    Evidence(
                        kind,
                        str(by_key[kind].label),
                        obj_id,
                        gettext("%(kind)s %(id)s (no longer there)")
                        % {"kind": by_key[kind].label, "id": obj_id},
                        "",
                    ),
                )
            )
        entry = cause.root_cause
        result.append(
            CaseCause(
                id=entry.pk,
                title=entry.local_title,
                category_label=entry.get_category_display(),
                url=reverse("root_cause_detail", args=[entry.pk]),
                fix=cause.fix,
                confirmed_by=_name(cause.confirmed_by),
                confirmed_at=cause.confirmed_at,
                evidence=evidence,
            )
        )
    return result


def ladder_verdicts(investigation: Investigation) -> list[LadderVerdict]:
    """The case's ladders, oldest first (the first run, then the re-run that verifies the
    fix), with their knees and divergence as their analysis stored them."""
    verdicts = []
    for ladder in reversed(list(ladders_for(investigation=investigation))):
        analysis = ladder.analysis or {}
        knees = {
            side: (knee.get("load"), stored_text(knee, "reason"))
            for side, knee in sorted((analysis.get("knees") or {}).items())
            if isinstance(knee, dict)
        }
        divergence = analysis.get("divergence") or {}
        verdicts.append(
            LadderVerdict(
                id=ladder.pk,
                status=ladder.status,
                status_label=str(LadderStatus(ladder.status).label),
                created_at=ladder.created_at,
                load_kind_label=ladder.get_load_kind_display(),
                steps=list(ladder.steps or []),
                knees=knees,
                divergence_load=divergence.get("load"),
                divergence=stored_text(divergence, "reason") if divergence else "",
                url=reverse("ladder_detail", args=[ladder.pk]),
                has_results=bool(analysis),
            )
        )
    return verdicts


def postmortem_actions(*, investigation: Investigation) -> list[Action]:
    """The action items, open ones first by due date, with their owners (one query)."""
    today = timezone.localdate()
    return [
        Action(
            id=item.pk,
            title=item.title,
            owner=item.owner_id,
            owner_name=_name(item.owner),
            due=item.due,
            done=item.done,
            done_at=item.done_at,
            created_at=item.created_at,
            overdue=bool(item.due and not item.done and item.due < today),
        )
        for item in ActionItem.objects.filter(investigation=investigation).select_related("owner")
    ]


def postmortem_action_get(*, investigation: Investigation, action_id: int) -> ActionItem | None:
    """The investigation's action item with this id, or None."""
    return (
        ActionItem.objects.filter(investigation=investigation, pk=action_id)
        .select_related("investigation")
        .first()
    )


def postmortem_of(investigation: Investigation) -> PostmortemReport:
    """The whole write-up of the case (a dozen queries)."""
    i = investigation
    written = Postmortem.objects.filter(investigation=i).select_related("updated_by").first()
    sides = {side.key: side.label for side in i.sides.all()}
    times = {key: Moment(key, str(label), getattr(i, key)) for key, label in TIMES}
    durations = []
    for key, label, start, end in DURATIONS:
        began, ended = getattr(i, start), getattr(i, end)
        duration = Duration(key, str(label), ended - began if began and ended else None)
        times[end].since_start = duration
        durations.append(duration)
    chosen = list(written.events) if written else []
    report = PostmortemReport(
        investigation_id=i.pk,
        title=i.title,
        team=i.team.name,
        lead=_name(i.lead),
        severity=i.severity,
        severity_label=str(Severity(i.severity).label),
        status=i.status,
        status_label=str(Status(i.status).label),
        sides={"a": sides.get("a", "A"), "b": sides.get("b", "B")},
        symptom=Symptom(
            metric=i.symptom_metric,
            unit=i.symptom_unit,
            load=i.symptom_load,
            value_a=i.symptom_value_a,
            value_b=i.symptom_value_b,
            direction=i.symptom_direction,
            direction_label=str(Direction(i.symptom_direction).label),
            ratio=i.symptom_ratio,
        ),
        times=list(times.values()),
        durations=durations,
        chosen_event_ids=chosen,
        events_chosen=bool(chosen),
        events=postmortem_events(investigation=i, chosen=chosen),
        method=_method(i),
        root_causes=_root_causes(i),
        actions=postmortem_actions(investigation=i),
    )
    report.sections = {
        kind.key: kind.postmortem(i) for kind in kinds() if kind.postmortem is not None
    }
    report.ladders = report.sections.get(EvidenceKind.LADDER, [])
    report.rerun = rerun_check(investigation=i)
    if written is not None:
        for name in WRITTEN:
            setattr(report, name, getattr(written, name))
        report.written = written.written
        report.updated_by = _name(written.updated_by)
        report.updated_at = written.updated_at
    return report


def postmortem_written(*, investigation: Investigation) -> bool:
    """Whether the case is written up: a summary, and the lessons or the fix (one query)."""
    written = Postmortem.objects.filter(investigation=investigation).first()
    return bool(written and written.written)
