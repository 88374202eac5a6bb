"""Demo data: one lived-in investigation, so a newcomer sees what a case looks like.

Modelled on a real incident (a VM against a container on identical hardware), told in our
own words. Its evidence goes through the same parsers and services as real evidence: wrk
results imported as a ladder on both sides, and one host per side with a facts snapshot,
from the files in demo/ (written for the demo, not measured: demo/README.md). The hosts have
documentation addresses (RFC 5737), no credential and no trusted host key: nothing is ever
contacted.
"""

import hashlib
import tempfile
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from django.db import transaction
from django.utils import timezone

from collectors.facts import parse_facts
from investigations.choices import (
    ActionKind,
    CollectionKind,
    Direction,
    EventKind,
    HostRole,
    HostTransport,
    ImportFormat,
    ItemStatus,
    NodeState,
    Severity,
    SideKind,
    Status,
)
from investigations.models import Host, Investigation, Team
from investigations.runs.capture import Captured
from investigations.services.checklist import checklist_item_update
from investigations.services.collections import artifact_store, collection_request, target_claim
from investigations.services.facts import facts_refresh, facts_store
from investigations.services.inventory import host_create, member_add
from investigations.services.investigations import (
    investigation_create,
    investigation_set_status,
    investigation_update,
)
from investigations.services.ladder_imports import ladder_import
from investigations.services.path import path_from_text, path_node_set_state, path_node_update
from investigations.services.teams import team_create
from investigations.services.timeline import timeline_entry_add

DEMO_USERNAME = "demo"
DEMO_PASSWORD = "perfcase-demo"
DEMO_TEAM = "Demo team"
DEMO_TITLE = "Containers serve half the TPS of VMs on the same hardware"

# The evidence files: wrk-<side>-c<connections>.txt and facts-<side>-<host>.txt.
DEMO_DIR = Path(__file__).resolve().parent / "demo"
# One service host per side: (name, address, its probe output in DEMO_DIR). The addresses
# are in 192.0.2.0/24 (RFC 5737, documentation only). SSH without a credential or a trusted
# host key: a collection from them fails before it connects.
DEMO_HOSTS = {
    "a": ("order-api-container-host", "192.0.2.10", "facts-a-container-host.txt"),
    "b": ("order-api-vm", "192.0.2.20", "facts-b-vm.txt"),
}

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
        hosts = self._hosts(team, investigation, user)
        self._path(investigation, user, hosts)
        self._facts(investigation, user)
        self._ladder(investigation, user)
        self._checklist(investigation, user)
        investigation = investigation_update(
            investigation=investigation,
            user=user,
            mitigated_at=start + timedelta(minutes=150),
            resolved_at=start + timedelta(minutes=240),
        )
        investigation_set_status(investigation=investigation, user=user, status=Status.RESOLVED)

    def _hosts(self, team: Team, investigation, user) -> dict[str, Host]:
        """The service host of each side, placed on it: the environments pair up."""
        hosts = {}
        for side, (name, address, _) in DEMO_HOSTS.items():
            # Kept from an earlier demo whose investigation was deleted: host names are unique.
            host = Host.objects.filter(team=team, name=name).first() or host_create(
                team=team,
                name=name,
                address=address,
                port=22,
                username="deploy",
                transport=HostTransport.SSH,
            )
            member_add(
                investigation=investigation,
                user=user,
                host=host,
                side_key=side,
                role=HostRole.SERVICE,
            )
            hosts[side] = host
        return hosts

    def _facts(self, investigation, user) -> None:
        """A facts snapshot per host, stored as a collection stores it: the request makes
        the targets; each is claimed here at once and given the probe output shipped in
        DEMO_DIR, so the run the request enqueues finds nothing left to claim and connects
        to nothing. The rules then raise their findings from these facts."""
        collection = collection_request(
            investigation=investigation, user=user, kind=CollectionKind.FACTS
        )
        for target in collection.targets.all():
            claimed = target_claim(target_id=target.pk, seconds=60)
            raw = (DEMO_DIR / DEMO_HOSTS[claimed.side.key][2]).read_bytes()
            facts_store(
                target=claimed,
                snapshot=parse_facts(raw),
                attempt=claimed.attempts,
                refresh=False,
            )
            captured = _captured(f"facts-{claimed.host.name}-{claimed.side.key}.txt", raw)
            try:
                artifact_store(target=claimed, captured=captured)
            finally:
                captured.close()
        facts_refresh(investigation=investigation)

    def _ladder(self, investigation, user) -> None:
        """The wrk results of both sides, imported onto one ladder: A first, then B."""
        ladder = None
        for side in ("a", "b"):
            files = [
                (path.name, path.read_bytes())
                for path in sorted(DEMO_DIR.glob(f"wrk-{side}-c*.txt"))
            ]
            ladder = ladder_import(
                investigation=investigation,
                user=user,
                side_key=side,
                format=ImportFormat.WRK,
                files=files,
                ladder=ladder,
            )

    def _path(self, investigation, user, hosts: dict[str, Host]) -> None:
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
            hosts_a=[hosts["a"]],
            hosts_b=[hosts["b"]],
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

    def _checklist(self, investigation, user) -> None:
        """The path, the pairs and the ladder are done by their evidence already (the
        services refresh the checklist); the sides do not match while the findings are
        open. Set by hand here: only what a person's judgement settles."""
        checklist_item_update(
            item=investigation.checklist.get(key="ladder"),
            user=user,
            notes="One instance of each, wrk -t4 -d60s --latency, 50 to 400 connections.",
        )
        for key, status, notes in (
            (
                "host_at_knee",
                ItemStatus.DONE,
                "Host facts of both service hosts: the container host runs the 'powersave' "
                "governor at its 1500 MHz minimum, the VM host 'performance' (see the "
                "findings on the CPU governor and clock).",
            ),
            (
                "root_cause",
                ItemStatus.DONE,
                "Governor powersave on the container hosts (see the notes and the timeline).",
            ),
            ("write_up", ItemStatus.IN_PROGRESS, "Add the governor alert before closing."),
        ):
            checklist_item_update(
                item=investigation.checklist.get(key=key), user=user, status=status, notes=notes
            )


def _captured(name: str, raw: bytes) -> Captured:
    """A shipped output as the runner's capture would hold it, to keep as an artifact."""
    file = tempfile.TemporaryFile()
    file.write(raw)
    return Captured(
        name=name,
        file=file,
        size=len(raw),
        sha256=hashlib.sha256(raw).hexdigest(),
        truncated=False,
        exit_status=0,
    )
