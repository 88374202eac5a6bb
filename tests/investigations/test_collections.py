"""Collections end to end on the local transport, and the target lifecycle rules."""

import hashlib
from datetime import timedelta

import pytest
from django.utils import timezone

from collectors.facts import FactsSnapshot
from investigations.choices import EventKind, FindingStatus, TargetStatus
from investigations.models import Artifact, CollectionTarget, Finding, TimelineEvent
from investigations.services.collections import collection_request
from investigations.services.facts import facts_store
from investigations.services.findings import finding_set_status
from investigations.services.inventory import host_create, member_add
from investigations.services.targets import target_claim
from investigations.tasks import collect_target
from tests.conftest import ApiClient, jobs_of, wait_for


def place_local_hosts(personas, names=("app-a", "app-b")):
    hosts = []
    for name, side in zip(names, "ab", strict=True):
        host = host_create(
            team=personas.team,
            name=name,
            address="127.0.0.1",
            port=22,
            username="root",
            transport="local",
        )
        member_add(
            investigation=personas.investigation,
            user=personas.member,
            host=host,
            side_key=side,
            role="service",
        )
        hosts.append(host)
    return hosts


@pytest.mark.django_db(transaction=True)
def test_a_facts_collection_runs_through_the_worker_and_reports_progress(personas, celery_worker):
    place_local_hosts(personas)
    api = ApiClient(personas.member)
    investigation = personas.investigation.pk

    created = api.post(f"/api/investigations/{investigation}/collections", {"kind": "facts"})
    assert created.status_code == 201, created.body
    assert {t["status"] for t in created.body["targets"]} <= {"queued", "running"}

    status = wait_for(
        lambda: (
            (b := api.get(f"/api/collections/{created.body['id']}").body)["status"] == "completed"
            and b
        )
    )
    assert [(t["host_name"], t["side"], t["status"], t["progress"]) for t in status["targets"]] == [
        ("app-a", "a", "succeeded", 100),
        ("app-b", "b", "succeeded", 100),
    ]
    facts = api.get(f"/api/investigations/{investigation}/facts").body
    assert [(f["host_name"], f["side"]) for f in facts] == [("app-a", "a"), ("app-b", "b")]
    assert facts[0]["facts"]["kernel.release"] and facts[0]["facts"]["cpu.count"] >= 1
    assert facts[0]["probes"]["uname"]["status"] == "ok"
    # The raw output is kept as it came, with its size and checksum.
    for artifact in Artifact.objects.all():
        content = artifact.file.read()
        assert artifact.size == len(content) > 0
        assert artifact.sha256 == hashlib.sha256(content).hexdigest()
    summaries = list(
        TimelineEvent.objects.filter(kind=EventKind.COLLECTION).values_list("summary", flat=True)
    )
    assert summaries == [
        "Host facts requested from 2 hosts: app-a (A), app-b (B)",
        "Host facts collected from 2 of 2 hosts",
    ]


@pytest.mark.django_db
def test_a_redelivered_task_does_nothing(personas):
    place_local_hosts(personas)
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    target = collection.targets.first()

    collect_target.apply(args=[target.pk])
    first = CollectionTarget.objects.get(pk=target.pk)
    collect_target.apply(args=[target.pk])
    again = CollectionTarget.objects.get(pk=target.pk)

    assert first.status == again.status == TargetStatus.SUCCEEDED
    assert again.attempts == 1
    assert Artifact.objects.filter(target=target).count() == 1


@pytest.mark.django_db
def test_a_target_that_succeeded_says_done_not_its_last_step(personas):
    place_local_hosts(personas)
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    for target in collection.targets.all():
        collect_target.apply(args=[target.pk])

    body = ApiClient(personas.viewer).get(f"/api/collections/{collection.pk}").body
    chinese = ApiClient(personas.viewer).get(
        f"/api/collections/{collection.pk}", HTTP_ACCEPT_LANGUAGE="zh-CN"
    ).body

    assert {(t["status"], t["step"]) for t in body["targets"]} == {("succeeded", "done")}
    assert {t["step"] for t in chinese["targets"]} == {"完成"}


@pytest.mark.django_db
def test_a_target_past_its_deadline_is_failed_by_the_next_reader(personas):
    place_local_hosts(personas)
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    target = collection.targets.first()
    target_claim(target_id=target.pk, seconds=60)
    jobs_of(CollectionTarget.objects.filter(pk=target.pk)).update(
        deadline_at=timezone.now() - timedelta(seconds=1)
    )

    body = ApiClient(personas.viewer).get(f"/api/collections/{collection.pk}").body

    failed = next(t for t in body["targets"] if t["host"] == target.host_id)
    assert failed["status"] == "failed"
    assert "time limit" in failed["error"]


