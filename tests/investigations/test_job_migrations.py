"""The migrations that move each kind of background work onto Job carry existing rows over:
a database that holds rows of each kind, migrated forward, reads as it did."""

import traceback
from datetime import timedelta

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone

APP = "investigations"
BEFORE = "0021_target_timings"
AFTER = "0026_ladder_side_jobs"


def migrate(target: str):
    """The database migrated to `target`; the historical models' registry there."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate([(APP, target)])
    executor.loader.build_graph()
    return executor.loader.project_state([(APP, target)]).apps


def rows_of_each_kind(apps) -> dict:
    """A team's hosts: one never scanned, one scanning, one whose scan failed with a phrase,
    one done."""
    Team = apps.get_model(APP, "Team")
    Host = apps.get_model(APP, "Host")
    team = Team.objects.create(name="migrated")
    asked = timezone.now() - timedelta(seconds=5)

    def host(name, **scan):
        return Host.objects.create(
            team=team, name=name, address="192.0.2.1", username="p", **scan
        ).pk

    Delivery = apps.get_model(APP, "WebhookDelivery")
    claimed = timezone.now() - timedelta(seconds=3)
    delivered = Delivery.objects.create(
        team=team,
        url="https://hooks.example.com/a",
        payload={"text": "a"},
        status="delivered",
        attempts=2,
        claimed_at=claimed,
        finished_at=timezone.now(),
    )
    failed = Delivery.objects.create(
        team=team,
        url="https://hooks.example.com/b",
        payload={"text": "b"},
        status="failed",
        attempts=1,
        last_error="The webhook answered HTTP 404.",
        finished_at=timezone.now(),
    )
    pending = Delivery.objects.create(
        team=team, url="https://hooks.example.com/c", payload={"text": "c"}
    )
    Investigation = apps.get_model(APP, "Investigation")
    Side = apps.get_model(APP, "Side")
    Capture = apps.get_model(APP, "Capture")
    investigation = Investigation.objects.create(team=team, title="migrated")
    side = Side.objects.create(investigation=investigation, key="a", label="A")
    due = timezone.now() + timedelta(minutes=30)

    def capture(name, **analysis):
        return Capture.objects.create(
            investigation=investigation,
            side=side,
            name=name,
            pcap=f"captures/{name}",
            collected_at=asked,
            **analysis,
        ).pk

    Collection = apps.get_model(APP, "Collection")
    Target = apps.get_model(APP, "CollectionTarget")
    collection = Collection.objects.create(
        investigation=investigation, kind="facts", start_at=asked
    )
    host_of_targets = Host.objects.create(
        team=team, name="collected", address="192.0.2.2", username="p"
    )
    other_side = Side.objects.create(investigation=investigation, key="b", label="B")

    def target(side_, **work):
        return Target.objects.create(
            collection=collection, host=host_of_targets, side=side_, **work
        ).pk

    Ladder = apps.get_model(APP, "Ladder")
    LadderSide = apps.get_model(APP, "LadderSide")
    ladder = Ladder.objects.create(
        investigation=investigation, steps=[10, 20], step_seconds=5, warmup_seconds=0
    )
    ladder_sides = {
        "running": LadderSide.objects.create(
            ladder=ladder,
            side=side,
            url="http://192.0.2.3/",
            status="running",
            current_step=1,
            started_at=claimed,
            deadline_at=due,
        ).pk,
        "broke": LadderSide.objects.create(
            ladder=ladder,
            side=other_side,
            url="http://192.0.2.4/",
            status="completed",
            breaking_step=1,
            breaking_reason="p99 above 500 ms",
            phrases={"breaking_reason": ["p99 above %(limit)s ms", {"limit": 500}]},
            finished_at=claimed,
        ).pk,
    }

    return {
        "ladder_sides": ladder_sides,
        "targets": {
            "running": target(
                side,
                status="running",
                progress=40,
                step="capturing",
                attempts=2,
                started_at=claimed,
                began_at=claimed + timedelta(seconds=1),
                deadline_at=due,
                timings={"queue": 0.1},
            ),
            "failed": target(
                other_side,
                status="failed",
                attempts=1,
                finished_at=claimed,
                error="Cannot connect to 192.0.2.2.",
                phrases={"error": ["Cannot connect to %(address)s.", {"address": "192.0.2.2"}]},
            ),
        },
        "collection": collection,
        "captures": {
            "ready": capture("ready.pcap", status="ready", progress=100, packets=12),
            "analysing": capture(
                "analysing.pcap", status="analysing", progress=40, deadline_at=due
            ),
            "failed": capture(
                "failed.pcap",
                status="failed",
                error="failed.pcap cannot be analysed: boom",
                phrases={
                    "error": [
                        "%(file)s cannot be analysed: %(error)s",
                        {"file": "failed.pcap", "error": "boom"},
                    ]
                },
            ),
        },
        "due": due,
        "deliveries": (delivered.pk, failed.pk, pending.pk),
        "claimed": claimed,
        "never": host("never"),
        "scanning": host("scanning", scan_status="scanning", scan_requested_at=asked),
        "failed": host(
            "failed",
            scan_status="failed",
            scan_error="Cannot reach 192.0.2.1.",
            scan_requested_at=asked,
            phrases={"scan_error": ["Cannot reach %(address)s.", {"address": "192.0.2.1"}]},
        ),
        "done": host("done", scan_status="done", scan_requested_at=asked),
        "asked": asked,
    }


def capture_analysis_forward(apps, rows):
    ids = rows["captures"]

    Capture = apps.get_model(APP, "Capture")
    jobs = {c.pk: c.job for c in Capture.objects.select_related("job")}
    ready, analysing, failed = (jobs[ids[name]] for name in ("ready", "analysing", "failed"))
    assert (ready.kind, ready.object_id, ready.status, ready.progress) == (
        "capture_analysis",
        ids["ready"],
        "ready",
        100,
    )
    assert (analysing.status, analysing.progress, analysing.deadline_at) == (
        "analysing",
        40,
        rows["due"],
    )
    assert (failed.status, failed.error) == ("failed", "failed.pcap cannot be analysed: boom")
    assert failed.phrases["error"][1] == {"file": "failed.pcap", "error": "boom"}
    assert Capture.objects.get(pk=ids["ready"]).packets == 12


def capture_analysis_back(apps, rows):
    ids = rows["captures"]

    Capture = apps.get_model(APP, "Capture")
    back = {c.pk: c for c in Capture.objects.all()}
    assert (back[ids["analysing"]].status, back[ids["analysing"]].progress) == ("analysing", 40)
    assert back[ids["analysing"]].deadline_at == rows["due"]
    assert back[ids["failed"]].phrases["error"][0] == "%(file)s cannot be analysed: %(error)s"


def webhook_delivery_forward(apps, rows):
    delivered, failed, pending = rows["deliveries"]

    Delivery = apps.get_model(APP, "WebhookDelivery")
    jobs = {d.pk: d.job for d in Delivery.objects.select_related("job")}
    assert (jobs[delivered].kind, jobs[delivered].object_id) == ("webhook_delivery", delivered)
    assert (jobs[delivered].status, jobs[delivered].attempts) == ("delivered", 2)
    assert jobs[delivered].began_at == rows["claimed"]
    assert jobs[delivered].finished_at is not None
    assert (jobs[failed].status, jobs[failed].error) == (
        "failed",
        "The webhook answered HTTP 404.",
    )
    assert (jobs[pending].status, jobs[pending].attempts, jobs[pending].deadline_at) == (
        "pending",
        0,
        None,
    )


def webhook_delivery_back(apps, rows):
    delivered, failed, pending = rows["deliveries"]

    Delivery = apps.get_model(APP, "WebhookDelivery")
    back = {d.pk: d for d in Delivery.objects.all()}
    assert (back[delivered].status, back[delivered].attempts) == ("delivered", 2)
    assert back[delivered].claimed_at == rows["claimed"]
    assert back[failed].last_error == "The webhook answered HTTP 404."
    assert back[pending].status == "pending"


def host_key_scan_forward(apps, rows):

    Host = apps.get_model(APP, "Host")
    hosts = {host.name: host for host in Host.objects.select_related("job")}
    assert hosts["never"].job is None
    scanning = hosts["scanning"].job
    assert (scanning.kind, scanning.object_id, scanning.status) == (
        "host_key_scan",
        rows["scanning"],
        "scanning",
    )
    assert scanning.created_at == rows["asked"]
    assert scanning.deadline_at > rows["asked"]  # the scan's time and the grace
    failed = hosts["failed"].job
    assert (failed.status, failed.error) == ("failed", "Cannot reach 192.0.2.1.")
    assert failed.phrases == {"error": ["Cannot reach %(address)s.", {"address": "192.0.2.1"}]}
    assert hosts["done"].job.status == "done"


def host_key_scan_back(apps, rows):

    Host = apps.get_model(APP, "Host")
    back = {host.name: host for host in Host.objects.all()}
    assert back["never"].scan_status == ""
    assert (back["failed"].scan_status, back["failed"].scan_error) == (
        "failed",
        "Cannot reach 192.0.2.1.",
    )
    assert back["failed"].phrases["scan_error"][0] == "Cannot reach %(address)s."
    assert back["scanning"].scan_requested_at == rows["asked"]


def collection_target_forward(apps, rows):
    ids = rows["targets"]

    Target = apps.get_model(APP, "CollectionTarget")
    targets = {t.pk: t for t in Target.objects.select_related("job")}
    running, failed = targets[ids["running"]], targets[ids["failed"]]
    job = running.job
    assert (job.kind, job.object_id, job.status, job.progress, job.step, job.attempts) == (
        "collection_target",
        ids["running"],
        "running",
        40,
        "capturing",
        2,
    )
    assert (job.began_at, job.deadline_at) == (rows["claimed"], rows["due"])
    assert job.created_at == rows["collection"].created_at
    # When its measurement began and where its time went stay the target's own.
    assert running.began_at == rows["claimed"] + timedelta(seconds=1)
    assert running.timings == {"queue": 0.1}
    assert (failed.job.status, failed.job.error, failed.job.finished_at) == (
        "failed",
        "Cannot connect to 192.0.2.2.",
        rows["claimed"],
    )
    assert failed.job.phrases["error"][1] == {"address": "192.0.2.2"}


def collection_target_back(apps, rows):
    ids = rows["targets"]

    Target = apps.get_model(APP, "CollectionTarget")
    back = {t.pk: t for t in Target.objects.all()}
    assert (back[ids["running"]].status, back[ids["running"]].attempts) == ("running", 2)
    assert back[ids["running"]].started_at == rows["claimed"]
    assert back[ids["running"]].deadline_at == rows["due"]
    assert back[ids["failed"]].phrases["error"][0] == "Cannot connect to %(address)s."


def ladder_side_forward(apps, rows):
    ids = rows["ladder_sides"]

    LadderSide = apps.get_model(APP, "LadderSide")
    sides = {s.pk: s for s in LadderSide.objects.select_related("job")}
    running, broke = sides[ids["running"]], sides[ids["broke"]]
    assert (running.job.kind, running.job.object_id, running.job.status) == (
        "ladder_side",
        ids["running"],
        "running",
    )
    assert (running.job.began_at, running.job.deadline_at, running.job.attempts) == (
        rows["claimed"],
        rows["due"],
        1,
    )
    assert running.current_step == 1  # the side's own
    assert (broke.job.status, broke.job.finished_at, broke.job.attempts) == (
        "completed",
        rows["claimed"],
        0,
    )
    assert (broke.breaking_step, broke.breaking_reason) == (1, "p99 above 500 ms")
    assert broke.job.phrases["breaking_reason"][1] == {"limit": 500}


def ladder_side_back(apps, rows):
    ids = rows["ladder_sides"]

    LadderSide = apps.get_model(APP, "LadderSide")
    back = {s.pk: s for s in LadderSide.objects.all()}
    assert (back[ids["running"]].status, back[ids["running"]].started_at) == (
        "running",
        rows["claimed"],
    )
    assert back[ids["running"]].deadline_at == rows["due"]
    assert back[ids["broke"]].phrases["breaking_reason"][0] == "p99 above %(limit)s ms"


# One migration down and up for every kind (each such trip costs tens of seconds, and a
# test per kind would make a trip in every test process that runs one): each kind's checks
# run at AFTER and again at BEFORE, and every kind's failure is reported by name.
CHECKS = {
    "capture_analysis": (capture_analysis_forward, capture_analysis_back),
    "webhook_delivery": (webhook_delivery_forward, webhook_delivery_back),
    "host_key_scan": (host_key_scan_forward, host_key_scan_back),
    "collection_target": (collection_target_forward, collection_target_back),
    "ladder_side": (ladder_side_forward, ladder_side_back),
}


def _outcome(check, apps, rows) -> str | None:
    try:
        check(apps, rows)
    except Exception:
        return traceback.format_exc(limit=3)
    return None


@pytest.mark.django_db(transaction=True)
def test_rows_of_each_kind_move_onto_jobs_and_back():
    """Rows of every kind made at BEFORE, migrated forward (checked), then back (checked);
    the latest schema again afterwards."""
    latest = MigrationExecutor(connection).loader.graph.leaf_nodes(APP)
    failed: dict[str, str] = {}
    try:
        rows = rows_of_each_kind(migrate(BEFORE))
        apps = migrate(AFTER)
        for kind, (forward, _) in CHECKS.items():
            if (error := _outcome(forward, apps, rows)) is not None:
                failed[f"{kind}, forward"] = error
        apps = migrate(BEFORE)
        for kind, (_, back) in CHECKS.items():
            if (error := _outcome(back, apps, rows)) is not None:
                failed[f"{kind}, back"] = error
    finally:
        MigrationExecutor(connection).migrate(latest)

    assert not failed, "\n".join(f"{name}:\n{error}" for name, error in failed.items())
