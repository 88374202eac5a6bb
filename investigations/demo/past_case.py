"""A closed demo case: what it holds and how it loads."""

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from django.db import transaction
from django.utils import timezone

from investigations.choices import Status
from investigations.demo.checklist import checklist_story_load
from investigations.demo.path import path_story_load
from investigations.demo.postmortem import postmortem_load
from investigations.demo.profiles import profiles_load
from investigations.demo.root_causes import root_cause_load
from investigations.demo.timeline import timeline_load
from investigations.models import Team
from investigations.services.findings import PairVerdicts, findings_record
from investigations.services.investigations import (
    investigation_create,
    investigation_set_status,
    investigation_update,
)

# Said on closing a past case whose knowledge-base entry has been deleted.
PAST_CLOSE_REASON = "Closed with the fix verified; its knowledge-base entry is no longer there."


@dataclass(frozen=True)
class PastCase:
    """A closed demo case: what people wrote of it, in our own words after a real incident."""

    title: str
    days_ago: int
    severity: str
    tags: list
    symptom: dict  # investigation_create's symptom fields
    sides: dict  # investigation_create's side fields
    notes: str
    path: list  # lines of the one-line path grammar
    node_states: list  # (label, state, note)
    timeline: list  # (minutes after the start, kind, action, what happened)
    profiles: dict  # side -> the file in files/ imported onto it as folded stacks
    # The rule verdicts the story's other figures give, recorded under their own pair key.
    verdicts: Callable[[], list[PairVerdicts]]
    root_cause: str  # the slug of a shipped knowledge-base entry
    evidence_rules: tuple  # the rules of the findings that prove it
    fix: str
    postmortem: dict
    action_items: list  # (title, done)
    checklist: list  # (key, status, notes or the reason it does not apply)
    mitigated: int  # minutes after the start
    resolved: int


@transaction.atomic
def past_case_load(*, team: Team, user, past: PastCase) -> None:
    """A closed case: told, evidenced, its root cause confirmed, written up, closed."""
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(days=past.days_ago)
    investigation = investigation_create(
        team=team,
        user=user,
        title=past.title,
        severity=past.severity,
        tags=past.tags,
        started_at=start,
        detected_at=start,
        notes=past.notes,
        **past.symptom,
        **past.sides,
    )
    timeline_load(investigation=investigation, user=user, start=start, entries=past.timeline)
    path_story_load(
        investigation=investigation, user=user, lines=past.path, node_states=past.node_states
    )
    profiles_load(investigation=investigation, user=user, profiles=past.profiles)
    findings_record(investigation=investigation, pairs=past.verdicts())
    checklist_story_load(investigation=investigation, user=user, items=past.checklist)
    root_cause = root_cause_load(
        investigation=investigation,
        user=user,
        slug=past.root_cause,
        rules=past.evidence_rules,
        fix=past.fix,
        confirm_findings=True,
    )
    postmortem_load(
        investigation=investigation,
        user=user,
        postmortem=past.postmortem,
        actions=[(title, done, None) for title, done in past.action_items],
    )
    investigation = investigation_update(
        investigation=investigation,
        user=user,
        mitigated_at=start + timedelta(minutes=past.mitigated),
        resolved_at=start + timedelta(minutes=past.resolved),
    )
    investigation_set_status(
        investigation=investigation,
        user=user,
        status=Status.CLOSED,
        # Only if the knowledge base lost the entry: a case closes with its root cause.
        reason="" if root_cause is not None else PAST_CLOSE_REASON,
    )
