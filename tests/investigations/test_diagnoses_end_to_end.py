"""Diagnosis runs end to end: real sshd test hosts, a real Celery worker, real tools (facts,
sysbench, wrk, perf, tcpdump, ss), through the JSON API."""

import io
import socket

import pytest

from collectors.ssh import Connection
from investigations.models import Collection, FactSnapshot, Ladder, TimelineEvent
from investigations.selectors.captures import ladder_captures
from investigations.selectors.profiles import ladder_profiles
from tests.conftest import ApiClient, wait_for
from tests.conftest import trust_host_key as trust
from tests.investigations.test_cancel import left_files
from tests.investigations.test_facts_end_to_end import place
from tests.ladders import none_left, require
from tests.loadservers import SERVER

pytestmark = pytest.mark.django_db(transaction=True)
ENDED = ("completed", "failed", "cancelled")


def start(api, personas, body) -> dict:
    created = api.post(f"/api/investigations/{personas.investigation.pk}/diagnoses", body)
    assert created.status_code == 202, created.body
    return created.body


def ended(api, diagnosis_id, timeout=240) -> dict:
    return wait_for(
        lambda: (
            (body := api.get(f"/api/diagnoses/{diagnosis_id}").body)["status"] in ENDED and body
        ),
        timeout=timeout,
        interval=0.5,
    )


def stages_of(body) -> dict:
    return {stage["name"]: stage for stage in body["stages"]}


def test_a_host_that_cannot_be_reached_fails_its_stages_and_the_others_still_run(
    personas, celery_worker, credential, start_host
):
    require("sysbench")
    api = ApiClient(personas.member)
    test_hosts = {}
    for side in ("a", "b"):
        test_hosts[side] = start_host(f"app-{side}", dump=None)
        trust(api, place(personas, credential, test_hosts[side], side))
    gone = start_host("db-b", dump=None)
    lost = place(personas, credential, gone, "b", role="database")
    trust(api, lost)
    gone.stop()  # trusted, then gone
    body = start(
        api,
        personas,
        {"baseline": {"suite": ["compute"], "repeat": 1, "seconds": 1}},
    )
    body = ended(api, body["id"])

    assert body["status"] == "completed", body
    stages = stages_of(body)
    for name in ("facts", "baseline"):
        assert stages[name]["status"] == "failed", stages[name]
        assert lost.name in stages[name]["reason"], stages[name]
        assert stages[name]["collections"], stages[name]
    # The hosts that answered were collected from all the same.
    assert FactSnapshot.objects.filter(investigation=personas.investigation).count() == 2
    assert stages["ladder"]["status"] == "skipped"
    assert "No load to run" in stages["ladder"]["reason"]
    assert stages["at_knee"]["status"] == "skipped"
    assert "No ladder to find the knee in" in stages["at_knee"]["reason"]
    assert body["progress"] == 100 and body["seconds_left"] == 0
    summaries = list(
        TimelineEvent.objects.filter(details__diagnosis=body["id"])
        .order_by("occurred_at", "id")
        .values_list("summary", flat=True)
    )
    assert summaries[0].startswith(f"Diagnosis #{body['id']} started")
    assert any(s.startswith(f"Diagnosis #{body['id']}: Host facts failed") for s in summaries)
    assert summaries[-1].startswith(f"Diagnosis #{body['id']} finished: 0 of 4")


@pytest.fixture
def served(personas, credential, start_host):
    """A load generator and a service host on each side, real sshd test hosts with their keys
    trusted, each service host running a small HTTP service as its own user (so that the host
    shows which process listens, and perf may profile it). Host rows by (side, role), and the
    URL of each side's service."""
    return serve(personas, credential, start_host)


