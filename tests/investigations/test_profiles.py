"""CPU profiles end to end: real perf over real sshd test hosts (each in a PID namespace of
its own, so each side sees only its own process of the same name), a real Celery worker,
the API, the differential view, the findings and the checklist."""

import io
import shutil
import subprocess
import tempfile
from datetime import timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from collectors.ssh import Connection
from investigations.choices import LadderStatus
from investigations.models import ChecklistItem, Finding, Ladder, Profile
from investigations.services.collections import collection_request
from investigations.services.ladder_results import ladder_side_add
from tests.conftest import ApiClient, loaded_page, require_real_tool, wait_for
from tests.conftest import trust_host_key as trust
from tests.investigations.test_facts_end_to_end import place
from tests.sshd import FIXTURES

pytestmark = pytest.mark.django_db(transaction=True)
WORKLOAD = Path(__file__).parent / "data" / "ordersvc.c"


@pytest.fixture(scope="module")
def ordersvc():
    """The workload, built with frame pointers into a directory every test host's user can
    read: `ordersvc a` burns its CPU in p256_point_mul, `ordersvc b` in encode_json."""
    if shutil.which("gcc") is None:
        require_real_tool("gcc is not installed (it builds the profiled workload)")
    if shutil.which("perf") is None:
        require_real_tool("perf is not installed (apt-get install linux-perf)")
    directory = Path(tempfile.mkdtemp(prefix="perfcase-ordersvc-"))
    directory.chmod(0o755)
    binary = directory / "ordersvc"
    subprocess.run(
        ["gcc", "-O0", "-fno-omit-frame-pointer", "-g", "-o", str(binary), str(WORKLOAD)],
        check=True,
    )
    binary.chmod(0o755)
    yield binary
    shutil.rmtree(directory, ignore_errors=True)


def run_on(test_host, *argv: str) -> str:
    sink = io.BytesIO()
    with Connection(test_host.endpoint()) as connection:
        connection.run(list(argv), sink=sink, timeout=20)
    return sink.getvalue().decode()


def start_workload(test_host, binary: Path, side: str) -> None:
    """The service, started in the host's own PID namespace (through its sshd), left running
    when the session ends; the host's stop() kills it with everything else of the host."""
    run_on(
        test_host,
        "sh",
        "-c",
        'setsid "$0" "$1" </dev/null >/dev/null 2>&1 & sleep 0.3',
        str(binary),
        side,
    )


def collect(api: ApiClient, personas, **parameters) -> dict:
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "profile", **parameters},
    )
    assert created.status_code == 201, created.body
    return wait_for(
        lambda: (
            (body := api.get(f"/api/collections/{created.body['id']}").body)["status"]
            in ("completed", "failed")
            and body
        ),
        timeout=120,
    )