@pytest.mark.django_db
def test_only_placed_hosts_can_be_collected_from(personas):
    place_local_hosts(personas)
    stranger = host_create(
        team=personas.team, name="db-9", address="10.0.0.9", port=22, username="perf"
    )

    response = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "facts", "hosts": [stranger.pk]},
    )

    assert response.status_code == 400
    assert response.body["errors"][0]["field"] == "hosts"


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("service", "java; rm -rf /"),
        ("service", "$(reboot)"),
        ("paths", ["relative/path"]),
        ("paths", ["/data/../etc"]),
        ("paths", ["/with space"]),
        ("paths", ["/glob/*"]),
    ],
)
def test_hostile_service_names_and_paths_never_reach_a_host(personas, field, value):
    place_local_hosts(personas)

    response = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "facts", field: value},
    )

    assert response.status_code == 400
    assert response.body["errors"][0]["field"] == field
    assert not CollectionTarget.objects.exists()


def _store(personas, hosts, facts_a: dict, facts_b: dict):
    """Store two snapshots as a finished collection would (the facts themselves are given)."""
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    for target in collection.targets.select_related("collection__investigation", "host", "side"):
        target_claim(target_id=target.pk, seconds=60)
        facts = facts_a if target.side.key == "a" else facts_b
        facts_store(target=target, snapshot=FactsSnapshot(facts=dict(facts)))
    return collection


BASE = {"cpu.governor": "performance", "kernel.release": "6.1.0", "system.boot_id": "x"}


@pytest.mark.django_db
def test_a_finding_is_raised_once_and_resolved_when_the_difference_goes(personas):
    hosts = place_local_hosts(personas)
    slow = {**BASE, "cpu.governor": "powersave", "system.boot_id": "y"}

    _store(personas, hosts, slow, BASE)
    _store(personas, hosts, slow, BASE)

    finding = Finding.objects.get(rule="cpu_governor")
    assert (finding.side_a, finding.side_b, finding.status) == ("powersave", "performance", "open")
    raised = TimelineEvent.objects.filter(kind=EventKind.FINDING)
    assert list(raised.values_list("summary", flat=True)) == [
        "New findings (1): CPU frequency governor is 'powersave' on side A"
    ]

    _store(personas, hosts, BASE, BASE)

    finding.refresh_from_db()
    assert finding.status == FindingStatus.RESOLVED
    assert TimelineEvent.objects.filter(
        summary="Findings resolved, the difference is gone (1): "
        "CPU frequency governor is 'powersave' on side A"
    ).exists()


@pytest.mark.django_db
def test_a_dismissed_finding_stays_dismissed_on_recollection(personas):
    hosts = place_local_hosts(personas)
    slow = {**BASE, "cpu.governor": "powersave"}
    _store(personas, hosts, slow, BASE)
    finding = Finding.objects.get(rule="cpu_governor")

    finding_set_status(finding=finding, user=personas.member, status=FindingStatus.DISMISSED)
    _store(personas, hosts, slow, BASE)

    finding.refresh_from_db()
    assert finding.status == FindingStatus.DISMISSED
    assert Finding.objects.filter(rule="cpu_governor").count() == 1


@pytest.mark.django_db
def test_findings_are_listed_most_severe_first_with_both_values(personas):
    hosts = place_local_hosts(personas)
    _store(
        personas,
        hosts,
        {**BASE, "cpu.governor": "powersave", "net.core.somaxconn": 128},
        {**BASE, "net.core.somaxconn": 4096},
    )

    body = (
        ApiClient(personas.viewer)
        .get(f"/api/investigations/{personas.investigation.pk}/findings")
        .body
    )

    assert [(f["rule"], f["severity"]) for f in body] == [
        ("cpu_governor", "high"),
        ("fact_differs", "info"),
    ]
    assert (body[1]["subject"], body[1]["side_a"], body[1]["side_b"]) == (
        "net.core.somaxconn",
        "128",
        "4096",
    )


@pytest.mark.django_db
def test_people_confirm_and_dismiss_findings_but_viewers_cannot(personas):
    hosts = place_local_hosts(personas)
    _store(personas, hosts, {**BASE, "cpu.governor": "powersave"}, BASE)
    finding = Finding.objects.get()

    refused = ApiClient(personas.viewer).patch(
        f"/api/findings/{finding.pk}", {"status": "confirmed"}
    )
    hidden = ApiClient(personas.outsider).patch(
        f"/api/findings/{finding.pk}", {"status": "confirmed"}
    )
    done = ApiClient(personas.member).patch(f"/api/findings/{finding.pk}", {"status": "confirmed"})

    assert (refused.status_code, hidden.status_code, done.status_code) == (403, 404, 200)
    assert done.body["status"] == "confirmed"
    assert TimelineEvent.objects.filter(summary__startswith="Finding confirmed").exists()