def serve(personas, credential, start_host, *, hide_on_b=()):
    """`served`, with the commands `hide_on_b` missing on side B's service host."""
    for tool in ("wrk", "perf", "tcpdump", "ss"):
        require(tool)
    api = ApiClient(personas.member)
    hosts, urls = {}, {}
    for side in ("a", "b"):
        for role in ("load_generator", "service"):
            # A service host is signed in to as root (tcpdump needs it), in a PID namespace
            # of its own (as the profile tests' hosts).
            options = {"username": "root", "pid_namespace": True} if role == "service" else {}
            if role == "service" and side == "b":
                options["hide_tools"] = hide_on_b
            test_host = start_host(f"{role[:4]}-{side}", dump=None, **options)
            hosts[(side, role)] = place(personas, credential, test_host, side, role=role)
            trust(api, hosts[(side, role)])
            if role == "service":
                port = _free_port()
                _run_on(
                    test_host,
                    "sh",
                    "-c",
                    'setsid /usr/bin/python3 -c "$0" "$1" 5 1 0 </dev/null >/dev/null 2>&1 &',
                    SERVER,
                    str(port),
                )
                _wait_for_port(port)
                urls[side] = f"http://127.0.0.1:{port}/"
    return hosts, urls


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_for_port(port: int) -> None:
    def listening():
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return True
        except OSError:
            return False

    wait_for(listening, timeout=15)


def _run_on(test_host, *argv: str) -> None:
    with Connection(test_host.endpoint()) as connection:
        connection.run(list(argv), sink=io.BytesIO(), timeout=20)


def test_the_ladder_then_the_knee_held_with_a_profile_and_a_capture_on_both_sides(
    personas, celery_worker, served
):
    placed, urls = served
    url_a, url_b = urls["a"], urls["b"]
    api = ApiClient(personas.member)
    body = start(
        api,
        personas,
        {
            "stages": ["ladder", "at_knee"],
            "load": {
                "side_a_url": url_a,
                "side_b_url": url_b,
                "steps": [1, 4],
                "step_seconds": 2,
                "warmup_seconds": 1,
            },
            "seconds": 2,
        },
    )
    body = ended(api, body["id"])

    stages = stages_of(body)
    assert stages["ladder"]["status"] == "succeeded", stages["ladder"]
    knee = stages["at_knee"]
    assert knee["status"] == "succeeded", knee
    hold = Ladder.objects.get(pk=knee["ladder"])
    assert hold.status == "completed" and len(hold.steps) == 1
    assert hold.steps[0] in Ladder.objects.get(pk=stages["ladder"]["ladder"]).steps
    kinds = sorted(
        Collection.objects.filter(pk__in=knee["collections"]).values_list("kind", flat=True)
    )
    assert kinds == ["capture", "capture", "profile", "profile"]
    # Taken during the held step, on both service hosts, as any profile or capture during a
    # ladder is.
    service = {placed[(side, "service")].pk for side in "ab"}
    assert {p.host_id for p in ladder_profiles(ladder=hold)} == service
    assert {c.host_id for c in ladder_captures(ladder=hold)} == service
    # The capture held the service's own traffic, found on the host as the capture began:
    # the port it listens on, never the SSH session to the host.
    captures = {c.target.collection_id: c for c in ladder_captures(ladder=hold)}
    for collection in Collection.objects.filter(pk__in=knee["collections"], kind="capture"):
        target = collection.targets.select_related("host", "side").get()
        port = (url_a if target.side.key == "a" else url_b).rsplit(":", 1)[1].strip("/")
        assert collection.parameters["service_port"] == int(port)
        captured = captures[collection.pk].filter
        assert f"tcp port {port}" in captured
        assert captured.endswith(f"and not tcp port {target.host.port}")
    assert none_left("wrk") and none_left("perf") and none_left("tcpdump")


