"""A cancel stops every kind of collection on its hosts: real tcpdump, perf and the facts
probe over real sshd test hosts, a real Celery worker, the API. Each test starts a long run,
waits until its tool runs, cancels it, and finds within seconds the collection and its
targets cancelled, no tool of this run left on the test hosts (tests/ladders.none_left
looks only in this run's hosts' namespaces) and no PID or scratch file left. The baseline
pack's and the ladder's cancels have their own tests (test_baselines_end_to_end.py,
test_ladders_end_to_end.py)."""

import glob

import pytest

from investigations.models import Artifact, Capture, CollectionTarget, Profile
from tests.conftest import ApiClient, wait_for
from tests.conftest import trust_host_key as trust
from tests.investigations.test_captures import need_tcpdump
from tests.investigations.test_facts_end_to_end import place
from tests.investigations.test_profiles import ordersvc, start_workload  # noqa: F401
from tests.ladders import none_left

pytestmark = pytest.mark.django_db(transaction=True)


def start(api: ApiClient, personas, kind: str, **parameters) -> int:
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": kind, **parameters},
    )
    assert created.status_code == 201, created.body
    return created.body["id"]


def running(api: ApiClient, collection_id: int, step: str) -> None:
    """Once every target says it is at `step` (its tool has started)."""
    wait_for(
        lambda: all(
            t["step"].startswith(step)
            for t in api.get(f"/api/collections/{collection_id}").body["targets"]
        ),
        timeout=60,
        interval=0.2,
    )


def cancel_and_wait(api: ApiClient, collection_id: int) -> dict:
    """Cancel through the API; the collection as it ended (within 30 s)."""
    answer = api.post(f"/api/collections/{collection_id}/cancel")
    assert answer.status_code == 200, answer.body
    assert answer.body["cancel_requested_at"]
    return wait_for(
        lambda: (
            (body := api.get(f"/api/collections/{collection_id}").body)["completed_at"] and body
        ),
        timeout=30,
        interval=0.2,
    )


def assert_cancelled(collection: dict) -> None:
    assert collection["status"] == "cancelled", collection
    assert {(t["status"], t["error"]) for t in collection["targets"]} == {
        ("cancelled", "Cancelled.")
    }, collection["targets"]


def left_files(collection: dict, *patterns: str) -> list[str]:
    """This collection's PID and scratch files still on the hosts (their /tmp is this
    machine's)."""
    targets = CollectionTarget.objects.filter(collection_id=collection["id"])
    return [
        path
        for target in targets.values_list("pk", flat=True)
        for pattern in patterns
        for path in glob.glob(pattern.format(target=target))
    ]


def test_a_cancelled_capture_stops_tcpdump_and_keeps_no_capture(
    personas, celery_worker, credential, start_host
):
    need_tcpdump()
    api = ApiClient(personas.member)
    for side in ("a", "b"):
        test_host = start_host(f"cap-{side}", dump=None, username="root")
        trust(api, place(personas, credential, test_host, side))
    collection_id = start(api, personas, "capture", seconds=120, interface="lo")
    running(api, collection_id, "capturing")
    assert not none_left("tcpdump")

    collection = cancel_and_wait(api, collection_id)

    assert_cancelled(collection)
    assert wait_for(lambda: none_left("tcpdump"), timeout=10)
    assert left_files(collection, "/tmp/perfcase-capture-{target}-*") == []
    # Nothing half-made is kept as if it were a capture.
    assert not Capture.objects.filter(target__collection_id=collection_id).exists()
    assert not Artifact.objects.filter(collection_id=collection_id).exists()


def test_a_cancelled_profile_stops_perf_and_keeps_no_profile(
    personas,
    celery_worker,
    credential,
    start_host,
    ordersvc,  # noqa: F811
):
    api = ApiClient(personas.member)
    for side in ("a", "b"):
        test_host = start_host(f"prof-{side}", dump=None, pid_namespace=True)
        start_workload(test_host, ordersvc, side)
        trust(api, place(personas, credential, test_host, side))
    collection_id = start(api, personas, "profile", process="ordersvc", seconds=120)
    running(api, collection_id, "recording")
    assert not none_left("perf")

    collection = cancel_and_wait(api, collection_id)

    assert_cancelled(collection)
    assert wait_for(lambda: none_left("perf"), timeout=10)
    assert (
        left_files(collection, "/tmp/perfcase-profile-{target}-*", "/tmp/perfcase-*-{target}-*")
        == []
    )
    assert not Profile.objects.filter(target__collection_id=collection_id).exists()


def test_a_cancelled_facts_probe_stops_on_its_host(personas, celery_worker, credential, start_host):
    api = ApiClient(personas.member)
    for side in ("a", "b"):
        # The probe hangs in this program (sleep 3600) until its own limit.
        test_host = start_host(f"facts-{side}", hang_tools=["systemd-detect-virt"])
        trust(api, place(personas, credential, test_host, side))
    collection_id = start(api, personas, "facts")
    running(api, collection_id, "running the probes")
    wait_for(lambda: not none_left("sleep"), timeout=20)

    collection = cancel_and_wait(api, collection_id)

    assert_cancelled(collection)
    assert wait_for(lambda: none_left("sleep"), timeout=15)
    assert left_files(collection, "/tmp/perfcase-facts-{target}-*") == []
    assert not Artifact.objects.filter(collection_id=collection_id).exists()
