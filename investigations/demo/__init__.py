"""Demo data: one lived-in investigation, so a newcomer sees what a case looks like, and two
closed ones before it, so that its similar past cases show something real.

Each is modelled on a real incident, told in our own words. The main one (a VM against a
container on identical hardware; resolved, not closed) goes through the same parsers and
services as real evidence: wrk results imported as a ladder on both sides, one host per side
with a facts snapshot and a sysbench baseline, from the files in files/ (written for the
demo, not measured: files/README.md); its root cause is the knowledge base's CPU governor
entry, confirmed with the governor finding. The hosts have documentation addresses (RFC
5737), no credential and no trusted host key: nothing is ever contacted.

The closed ones (PAST_CASES: too many vCPUs for a lock-bound service; short-lived TLS
connections to object storage) have no hosts at all: their CPU profiles are imported onto
the sides from files/, and the findings the story's other figures give (a CPU count, a
capture's connection and handshake rates) are raised by the same rules and recorded by the
findings service. Their root causes are confirmed, their postmortems written, and they are
closed by the demo user, who leads the demo team.

Each case loads once, found by its title; what an older demo lacks is added on the next run.
A module per kind of evidence loads that kind for every case; a module per closed case tells
its story.
"""

from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone

from investigations.choices import Direction, Severity, SideKind, Status
from investigations.demo.baselines import baseline_load
from investigations.demo.checklist import checklist_load
from investigations.demo.facts import facts_load
from investigations.demo.hosts import hosts_load
from investigations.demo.ladders import ladder_load
from investigations.demo.past_case import past_case_load
from investigations.demo.past_tls import TLS_CASE
from investigations.demo.past_vcpus import VCPUS_CASE
from investigations.demo.path import path_load
from investigations.demo.postmortem import DEMO_ACTIONS, DEMO_POSTMORTEM, postmortem_load
from investigations.demo.root_causes import demo_root_cause_load
from investigations.demo.shipped import DEMO_DIR
from investigations.demo.timeline import DEMO_TIMELINE, timeline_load
from investigations.models import Investigation, Postmortem, Team
from investigations.services.investigations import (
    investigation_create,
    investigation_set_status,
    investigation_update,
)
from investigations.services.teams import team_create

__all__ = ["DEMO_DIR", "DEMO_PASSWORD", "DEMO_TITLE", "DEMO_USERNAME", "PAST_CASES", "demo_load"]

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "perfcase-demo"
DEMO_TEAM = "Demo team"
DEMO_TITLE = "Containers serve half the TPS of VMs on the same hardware"
PAST_CASES = [VCPUS_CASE, TLS_CASE]


def demo_load() -> bool:
    """The demo user, its team and every case the database lacks; False if it had them all
    already."""
    User = get_user_model()
    user, created = User.objects.get_or_create(username=DEMO_USERNAME)
    if created:
        user.set_password(DEMO_PASSWORD)
        user.save()
    team = Team.objects.filter(name=DEMO_TEAM).first() or team_create(user=user, name=DEMO_TEAM)
    loaded = False
    for past in PAST_CASES:
        if not Investigation.objects.filter(team=team, title=past.title).exists():
            past_case_load(team=team, user=user, past=past)
            loaded = True
    demo = Investigation.objects.filter(team=team, title=DEMO_TITLE).first()
    if demo is None:
        _demo_case_load(team=team, user=user)
        return True
    # A demo loaded before it had its root cause, its write-up and its baseline.
    if not demo.case_root_causes.exists():
        loaded = demo_root_cause_load(investigation=demo, user=user) or loaded
    if not Postmortem.objects.filter(investigation=demo).exists():
        _demo_postmortem_load(investigation=demo, user=user)
        loaded = True
    if not demo.baseline_results.exists():
        baseline_load(investigation=demo, user=user)
        loaded = True
    return loaded


@transaction.atomic
def _demo_case_load(*, team: Team, user) -> None:
    """The main case: told, evidenced kind by kind, its root cause confirmed, written up,
    resolved."""
    start = timezone.now().replace(second=0, microsecond=0) - timedelta(days=2)
    investigation = investigation_create(
        team=team,
        user=user,
        title=DEMO_TITLE,
        severity=Severity.SEV2,
        tags=["cpu", "governor", "containers"],
        symptom_metric="TPS of the order API, single instance",
        symptom_unit="req/s",
        symptom_load="200 concurrent users, 4 vCPU / 8 GB instances",
        symptom_value_a=1150,
        symptom_value_b=2300,
        symptom_direction=Direction.HIGHER_IS_BETTER,
        started_at=start,
        detected_at=start + timedelta(minutes=2),
        notes=(
            "Root cause: the CPU frequency governor of the container hosts was "
            "'powersave', so their cores ran at the minimum clock. A start-up full GC "
            "bug made it visible: the slower side could not catch up under load."
        ),
        side_a_label="container",
        side_a_kind=SideKind.CONTAINER,
        side_b_label="VM",
        side_b_kind=SideKind.VM,
    )
    timeline_load(investigation=investigation, user=user, start=start, entries=DEMO_TIMELINE)
    hosts = hosts_load(team=team, investigation=investigation, user=user)
    path_load(investigation=investigation, user=user, hosts=hosts)
    facts_load(investigation=investigation, user=user)
    ladder_load(investigation=investigation, user=user)
    baseline_load(investigation=investigation, user=user)
    checklist_load(investigation=investigation, user=user)
    demo_root_cause_load(investigation=investigation, user=user)
    _demo_postmortem_load(investigation=investigation, user=user)
    investigation = investigation_update(
        investigation=investigation,
        user=user,
        mitigated_at=start + timedelta(minutes=150),
        resolved_at=start + timedelta(minutes=240),
    )
    investigation_set_status(investigation=investigation, user=user, status=Status.RESOLVED)


def _demo_postmortem_load(*, investigation, user) -> None:
    postmortem_load(
        investigation=investigation, user=user, postmortem=DEMO_POSTMORTEM, actions=DEMO_ACTIONS
    )
