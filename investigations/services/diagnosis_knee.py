"""A diagnosis's stage at the knee: the knee's load (of this run's ladder, else the case's
last) held again on both sides, a one-step ladder whose step the service hosts' CPU profile
and packet capture are tied to (their collections name the ladder and its step, as any
profile or capture taken during a ladder does), while the ladder samples the hosts. What to
profile and capture is found on each service host at that moment (runs/service_process.py).
"""

from django.utils.translation import gettext_noop

from collectors.errors import CollectorError
from collectors.listeners import capture_filter
from collectors.phrase import Phrase
from investigations import jobs
from investigations.choices import HostRole, LadderStatus
from investigations.connections import unready_reason
from investigations.models import EnvironmentMember, Ladder
from investigations.models.diagnoses import DiagnosisStage
from investigations.runs.service_process import find_service_process, url_port
from investigations.selectors.diagnoses import highest_held_load, last_ladder
from investigations.services.collections import collection_request, collection_time_limit
from investigations.services.ladders import hold_start_seconds, ladder_knee_load, ladder_request


class StageSkipped(Exception):
    """The stage cannot apply here; its reason says what a person can do about it."""

    def __init__(self, reason):
        super().__init__(str(reason))
        self.reason = reason


def _knee_source(diagnosis) -> Ladder | None:
    """The ladder whose knee to hold: this run's, else the case's last one that ran."""
    for stage in diagnosis.stages:
        if stage["name"] == DiagnosisStage.LADDER and stage.get("ladder"):
            return Ladder.objects.filter(pk=stage["ladder"]).first()
    return last_ladder(investigation=diagnosis.investigation)


def _service_members(diagnosis) -> dict:
    members = EnvironmentMember.objects.filter(
        investigation=diagnosis.investigation, role=HostRole.SERVICE
    ).select_related("host", "side")
    by_side = {"a": [], "b": []}
    for member in members.order_by("host__name"):
        by_side[member.side.key].append(member)
    missing = [key.upper() for key, found in by_side.items() if not found]
    if missing:
        raise StageSkipped(
            Phrase(
                gettext_noop(
                    "Place a host with the role 'service' on side %(sides)s: the knee is "
                    "profiled and captured on the service hosts."
                ),
                sides=" & ".join(missing),
            )
        )
    return by_side


def service_name(diagnosis) -> str:
    """The service's process name for the facts stage, so that the facts of the process
    itself (its cgroup's CPU quota and cpuset, its CPU affinity) are compared too: the
    process named for the run, else the one listening on the load URL's port on each side's
    service hosts, found there now. A facts collection names one process for every host: ""
    when the sides' names differ or none is found (the hosts' own facts are collected all
    the same). Hosts not ready to be reached (no credential, no trusted key) are not asked."""
    load = diagnosis.parameters.get("load") or {}
    members = EnvironmentMember.objects.filter(
        investigation=diagnosis.investigation, role=HostRole.SERVICE
    ).select_related("host__credential", "side")
    names = set()
    for key in ("a", "b"):
        named = diagnosis.parameters.get(f"process_{key}") or ""
        url = load.get(f"side_{key}_url")
        if named or not url:
            names.add(named)
            continue
        for member in members:
            if member.side.key != key or unready_reason(member.host):
                continue
            try:
                names.add(find_service_process(host=member.host, port=url_port(url)).name)
            except CollectorError:
                continue  # the facts stage itself says what is wrong with the host
    names.discard("")
    return names.pop() if len(names) == 1 else ""


def start_at_knee(diagnosis, stage):
    source = _knee_source(diagnosis)
    if source is None or source.status not in (LadderStatus.COMPLETED, LadderStatus.FAILED):
        raise StageSkipped(
            Phrase(
                gettext_noop(
                    "No ladder to find the knee in: run the ladder stage (give the load) or a "
                    "ladder first."
                )
            )
        )
    load = ladder_knee_load(ladder=source) or highest_held_load(ladder=source)
    if load is None:
        raise StageSkipped(
            Phrase(
                gettext_noop(
                    "Ladder #%(ladder)s has no knee and no step both sides held: there is no "
                    "load to hold."
                ),
                ladder=source.pk,
            )
        )
    settings = dict(diagnosis.parameters.get("load") or {})
    sides = {side.side.key: side for side in source.sides.select_related("side")}
    for key in ("a", "b"):
        if not settings.get(f"side_{key}_url") and sides.get(key) and sides[key].url:
            settings[f"side_{key}_url"] = sides[key].url
    if not (settings.get("side_a_url") and settings.get("side_b_url")):
        raise StageSkipped(
            Phrase(
                gettext_noop(
                    "Ladder #%(ladder)s was imported: give the sides' URLs (load) to hold its "
                    "knee here."
                ),
                ladder=source.pk,
            )
        )
    seconds = diagnosis.parameters["seconds"]
    found = []
    for key, members in _service_members(diagnosis).items():
        name = diagnosis.parameters.get(f"process_{key}") or ""
        port = url_port(settings[f"side_{key}_url"])
        for member in members:
            process = find_service_process(host=member.host, port=port, name=name)
            found.append((member, name, process, port))
    hold = ladder_request(
        investigation=diagnosis.investigation,
        user=diagnosis.requested_by,
        side_a_url=settings["side_a_url"],
        side_b_url=settings["side_b_url"],
        steps=[int(load) if float(load).is_integer() else load],
        step_seconds=seconds + 2,
        warmup_seconds=source.warmup_seconds,
        tool=source.tool,
        load_kind=source.load_kind,
        stop_error_rate=source.stop_error_rate,
        stop_p99_ms=source.stop_p99_ms,
        margin=source.margin,
        start_in=hold_start_seconds(),
    )
    stage["ladder"] = hold.pk
    stage["knee"] = {"ladder": source.pk, "load": load}
    stage["processes"] = []
    collections = []
    for member, name, process, port in found:
        on_step = {"seconds": seconds, "ladder": hold.pk, "step": "1"}
        what = {"process": name} if name else {"pid": str(process.pid)}
        # The capture finds the process again as it starts, under the held load, so that
        # connections it opens per request are in its filter too; a named process that
        # listens nowhere is captured by the connections it has now.
        traffic = (
            {"service_port": process.ports[0] if name else port}
            if process.ports
            else {"filter": capture_filter(process, ssh_port=member.host.port)}
        )
        for kind, parameters in (
            ("profile", {**on_step, **what}),
            ("capture", {**on_step, **traffic}),
        ):
            collections.append(
                collection_request(
                    investigation=diagnosis.investigation,
                    user=diagnosis.requested_by,
                    kind=kind,
                    host_ids=[member.host_id],
                    parameters=parameters,
                    queue_run=False,
                )
            )
        stage["processes"].append(
            {
                "side": member.side.key,
                "host": member.host.name,
                "name": process.name,
                "pid": process.pid,
                "ports": list(process.ports),
                "dependencies": [f"{host}:{port}" for host, port in process.dependencies],
            }
        )
    stage["collections"] = [collection.pk for collection in collections]
    # One task runs them all at once: a worker slot each would leave some waiting for the
    # others, past the held step.
    limit = max(collection_time_limit(collection=c, targets=1) for c in collections)
    jobs.enqueue(
        "perfcase.collections_run",
        stage["collections"],
        soft_time_limit=limit,
        time_limit=limit + 30,
    )