def test_cancel_at_the_knee_stops_the_load_perf_and_tcpdump_on_every_host(
    personas, celery_worker, served
):
    _placed, urls = served
    api = ApiClient(personas.member)
    body = start(
        api,
        personas,
        {
            "stages": ["ladder", "at_knee"],
            "load": {
                "side_a_url": urls["a"],
                "side_b_url": urls["b"],
                "steps": [2],
                "step_seconds": 1,
                "warmup_seconds": 0,
            },
            "seconds": 60,
        },
    )

    # Wait until the knee's profile and capture are recording on the hosts.
    def recording():
        knee = stages_of(api.get(f"/api/diagnoses/{body['id']}").body)["at_knee"]
        if knee["status"] != "running":
            return False
        collections = [api.get(f"/api/collections/{c}").body for c in knee["collections"]]
        steps = [t["step"] for c in collections for t in c["targets"]]
        return all(t["status"] == "running" for c in collections for t in c["targets"]) and (
            all(step.startswith(("recording", "capturing")) for step in steps)
        )

    wait_for(recording, timeout=120, interval=0.5)
    cancelled = api.post(f"/api/diagnoses/{body['id']}/cancel", {})
    assert cancelled.status_code == 200, cancelled.body
    assert cancelled.body["status"] == "cancelled"
    knee = stages_of(cancelled.body)["at_knee"]
    assert knee["status"] == "cancelled"

    def stopped():
        collections = Collection.objects.filter(pk__in=knee["collections"])
        return all(c.completed_at for c in collections) and (
            Ladder.objects.get(pk=knee["ladder"]).status in ENDED
        )

    wait_for(stopped, timeout=60, interval=0.5)
    assert Ladder.objects.get(pk=knee["ladder"]).status == "cancelled"
    assert wait_for(
        lambda: none_left("wrk") and none_left("perf") and none_left("tcpdump"), timeout=15
    )


def test_a_url_that_refuses_fails_the_ladder_saying_so_and_the_knee_does_not_run(
    personas, celery_worker, served
):
    _placed, urls = served
    refused = f"http://127.0.0.1:{_free_port()}/"
    api = ApiClient(personas.member)
    body = start(
        api,
        personas,
        {
            "stages": ["ladder", "at_knee"],
            "load": {
                "side_a_url": urls["a"],
                "side_b_url": refused,
                "steps": [1, 2],
                "step_seconds": 1,
                "warmup_seconds": 0,
            },
            "seconds": 2,
        },
    )
    body = ended(api, body["id"])

    stages = stages_of(body)
    assert stages["ladder"]["status"] == "failed", stages["ladder"]
    assert "connection refused" in stages["ladder"]["reason"], stages["ladder"]
    assert refused in stages["ladder"]["reason"], stages["ladder"]
    # Nothing serves B's URL on its service host: the knee says so rather than profile air.
    assert stages["at_knee"]["status"] == "skipped", stages["at_knee"]
    assert stages["at_knee"]["reason"], stages["at_knee"]
    assert not stages["at_knee"]["collections"]
    assert none_left("wrk")


def to_the_knee(api, personas, urls, **more) -> dict:
    """A diagnosis of a one-step ladder (2 connections, 1 s) and its knee held 2 s, ended."""
    load = {"side_a_url": urls["a"], "side_b_url": urls["b"], "steps": [2], "step_seconds": 1}
    body = {"stages": ["ladder", "at_knee"], "load": {**load, "warmup_seconds": 0}}
    return ended(api, start(api, personas, {**body, "seconds": 2, **more})["id"])


def test_perf_missing_on_one_side_fails_its_profile_saying_so_and_the_knee_still_captures(
    personas, celery_worker, credential, start_host
):
    _hosts, urls = serve(personas, credential, start_host, hide_on_b=("perf",))
    body = to_the_knee(ApiClient(personas.member), personas, urls)

    stages = stages_of(body)
    assert stages["ladder"]["status"] == "succeeded", stages["ladder"]
    knee = stages["at_knee"]
    assert knee["status"] == "failed", knee
    assert "serv-b" in knee["reason"] and "perf" in knee["reason"], knee
    assert "install" in knee["reason"], knee  # what to do about it
    collections = {c.pk: c for c in Collection.objects.filter(pk__in=knee["collections"])}
    by_kind = {}
    for collection in collections.values():
        for target in collection.targets.select_related("job", "host"):
            by_kind[(collection.kind, target.host.name)] = target.job.status
    # A's profile and both captures went on without B's perf.
    assert by_kind[("profile", "serv-a")] == "succeeded", by_kind
    assert by_kind[("capture", "serv-a")] == by_kind[("capture", "serv-b")] == "succeeded"
    assert by_kind[("profile", "serv-b")] == "failed", by_kind
    assert none_left("wrk") and none_left("perf") and none_left("tcpdump")