def test_both_sides_are_profiled_together_and_what_burns_on_one_side_is_named(
    personas, celery_worker, credential, start_host, ordersvc
):
    hosts = {}
    for side in ("a", "b"):
        test_host = start_host(f"app-{side}", dump=None, pid_namespace=True)
        start_workload(test_host, ordersvc, side)
        hosts[side] = place(personas, credential, test_host, side)
    # Placed with another role: profiles go to the "service" hosts unless asked.
    place(personas, credential, start_host("db-a", dump=None), "a", role="database")
    api = ApiClient(personas.member)
    for host in hosts.values():
        trust(api, host)

    collection = collect(api, personas, process="ordersvc", seconds=3, frequency=199)

    assert collection["status"] == "completed", [t["error"] for t in collection["targets"]]
    assert {t["host_name"]: t["status"] for t in collection["targets"]} == {
        "app-a": "succeeded",
        "app-b": "succeeded",
    }
    assert all(t["began_at"] for t in collection["targets"])
    listed = api.get(f"/api/investigations/{personas.investigation.pk}/profiles").body["items"]
    profiles = {p["side"]: p for p in listed}
    assert set(profiles) == {"a", "b"}
    for side, profile in profiles.items():
        assert profile["process"] == "ordersvc" and profile["samples"] > 50, profile
        assert profile["seconds"] == 3 and profile["frequency"] == 199
        assert profile["host"] == hosts[side].pk and profile["collection"] == collection["id"]

    diff = api.get(
        f"/api/investigations/{personas.investigation.pk}/profiles/diff",
        data={"a": profiles["a"]["id"], "b": profiles["b"]["id"]},
    ).body
    first = {row["function"]: row for row in diff["functions"][:2]}
    assert set(first) == {"p256_point_mul", "encode_json"}, diff["functions"][:3]
    assert first["p256_point_mul"]["self_a"] > 60 and first["p256_point_mul"]["self_b"] < 5
    assert first["encode_json"]["self_b"] > 60 and first["encode_json"]["delta"] > 50

    folded = api.get(f"/api/profiles/{profiles['a']['id']}/folded")
    assert folded["Content-Type"].startswith("text/plain")
    assert any(
        line.startswith("ordersvc;") and ";handle_request;p256_point_mul " in line
        for line in folded.content.decode().splitlines()
    )
    detail = api.get(f"/api/profiles/{profiles['a']['id']}").body
    hottest = {row["function"]: row for row in detail["functions"]}
    assert hottest["main"]["total"] > 95 and hottest["p256_point_mul"]["self"] > 60

    tls = Finding.objects.get(investigation=personas.investigation, rule="profile_tls_crypto")
    assert tls.host_a == hosts["a"] and tls.host_b == hosts["b"]
    assert float(tls.side_a.split()[0]) > 60 and float(tls.side_b.split()[0]) < 5
    step = ChecklistItem.objects.get(investigation=personas.investigation, key="profile_at_knee")
    assert step.status == "done" and step.auto
    raw = Profile.objects.get(pk=profiles["a"]["id"]).target.artifacts.get()
    with raw.file.open("rb") as file:
        assert b"p256_point_mul" in file.read()

    page = loaded_page(
        personas.client(personas.viewer), f"/investigations/{personas.investigation.pk}/"
    )
    assert "app-a ordersvc" in page


def test_each_host_says_why_it_cannot_be_profiled_while_the_others_carry_on(
    personas, celery_worker, credential, start_host, ordersvc
):
    good = start_host("good", dump=None, pid_namespace=True)
    start_workload(good, ordersvc, "a")
    no_perf = start_host("no-perf", dump=None, pid_namespace=True, hide_tools=["perf"])
    locked = start_host(
        "locked",
        dump=None,
        pid_namespace=True,
        files={"/proc/sys/kernel/perf_event_paranoid": "3\n"},
    )
    idle = start_host("idle", dump=None, pid_namespace=True)
    for test_host in (no_perf, locked):
        start_workload(test_host, ordersvc, "b")
    api = ApiClient(personas.member)
    for side, test_host in (("a", good), ("b", no_perf), ("b", locked), ("b", idle)):
        trust(api, place(personas, credential, test_host, side))

    collection = collect(api, personas, process="ordersvc", seconds=2)

    outcome = {t["host_name"]: (t["status"], t["error"]) for t in collection["targets"]}
    assert outcome["good"] == ("succeeded", "")
    assert outcome["no-perf"] == (
        "failed",
        "perf is not installed on no-perf (apt-get install linux-perf).",
    )
    assert outcome["locked"] == (
        "failed",
        "perf_event_paranoid is 3 and sudo needs a password on locked",
    )
    assert outcome["idle"] == ("failed", "no process named ordersvc on idle")
    zh = api.get(f"/api/collections/{collection['id']}", HTTP_ACCEPT_LANGUAGE="zh-CN").body
    assert {t["host_name"]: t["error"] for t in zh["targets"]}["idle"] != outcome["idle"][1]


