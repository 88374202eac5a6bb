"""The guided checklist: the method's steps, completed by evidence where evidence exists.

checklist_refresh() is called by every service that changes such evidence (the symptom,
the path, the placements, facts and findings). An item done because of its evidence is
marked `auto`; it reopens when the evidence goes. Items done by hand, or not applicable,
are left as people set them.
"""

from dataclasses import dataclass

from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.phrase import Phrase, joined, ngettext_noop
from investigations import limits
from investigations.access import role_in_team
from investigations.choices import (
    EventKind,
    FindingStatus,
    HostRole,
    ItemStatus,
    LadderStatus,
    NodeState,
)
from investigations.kinds import kinds
from investigations.method import METHOD
from investigations.models import ChecklistItem, Investigation
from investigations.phrases import with_phrases
from investigations.selectors import fact_pairs
from investigations.services.timeline import in_english, timeline_event_log


def checklist_create_defaults(*, investigation: Investigation) -> None:
    ChecklistItem.objects.bulk_create(
        [
            ChecklistItem(
                investigation=investigation,
                key=step.key,
                title=in_english(step.title),
                description=in_english(step.description),
                position=(index + 1) * 10,
            )
            for index, step in enumerate(METHOD)
        ],
        ignore_conflicts=True,
    )


def placement_free(function):
    """Mark a step's evidence function as reading nothing of which hosts are placed on the
    sides: a host placed or taken off does not look for that step's evidence again. Every
    other step is looked at again (a new step too, until it says otherwise)."""
    function.placement_free = True
    return function


@placement_free
def _symptom(investigation: Investigation) -> Phrase | None:
    i = investigation
    if not i.symptom_metric.strip() or i.symptom_value_a is None or i.symptom_value_b is None:
        return None
    unit = f" {i.symptom_unit}" if i.symptom_unit else ""
    return Phrase(
        gettext_noop("%(metric)s: %(a)s on A, %(b)s on B"),
        metric=i.symptom_metric,
        a=f"{i.symptom_value_a:g}{unit}",
        b=f"{i.symptom_value_b:g}{unit}",
    )


@placement_free
def _path(investigation: Investigation) -> str | None:
    edges = list(investigation.path_edges.values_list("source_id", "target_id"))
    joined = {node for edge in edges for node in edge}
    if len(joined) < 2:
        return None
    return Phrase(
        ngettext_noop(
            "%(nodes)s nodes joined by %(count)s edge", "%(nodes)s nodes joined by %(count)s edges"
        ),
        nodes=len(joined),
        count=len(edges),
    )


@dataclass(frozen=True)
class Missing:
    """No evidence, and why: what the timeline says when a done step reopens."""

    reason: Phrase

    def __bool__(self) -> bool:
        return False


def _pairs(investigation: Investigation) -> Phrase | Missing:
    roles: dict[str, set[str]] = {}
    for role, side in investigation.members.values_list("role", "side__key"):
        roles.setdefault(role, set()).add(side)
    if not roles:
        return Missing(Phrase(gettext_noop("no host is placed on the sides")))
    alone = sorted(
        (in_english(HostRole(role).label), next(iter(sides)).upper())
        for role, sides in roles.items()
        if sides != {"a", "b"}
    )
    if alone:
        return Missing(
            joined(
                Phrase(
                    gettext_noop("%(role)s has a host on side %(side)s only, none on the other"),
                    role=Phrase(role),
                    side=side,
                )
                for role, side in alone
            )
        )
    return Phrase(
        ngettext_noop(
            "%(count)s role present on both sides", "%(count)s roles present on both sides"
        ),
        count=len(roles),
    )


def _sides_match(investigation: Investigation) -> Phrase | None:
    pairs = fact_pairs(investigation=investigation, load_facts=False)
    if not pairs or not all(pair.complete for pair in pairs):
        return None
    if investigation.findings.filter(status=FindingStatus.OPEN).exists():
        return None
    reviewed = investigation.findings.count()
    return joined(
        [
            Phrase(
                ngettext_noop(
                    "facts from both hosts of %(count)s pair",
                    "facts from both hosts of %(count)s pairs",
                ),
                count=len(pairs),
            ),
            Phrase(
                ngettext_noop("%(count)s finding reviewed", "%(count)s findings reviewed"),
                count=reviewed,
            ),
        ]
    )


@placement_free
def _rule_out_path(investigation: Investigation) -> Phrase | None:
    states = list(investigation.path_nodes.values_list("state", flat=True))
    if not states or NodeState.NOT_CHECKED in states:
        return None
    suspects = states.count(NodeState.SUSPECT)
    return Phrase(
        gettext_noop("%(ruled_out)s ruled out, %(suspects)s suspect"),
        ruled_out=len(states) - suspects,
        suspects=suspects,
    )


