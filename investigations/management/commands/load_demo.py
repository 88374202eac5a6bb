"""Demo data: one lived-in investigation, so a newcomer sees what a case looks like.

Modelled on a real incident (a VM against a container on identical hardware), told in our
own words. It has sides and a timeline but no hosts: the demo invents no machines.
"""

from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from investigations.choices import (
    ActionKind,
    Direction,
    EventKind,
    ItemStatus,
    NodeState,
    Severity,
    SideKind,
    Status,
)
from investigations.models import Investigation, Team
from investigations.services.checklist import checklist_item_update
from investigations.services.investigations import (
    investigation_create,
    investigation_set_status,
    investigation_update,
)
from investigations.services.path import path_from_text, path_node_set_state, path_node_update
from investigations.services.teams import team_create
from investigations.services.timeline import timeline_entry_add

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "perfcase-demo"
DEMO_TEAM = "Demo team"
DEMO_TITLE = "Containers serve half the TPS of VMs on the same hardware"

# (minutes after the start, kind, action, what happened)
DEMO_TIMELINE = [
    (0, EventKind.NOTE, "", "Traffic surge after the campaign went live; many API calls time out."),
    (6, EventKind.ACTION, ActionKind.RATE_LIMIT, "Rate limit on the public API gateway."),
    (
        14,
        EventKind.ACTION,
        ActionKind.RESTART,
        "Restarted the service. VM instances came back; container instances failed to start "
        "and were taken out of traffic.",
    ),
    (25, EventKind.ACTION, ActionKind.SCALE_OUT, "Scaled out both the VM and the container pools."),
    (31, EventKind.NOTE, "", "Two new container instances unhealthy; removed from the pool."),
    (
        55,
        EventKind.ACTION,
        ActionKind.RATE_LIMIT,
        "Error rate normal for 20 minutes: rate limit lifted.",
    ),
    (80, EventKind.NOTE, "", "Second, larger surge. Timeouts again."),
    (83, EventKind.ACTION, ActionKind.RATE_LIMIT, "Rate limit back on."),
    (
        90,
        EventKind.ACTION,
        ActionKind.SCALE_OUT,
        "Scaled out again. Some deployments failed, more of them on containers; container "
        "instances spend seconds in full GC while requests pile up.",
    ),
    (
        130,
        EventKind.NOTE,
        "",
        "Found a code bug that triggers a full GC at start-up on every instance.",
    ),
    (150, EventKind.ACTION, ActionKind.FIX, "Deployed the fix for the start-up full GC."),
    (
        175,
        EventKind.NOTE,
        "",
        "Load test on one instance of each: the container does half the TPS of the VM and its "
        "average response time is higher. Same hardware model, same image.",
    ),
    (
        230,
        EventKind.NOTE,
        "",
        "lscpu on the container host: current MHz sits at the minimum. scaling_governor is "
        "'powersave' there and 'performance' on the VM host.",
    ),
    (
        240,
        EventKind.ACTION,
        ActionKind.FIX,
        "Set the governor to performance on the container hosts (cpupower frequency-set -g "
        "performance); containers now match or beat the VMs.",
    ),
    (
        300,
        EventKind.NOTE,
        "",
        "Follow-up: export the governor from node_exporter and alert when a host is not on "
        "'performance'; benchmark both platforms before the next launch.",
    ),
]


class Command(BaseCommand):
    help = "Create the demo user, team and investigation (idempotent; DEBUG only)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError(
                "The demo user has a published password: load_demo runs only with DEBUG on."
            )
        User = get_user_model()
        user, created = User.objects.get_or_create(username=DEMO_USERNAME)
        if created:
            user.set_password(DEMO_PASSWORD)
            user.save()
        team = Team.objects.filter(name=DEMO_TEAM).first() or team_create(user=user, name=DEMO_TEAM)
        if Investigation.objects.filter(team=team, title=DEMO_TITLE).exists():
            self.stdout.write("Demo data already loaded.")
            return
        self._load(team, user)
        self.stdout.write(self.style.SUCCESS("Demo data loaded."))

    @transaction.atomic
    def _load(self, team: Team, user) -> None:
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
        for minutes, kind, action, summary in DEMO_TIMELINE:
            timeline_entry_add(
                investigation=investigation,
                user=user,
                kind=kind,
                action=action,
                summary=summary,
                occurred_at=start + timedelta(minutes=minutes),
            )
        investigation = investigation_update(
            investigation=investigation,
            user=user,
            mitigated_at=start + timedelta(minutes=150),
            resolved_at=start + timedelta(minutes=240),
        )
        investigation_set_status(investigation=investigation, user=user, status=Status.RESOLVED)
        self._path_and_checklist(investigation, user)

    def _path_and_checklist(self, investigation, user) -> None:
        nodes = {
            node.label: node
            for node in path_from_text(
                investigation=investigation,
                user=user,
                text="loadgen -> lb:slb -> gateway -> order-api -[mysql:3306, long]-> db:mysql",
            )
        }
        path_node_update(
            node=nodes["order-api"],
            user=user,
            spec_a="container, 4 vCPU / 8 GB, same image",
            spec_b="VM, 4 vCPU / 8 GB, same image",
        )
        for label, note in (
            ("loadgen", "The same load test plan and machine for both sides."),
            ("slb", "New connections and bandwidth far below the instance's limits."),
            ("gateway", "Gateway CPU under 30 % during the surge."),
            ("mysql", "Same database for both pools; its latency flat during the test."),
        ):
            path_node_set_state(node=nodes[label], user=user, state=NodeState.RULED_OUT, note=note)
        path_node_set_state(
            node=nodes["order-api"],
            user=user,
            state=NodeState.SUSPECT,
            note="The container pool serves half the TPS of the VM pool at the same load.",
        )
        for key, status, notes in (
            ("ladder", ItemStatus.DONE, "Single instance of each, 50 to 400 users in steps of 50."),
            ("host_at_knee", ItemStatus.DONE, "lscpu: the container host runs at its minimum MHz."),
            ("root_cause", ItemStatus.DONE, "Governor powersave on the container hosts."),
            ("write_up", ItemStatus.IN_PROGRESS, "Add the governor alert before closing."),
        ):
            checklist_item_update(
                item=investigation.checklist.get(key=key), user=user, status=status, notes=notes
            )