@pytest.mark.parametrize(
    "parameters, field",
    [
        ({"process": "ordersvc; rm -rf /"}, "process"),
        ({"process": "$(reboot)"}, "process"),
        ({"process": "a-name-longer-than-15"}, "process"),
        ({"pid": "12 34"}, "pid"),
        ({"pid": "0"}, "pid"),
        ({"process": "ordersvc", "pid": "12"}, "pid"),
        ({"seconds": 121}, "seconds"),
        ({"seconds": 0}, "seconds"),
        ({"frequency": 5000}, "frequency"),
        ({"call_graph": "lbr"}, "call_graph"),
        ({"step": "3"}, "ladder"),
        ({"ladder": 1}, "step"),
        ({"ladder": 1, "step": "fifth"}, "step"),
    ],
)
def test_bad_parameters_are_refused_with_the_field_named(personas, parameters, field):
    api = ApiClient(personas.member)

    answer = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "profile", **parameters},
    )

    assert answer.status_code in (400, 422), answer.body
    assert field in {error["field"] for error in answer.body["errors"]}, answer.body


def test_without_a_service_host_the_request_says_which_role_it_needs(personas, credential):
    from investigations.services.inventory import host_create, member_add

    host = host_create(team=personas.team, name="db-a", address="127.0.0.5", username="perf")
    member_add(
        investigation=personas.investigation,
        user=personas.lead,
        host=host,
        side_key="a",
        role="database",
    )
    api = ApiClient(personas.member)

    answer = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections", {"kind": "profile"}
    )

    assert answer.status_code == 400
    assert "service" in answer.body["errors"][0]["message"]


def ladder_of(personas, *, status=LadderStatus.RUNNING, start_in=60.0, steps=(10, 20, 50)):
    ladder = Ladder.objects.create(
        investigation=personas.investigation,
        steps=list(steps),
        step_seconds=20,
        warmup_seconds=2,
        status=status,
        start_at=timezone.now() + timedelta(seconds=start_in),
        slot_seconds=25,
    )
    for key in ("a", "b"):
        ladder_side_add(
            ladder=ladder,
            side=personas.investigation.sides.get(key=key),
            url="" if status == LadderStatus.IMPORTED else f"http://127.0.0.1:9/{key}",
        )
    return ladder


def service_hosts(personas):
    from investigations.services.inventory import host_create, member_add

    for key in ("a", "b"):
        host = host_create(
            team=personas.team, name=f"app-{key}", address="127.0.0.7", username="perf"
        )
        member_add(
            investigation=personas.investigation,
            user=personas.lead,
            host=host,
            side_key=key,
            role="service",
        )


@pytest.mark.django_db  # requested, never run: no worker may claim it
def test_a_profile_tied_to_a_ladder_step_starts_when_that_step_measures(
    personas, django_capture_on_commit_callbacks
):
    service_hosts(personas)
    ladder = ladder_of(personas)

    collection = collection_request(
        investigation=personas.investigation,
        user=personas.member,
        kind="profile",
        parameters={"process": "ordersvc", "seconds": 60, "ladder": ladder.pk, "step": "2"},
    )

    # Step 2 (index 1) measures from start + 25 s (its slot) + 2 s (its warm-up), for 20 s.
    assert collection.start_at == ladder.start_at + timedelta(seconds=27)
    assert collection.parameters["ladder"] == ladder.pk and collection.parameters["step"] == 2
    assert collection.parameters["seconds"] == 20


@pytest.mark.parametrize(
    "ladder_options, step, field, words",
    [
        ({}, "4", "step", "has 3 steps"),
        ({"start_in": -10}, "1", "step", "has begun"),
        ({"status": LadderStatus.COMPLETED, "start_in": -100}, "2", "ladder", "has ended"),
        ({"status": LadderStatus.IMPORTED}, "1", "ladder", "ran elsewhere"),
        ({"status": LadderStatus.IMPORTED}, "knee", "ladder", "ran elsewhere"),
    ],
)
def test_a_ladder_step_that_cannot_be_caught_is_refused(
    personas, ladder_options, step, field, words
):
    service_hosts(personas)
    ladder = ladder_of(personas, **ladder_options)
    api = ApiClient(personas.member)

    answer = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "profile", "ladder": ladder.pk, "step": step},
    )

    assert answer.status_code == 400, answer.body
    errors = {error["field"]: error["message"] for error in answer.body["errors"]}
    assert words in errors[field], errors