@placement_free
def ladder_evidence(investigation: Investigation) -> Phrase | None:
    """A ladder with results on both sides (run here, or imported)."""
    ladder = (
        investigation.ladders.filter(status__in=[LadderStatus.COMPLETED, LadderStatus.IMPORTED])
        .annotate(
            sides_with_steps=Count("sides", filter=Q(sides__steps__isnull=False), distinct=True)
        )
        .filter(sides_with_steps=2)
        .first()
    )
    if ladder is None:
        return None
    knees = [
        Phrase(gettext_noop("%(side)s at %(load)s"), side=side.upper(), load=f"{knee['load']:g}")
        if knee.get("load") is not None
        else Phrase(gettext_noop("%(side)s not reached"), side=side.upper())
        for side, knee in sorted(ladder.analysis.get("knees", {}).items())
    ]
    if not knees:
        return Phrase(gettext_noop("ladder #%(ladder)s"), ladder=ladder.pk)
    return Phrase(
        gettext_noop("ladder #%(ladder)s; knee %(knees)s"),
        ladder=ladder.pk,
        knees=joined(knees, ", "),
    )


EVIDENCE = {
    "symptom": _symptom,
    "path": _path,
    "pairs": _pairs,
    "sides_match": _sides_match,
    "rule_out_path": _rule_out_path,
}


def checklist_evidence(key: str):
    """Declare the function that finds the evidence of the step `key` (investigation ->
    Phrase or None), for a step no evidence kind completes (an evidence kind names its steps
    in its descriptor: investigations/kinds/). The app imports the declaring modules when it
    starts (apps.py), so each is known before any refresh."""

    def declare(function):
        EVIDENCE[key] = function
        return function

    return declare


def checklist_steps() -> dict:
    """{step key: the function that finds its evidence}: the steps declared here and those
    each registered evidence kind completes."""
    steps = dict(EVIDENCE)
    for kind in kinds():
        steps.update(kind.checklist)
    return steps


def placement_steps() -> list[str]:
    """The steps that a host placed on a side, or taken off, can complete or reopen."""
    return [
        key for key, find in checklist_steps().items() if not getattr(find, "placement_free", 0)
    ]


@transaction.atomic(savepoint=False)
def checklist_refresh(*, investigation: Investigation, keys=None) -> None:
    """Complete the items whose evidence exists; reopen the ones whose evidence went. With
    `keys`, only those items: what a change can affect, when its caller knows. Part of the
    caller's transaction (no savepoint of its own), or a transaction of its own."""
    steps = checklist_steps()
    items = ChecklistItem.objects.select_for_update().filter(
        investigation=investigation, key__in=list(steps if keys is None else keys)
    )
    now = timezone.now()
    for item in items:
        if not item.auto and item.status not in (ItemStatus.TODO, ItemStatus.IN_PROGRESS):
            continue  # settled by a person: evidence changes nothing, so it is not looked for
        evidence = steps[item.key](investigation)
        if evidence and item.status in (ItemStatus.TODO, ItemStatus.IN_PROGRESS):
            item.status, item.auto, item.completed_at = ItemStatus.DONE, True, now
            _set_evidence(item, evidence, "status", "auto", "completed_at")
            _log(
                item,
                Phrase(
                    gettext_noop("Checklist: '%(step)s' done (%(evidence)s)"),
                    step=_title(item),
                    evidence=evidence,
                ),
            )
        elif evidence and item.auto and item.evidence != str(evidence):
            _set_evidence(item, evidence)
        elif not evidence and item.auto and item.status == ItemStatus.DONE:
            item.status, item.auto, item.completed_at = ItemStatus.TODO, False, None
            _set_evidence(item, "", "status", "auto", "completed_at")
            why = (
                evidence.reason
                if isinstance(evidence, Missing)
                else Phrase(gettext_noop("its evidence no longer holds"))
            )
            _log(
                item,
                Phrase(
                    gettext_noop("Checklist: '%(step)s' reopened: %(why)s"),
                    step=_title(item),
                    why=why,
                ),
            )


def _set_evidence(item: ChecklistItem, evidence, *fields: str) -> None:
    """Save the item's evidence (English, and the phrase for each reader) and `fields`."""
    for name, value in with_phrases({"evidence": evidence}).items():
        setattr(item, name, value)
    item.save(update_fields=[*fields, "evidence", "phrases", "updated_at"])


def _title(item: ChecklistItem) -> Phrase:
    """The step's title in a stored phrase: a step of the method in each reader's language, a
    team's own step as its team wrote it."""
    return Phrase("%(title)s", title=item.title) if item.custom else Phrase(item.title)