def test_a_process_that_is_not_running_skips_the_knee_naming_it_and_the_ladder_still_runs(
    personas, celery_worker, served
):
    _placed, urls = served
    body = to_the_knee(ApiClient(personas.member), personas, urls, process_b="nosuchd")

    stages = stages_of(body)
    assert stages["ladder"]["status"] == "succeeded", stages["ladder"]
    knee = stages["at_knee"]
    assert knee["status"] == "skipped" and not knee["collections"], knee
    assert "No process named nosuchd listens on serv-b: is it running?" in knee["reason"], knee
    assert none_left("wrk")


@pytest.mark.parametrize(
    ("stage", "body", "tool"),
    [
        (
            "baseline",
            {"baseline": {"suite": ["compute"], "repeat": 1, "seconds": 60}},
            "sysbench",
        ),
        ("ladder", {"load": {"steps": [2], "step_seconds": 60, "warmup_seconds": 0}}, "wrk"),
    ],
)
def test_cancel_in_the_baseline_or_the_ladder_stops_its_tools_on_every_host(
    personas, celery_worker, served, stage, body, tool
):
    """The knee and the facts stage have their own tests: here the two stages whose tools
    run for long."""
    require(tool)
    _placed, urls = served
    api = ApiClient(personas.member)
    if "load" in body:
        body = {"load": {**body["load"], "side_a_url": urls["a"], "side_b_url": urls["b"]}}
    started = start(api, personas, {"stages": [stage], **body})

    def running() -> bool:
        found = stages_of(api.get(f"/api/diagnoses/{started['id']}").body)[stage]
        return found["status"] == "running" and not none_left(tool)

    wait_for(running, timeout=120, interval=0.5)
    cancelled = api.post(f"/api/diagnoses/{started['id']}/cancel", {})
    assert cancelled.status_code == 200, cancelled.body
    assert stages_of(cancelled.body)[stage]["status"] == "cancelled"
    assert wait_for(lambda: none_left(tool), timeout=30)
    for collection in Collection.objects.filter(investigation=personas.investigation):
        wait_for(lambda c=collection: Collection.objects.get(pk=c.pk).completed_at, timeout=30)
    for ladder in Ladder.objects.filter(investigation=personas.investigation):
        wait_for(lambda row=ladder: Ladder.objects.get(pk=row.pk).status in ENDED, timeout=30)
        assert Ladder.objects.get(pk=ladder.pk).status == "cancelled"


def test_cancel_in_the_facts_stage_stops_the_probe_on_every_host(
    personas, celery_worker, credential, start_host
):
    """The fourth stage's cancel, through the run (the facts kind's own is in test_cancel.py):
    the probe hangs in one program (sleep 3600) until the run is cancelled."""
    api = ApiClient(personas.member)
    for side in ("a", "b"):
        test_host = start_host(f"diagnosed-{side}", hang_tools=["systemd-detect-virt"])
        trust(api, place(personas, credential, test_host, side))
    started = start(api, personas, {"stages": ["facts"]})

    def probing() -> bool:
        found = stages_of(api.get(f"/api/diagnoses/{started['id']}").body)["facts"]
        return found["status"] == "running" and not none_left("sleep")

    wait_for(probing, timeout=60, interval=0.5)
    cancelled = api.post(f"/api/diagnoses/{started['id']}/cancel", {})

    assert cancelled.status_code == 200, cancelled.body
    assert cancelled.body["status"] == "cancelled"
    assert stages_of(cancelled.body)["facts"]["status"] == "cancelled"
    assert wait_for(lambda: none_left("sleep"), timeout=30)
    (collection,) = Collection.objects.filter(investigation=personas.investigation)
    wait_for(lambda: Collection.objects.get(pk=collection.pk).completed_at, timeout=30)
    assert {t.status for t in collection.targets.all()} == {"cancelled"}
    assert not FactSnapshot.objects.filter(investigation=personas.investigation).exists()
    assert left_files({"id": collection.pk}, "/tmp/perfcase-facts-{target}-*") == []