FOLDED_A = b"svc;main;handle;p256_point_mul 90\nsvc;main;handle;parse 10\n"
FOLDED_B = b"svc;main;handle;encode_json 80\nsvc;main;handle;parse 20\n"


def test_profiles_made_elsewhere_are_imported_and_compared(personas):
    api = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}/imports"

    for side, content in (("a", FOLDED_A), ("b", FOLDED_B)):
        answer = api.client.post(
            path,
            {"side": side, "format": "folded", "file": [io_file(f"{side}.folded", content)]},
            headers=api.headers,
        )
        assert answer.status_code == 201, answer.content
        assert answer.json()["profiles"][0]["samples"] == 100

    listed = api.get(f"/api/investigations/{personas.investigation.pk}/profiles").body["items"]
    ids = {p["side"]: p["id"] for p in listed}
    diff = api.get(
        f"/api/investigations/{personas.investigation.pk}/profiles/diff",
        data={"a": ids["a"], "b": ids["b"]},
    ).body
    assert diff["functions"][0]["function"] in ("p256_point_mul", "encode_json")
    assert Finding.objects.filter(
        investigation=personas.investigation, rule="profile_tls_crypto"
    ).exists()
    perf_text = FIXTURES / "profiles"
    if perf_text.exists():  # read in place, as tests/collectors/test_stacks.py reads them
        answer = api.client.post(
            path,
            {
                "side": "a",
                "format": "perf-script",
                "file": [io_file("dd.txt", (perf_text / "perf-dd-stacks-01.txt").read_bytes())],
            },
            headers=api.headers,
        )
        assert answer.status_code == 201, answer.content


def test_a_file_that_is_not_a_profile_is_refused_with_its_name_and_line(personas):
    api = ApiClient(personas.member)

    answer = api.client.post(
        f"/api/investigations/{personas.investigation.pk}/imports",
        {
            "side": "a",
            "format": "folded",
            "file": [io_file("broken.folded", b"a;b 1\nthis is not folded\n")],
        },
        headers=api.headers,
    )

    assert answer.status_code == 400
    message = answer.json()["errors"][0]["message"]
    assert message.startswith("broken.folded: line 2"), message
    assert not Profile.objects.exists()


def io_file(name: str, content: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile(name, content, content_type="text/plain")


@pytest.mark.django_db  # requested, never run: no worker may claim it
def test_the_ladder_knows_which_profile_belongs_to_which_step(personas):
    import tempfile as temp

    from collectors.profile import ProfileCheck, ProfileRequest
    from collectors.stacks import parse_folded
    from investigations.runs.capture import Captured
    from investigations.services.profiles import ProfileResult, profile_store
    from investigations.services.targets import target_claim

    service_hosts(personas)
    ladder = ladder_of(personas)
    collection = collection_request(
        investigation=personas.investigation,
        user=personas.member,
        kind="profile",
        parameters={"process": "ordersvc", "ladder": ladder.pk, "step": "3"},
    )
    for target in collection.targets.all():
        target = target_claim(target_id=target.pk, seconds=60)
        raw = temp.TemporaryFile()
        raw.write(b"raw perf script")
        profile_store(
            target=target,
            attempt=target.attempts,
            result=ProfileResult(
                request=ProfileRequest(mode="process", target="ordersvc", seconds=20),
                check=ProfileCheck(pids=(7,), via_sudo=False, kernel_stacks=False, paranoid=2),
                captured=Captured("perf.txt", raw, 15, "0" * 64, False, 0),
                folded=parse_folded(FOLDED_A),
            ),
        )
    api = ApiClient(personas.viewer)

    answer = api.get(f"/api/ladders/{ladder.pk}").body

    assert sorted((p["step"], p["side"]) for p in answer["profiles"]) == [(3, "a"), (3, "b")]
    page = personas.client(personas.viewer).get(f"/ladders/{ladder.pk}/")
    assert "app-a ordersvc" in page.text