# What the timeline says when a person sets a step's status (not applicable says why).
STATUS_CHANGED = {
    ItemStatus.TODO: gettext_noop("Checklist: '%(step)s' to do"),
    ItemStatus.IN_PROGRESS: gettext_noop("Checklist: '%(step)s' in progress"),
    ItemStatus.DONE: gettext_noop("Checklist: '%(step)s' done"),
}


def _log(item: ChecklistItem, summary: Phrase, user=None, **details) -> None:
    timeline_event_log(
        investigation=item.investigation,
        kind=EventKind.CHECKLIST,
        summary=summary,
        author=user,
        details={"item": item.key, **details},
    )


NOT_A_MEMBER = _("Assign a member of the investigation's team.")


def assignee_named(*, username: str | None):
    """The user a person typed as an item's assignee: None for a blank (unassign), a
    ValidationError when there is no such user: the same words as for a user outside the
    team, so that the answer never tells which names exist."""
    username = (username or "").strip()
    if not username:
        return None
    user = get_user_model().objects.filter(username=username).first()
    if user is None:
        raise ValidationError({"assignee": NOT_A_MEMBER})
    return user


@transaction.atomic
def checklist_item_update(
    *,
    item: ChecklistItem,
    user,
    status: str | None = None,
    assignee=...,
    notes: str | None = None,
    na_reason: str | None = None,
) -> ChecklistItem:
    """A person's change to an item: status, assignee (None to clear), notes."""
    # of=("self",): PostgreSQL cannot lock the nullable side of the join to the assignee.
    item = (
        ChecklistItem.objects.select_for_update(of=("self",))
        .select_related("assignee", "investigation")
        .get(pk=item.pk)
    )
    errors = {}
    if status is not None and status not in ItemStatus.values:
        errors["status"] = _("Choose one of: %(choices)s.") % {
            "choices": ", ".join(ItemStatus.values)
        }
    reason = item.na_reason if na_reason is None else na_reason.strip()
    if status == ItemStatus.NOT_APPLICABLE and not reason:
        errors["na_reason"] = _("Say why this step does not apply.")
    if assignee not in (..., None) and role_in_team(assignee, item.investigation.team_id) is None:
        errors["assignee"] = NOT_A_MEMBER
    if notes is not None and (problem := limits.too_long(notes, limits.ENTRY)):
        errors["notes"] = problem
    if problem := limits.too_long(reason, limits.REASON):
        errors["na_reason"] = problem
    if errors:
        raise ValidationError(errors)
    if notes is not None:
        item.notes = notes
    if na_reason is not None:
        item.na_reason = reason
    if assignee is not ... and assignee != item.assignee:
        old = item.assignee.get_username() if item.assignee else None
        item.assignee = assignee
        new = assignee.get_username() if assignee else None
        summary = (
            Phrase(
                gettext_noop("Checklist: '%(step)s' assigned to %(user)s"),
                step=_title(item),
                user=new,
            )
            if new
            else Phrase(gettext_noop("Checklist: '%(step)s' unassigned"), step=_title(item))
        )
        _log(item, summary, user, old=old, new=new)
    if status is not None and status != item.status:
        old = item.status
        item.status = status
        # Set by hand, so no longer the evidence's doing.
        item.auto = False
        item.completed_at = timezone.now() if status == ItemStatus.DONE else None
        if status == ItemStatus.NOT_APPLICABLE:
            summary = Phrase(
                gettext_noop("Checklist: '%(step)s' not applicable: %(why)s"),
                step=_title(item),
                why=item.na_reason,
            )
        else:
            summary = Phrase(STATUS_CHANGED[status], step=_title(item))
        _log(item, summary, user, old=old, new=status)
    item.save()
    return item


@transaction.atomic
def checklist_item_add(*, investigation: Investigation, user, title: str) -> ChecklistItem:
    """A team's own step, added to the end of this investigation's checklist."""
    title = " ".join(title.split())
    if not title:
        raise ValidationError({"title": _("Write what the step is.")})
    if problem := limits.too_long(title, limits.TITLE):
        raise ValidationError({"title": problem})
    base = slugify(title)[:40] or "step"
    key, number = f"custom-{base}", 1
    while investigation.checklist.filter(key=key).exists():
        number += 1
        key = f"custom-{base}-{number}"
    last = investigation.checklist.order_by("-position").values_list("position", flat=True).first()
    item = ChecklistItem.objects.create(
        investigation=investigation,
        key=key,
        title=title,
        position=(last or 0) + 10,
        custom=True,
    )
    _log(item, Phrase(gettext_noop("Checklist: step added: '%(step)s'"), step=title), user)
    return item