@pytest.mark.django_db
def test_the_diff_marks_differences_and_never_counts_volatile_facts(personas):
    hosts = place_local_hosts(personas)
    _store(
        personas,
        hosts,
        {**BASE, "cpu.governor": "powersave", "cpu.mhz.current": 2000.0, "mm.swappiness": 60},
        {**BASE, "system.boot_id": "other", "cpu.mhz.current": 2100.0},
    )

    [pair] = (
        ApiClient(personas.member).get(f"/api/investigations/{personas.investigation.pk}/diff").body
    )
    kinds = {row["key"]: row["kind"] for row in pair["rows"]}

    assert kinds == {
        "cpu.governor": "differs",
        "cpu.mhz.current": "same",  # within the 10 % tolerance
        "kernel.release": "same",
        "mm.swappiness": "only_a",
        "system.boot_id": "volatile",
    }
    assert pair["differences"] == 1
    page = personas.client(personas.viewer).get(
        f"/investigations/{personas.investigation.pk}/facts/diff/?only=1"
    )
    html = page.content.decode()
    assert "cpu.governor" in html and "mm.swappiness" in html and "kernel.release" not in html


@pytest.mark.django_db
def test_the_collection_partial_stops_polling_when_every_target_ended(personas):
    hosts = place_local_hosts(personas)
    collection = _store(personas, hosts, BASE, BASE)
    client = personas.client(personas.viewer)

    response = client.get(f"/collections/{collection.pk}/", HTTP_HX_REQUEST="true")

    assert response.status_code == 286
    assert "hx-trigger" not in response.content.decode()
    assert "HX-Request" in response["Vary"]


@pytest.mark.django_db
def test_the_collection_partial_keeps_polling_while_targets_run(personas):
    place_local_hosts(personas)
    collection = collection_request(investigation=personas.investigation, user=personas.member)

    response = personas.client(personas.member).get(
        f"/collections/{collection.pk}/", HTTP_HX_REQUEST="true"
    )

    assert response.status_code == 200
    assert 'hx-trigger="every 2s"' in response.content.decode()


@pytest.mark.django_db
@pytest.mark.parametrize(("who", "status"), [("member", 302), ("viewer", 403), ("outsider", 404)])
def test_collecting_from_the_page_needs_a_responder(personas, who, status):
    place_local_hosts(personas)

    response = personas.client(getattr(personas, who)).post(
        f"/investigations/{personas.investigation.pk}/collections/", {"service": "", "paths": ""}
    )

    assert response.status_code == status
    assert CollectionTarget.objects.exists() == (status == 302)


@pytest.mark.django_db
def test_a_local_host_stays_editable_and_switchable_when_the_local_transport_is_off(
    personas, settings
):
    [host, _] = place_local_hosts(personas)
    settings.LOCAL_TRANSPORT = False
    client = personas.client(personas.member)

    page = client.get(f"/hosts/{host.pk}/").content.decode()
    renamed = ApiClient(personas.member).patch(f"/api/hosts/{host.pk}", {"name": "app-a2"})
    switched = ApiClient(personas.member).patch(f"/api/hosts/{host.pk}", {"transport": "ssh"})
    back = ApiClient(personas.member).patch(f"/api/hosts/{host.pk}", {"transport": "local"})

    assert 'name="transport"' in page  # shown, so that it can be switched to SSH
    assert renamed.status_code == 200 and renamed.body["transport"] == "local"
    assert switched.status_code == 200 and switched.body["transport"] == "ssh"
    assert back.status_code == 400 and back.body["errors"][0]["field"] == "transport"


@pytest.mark.django_db
def test_a_host_whose_jump_host_has_no_credential_is_the_callers_to_fix(personas):
    jump = host_create(
        team=personas.team, name="bastion", address="10.0.0.1", port=22, username="j"
    )
    behind = host_create(
        team=personas.team, name="inner", address="10.0.0.2", port=22, username="i", jump_host=jump
    )

    response = ApiClient(personas.member).post(f"/api/hosts/{behind.pk}/host-key/scan")

    assert response.status_code == 400
    assert "bastion has no credential" in response.body["detail"]
