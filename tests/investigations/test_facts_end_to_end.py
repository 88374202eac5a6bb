"""Host facts end to end: real sshd test hosts presenting other machines, the JSON API, a
real Celery worker, the diff and the findings."""

import socket

import pytest

from investigations.services.inventory import credential_create, host_create, member_add
from tests.conftest import ApiClient, host_key_scanned, loaded_page, wait_for
from tests.conftest import trust_host_key as trust

pytestmark = pytest.mark.django_db(transaction=True)


def place(personas, credential, test_host, side: str, role: str = "service", name=None):
    host = host_create(
        team=personas.team,
        name=name or test_host.name,
        address=test_host.address,
        port=test_host.port,
        username=test_host.username,
        credential=credential,
    )
    member_add(
        investigation=personas.investigation,
        user=personas.member,
        host=host,
        side_key=side,
        role=role,
    )
    return host


def collect(api: ApiClient, personas) -> dict:
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections", {"kind": "facts"}
    )
    assert created.status_code == 201, created.body
    return wait_for(
        lambda: (
            (body := api.get(f"/api/collections/{created.body['id']}").body)["status"]
            in ("completed", "failed")
            and body
        ),
        timeout=90,
    )


def test_two_different_machines_are_compared_and_the_governor_is_named(
    personas, celery_worker, credential, start_host
):
    slow = start_host(
        "epyc-powersave",
        dump="x86_64-epyc_7451",
        governor="powersave",
        files={"/sys/kernel/mm/transparent_hugepage/enabled": "[always] madvise never\n"},
    )
    fast = start_host("tigerlake", dump="x86_64-64cpu-linux6.2")
    api = ApiClient(personas.member)
    host_a = place(personas, credential, slow, "a")
    host_b = place(personas, credential, fast, "b")
    scanned = host_key_scanned(api, host_a)  # the scan a person asks for, in the worker
    trust(api, host_a)
    trust(api, host_b)
    assert (scanned["status"], scanned["key_type"], scanned["fingerprint"]) == (
        "done",
        slow.host_key.key_type,
        slow.host_key.fingerprint,
    )

    collection = collect(api, personas)

    assert collection["status"] == "completed"
    assert {t["host_name"]: t["status"] for t in collection["targets"]} == {
        "epyc-powersave": "succeeded",
        "tigerlake": "succeeded",
    }
    facts = {
        f["side"]: f["facts"]
        for f in api.get(f"/api/investigations/{personas.investigation.pk}/facts").body
    }
    assert facts["a"]["cpu.model"] == "AMD EPYC 7451 24-Core Processor"
    assert facts["b"]["cpu.model"] == "11th Gen Intel(R) Core(TM) i7-1165G7 @ 2.80GHz"
    assert (facts["a"]["cpu.count"], facts["b"]["cpu.count"]) == (96, 8)
    assert (facts["a"]["cpu.governor"], facts["b"]["cpu.governor"]) == ("powersave", "powersave")
    assert facts["a"]["mm.thp.enabled"] == "always"
    assert facts["a"]["access.user"] == "perfcase-probe"

    [pair] = api.get(
        f"/api/investigations/{personas.investigation.pk}/diff?only_differences=true"
    ).body
    kinds = {row["key"]: row["kind"] for row in pair["rows"]}
    assert kinds["cpu.model"] == "differs"
    assert kinds["cpu.count"] == "differs"
    assert "system.boot_id" not in kinds  # the same machine underneath, and volatile anyway

    findings = {
        f["rule"]: f
        for f in api.get(f"/api/investigations/{personas.investigation.pk}/findings").body
    }
    assert {"cpu_model", "cpu_count", "cpu_governor", "thp_enabled", "numa_nodes"} <= set(findings)
    assert findings["cpu_model"]["severity"] == "high"
    assert findings["thp_enabled"]["side_a"] == "always"
    assert findings["cpu_count"]["side_a"] == "96" and findings["cpu_count"]["side_b"] == "8"
    assert findings["cpu_governor"]["status"] == "open"


def test_the_governor_finding_names_the_powersave_side(
    personas, celery_worker, credential, start_host
):
    a = start_host("vm-a", dump="x86_64-epyc_7451", governor="powersave")
    b = start_host("vm-b", dump="x86_64-epyc_7451")
    api = ApiClient(personas.member)
    for test_host, side in ((a, "a"), (b, "b")):
        trust(api, place(personas, credential, test_host, side))

    collect(api, personas)

    findings = api.get(f"/api/investigations/{personas.investigation.pk}/findings").body
    assert [(f["rule"], f["severity"], f["side_a"], f["side_b"]) for f in findings] == [
        ("cpu_governor", "high", "powersave", "performance")
    ]
    assert findings[0]["title"] == "CPU frequency governor is 'powersave' on side A"
    # Collecting again raises nothing new: the finding is updated, not repeated.
    collect(api, personas)
    again = api.get(f"/api/investigations/{personas.investigation.pk}/findings").body
    assert [f["id"] for f in again] == [findings[0]["id"]]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def unreachable_host(personas, credential, *, like, side: str, role: str):
    """A host placed on `side` whose port nothing listens on, trusting `like`'s key."""
    nobody = host_create(
        team=personas.team,
        name="nobody-home",
        address="127.0.0.1",
        port=_closed_port(),
        username="perfcase-probe",
        credential=credential,
        host_key_type=like.host_key.key_type,
        host_key_fingerprint=like.host_key.fingerprint,
    )
    member_add(
        investigation=personas.investigation,
        user=personas.member,
        host=nobody,
        side_key=side,
        role=role,
    )
    return nobody


def test_each_failing_host_fails_alone_with_a_message_a_person_can_act_on(
    personas, celery_worker, credential, start_host, make_key
):
    good = start_host("good", dump="x86_64-dell_e4310")
    rekeyed = start_host("rekeyed", dump="vmware_fpe")
    hanging = start_host("hanging", hang_tools=["systemd-detect-virt"])
    no_lscpu = start_host("no-lscpu", dump="x86_64-epyc_7451", hide_tools=["lscpu"])
    api = ApiClient(personas.member)
    for test_host, side in ((good, "a"), (rekeyed, "b"), (hanging, "a"), (no_lscpu, "b")):
        trust(api, place(personas, credential, test_host, side))
    unreachable_host(personas, credential, like=good, side="a", role="cache")
    stranger_key = credential_create(
        team=personas.team, user=personas.member, name="stranger", private_key=make_key().text
    )
    wrong_key = place(personas, stranger_key, good, "b", role="database", name="wrong-key")
    trust(api, wrong_key)
    rekeyed.restart(new_host_key=True)

    collection = collect(api, personas)

    targets = {t["host_name"]: t for t in collection["targets"]}
    assert {name: t["status"] for name, t in targets.items()} == {
        "good": "succeeded",
        "hanging": "succeeded",
        "no-lscpu": "succeeded",
        "rekeyed": "failed",
        "nobody-home": "failed",
        "wrong-key": "failed",
    }
    assert "connection refused" in targets["nobody-home"]["error"]
    assert "host key of rekeyed changed" in targets["rekeyed"]["error"]
    assert "scan and trust its new key" in targets["rekeyed"]["error"]
    assert "Permission denied for perfcase-probe@" in targets["wrong-key"]["error"]
    facts = {
        f["host_name"]: f
        for f in api.get(f"/api/investigations/{personas.investigation.pk}/facts").body
    }
    assert facts["hanging"]["probes"]["virt"]["status"] == "timeout"
    assert facts["hanging"]["facts"]["kernel.release"]
    assert facts["no-lscpu"]["facts"]["cpu.sockets"] == 2
    assert facts["no-lscpu"]["facts"]["tools.lscpu"] is False
    html = loaded_page(
        personas.client(personas.viewer), f"/investigations/{personas.investigation.pk}/"
    )
    assert "connection refused" in html and "changed" in html


def test_a_host_whose_port_answers_in_http_fails_its_facts_saying_so(
    personas, celery_worker, credential, sshd_host, http_port
):
    web = host_create(
        team=personas.team,
        name="web-port",
        address="127.0.0.1",
        port=http_port,
        username="perfcase-probe",
        credential=credential,
        host_key_type=sshd_host.host_key.key_type,
        host_key_fingerprint=sshd_host.host_key.fingerprint,
    )
    member_add(
        investigation=personas.investigation,
        user=personas.member,
        host=web,
        side_key="a",
        role="service",
    )

    collection = collect(ApiClient(personas.member), personas)

    [target] = collection["targets"]
    assert target["status"] == "failed"
    assert target["error"] == (
        f"web-port (perfcase-probe@127.0.0.1:{http_port}) answered with HTTP, not SSH: "
        "is this the right port?"
    )


def test_a_jump_host_reaches_a_host_behind_it(personas, celery_worker, credential, start_host):
    jump = start_host("bastion", dump=None)
    inner = start_host("inner", dump="x86_64-epyc_7451")
    other = start_host("other-side", dump="x86_64-epyc_7451")
    api = ApiClient(personas.member)
    bastion = host_create(
        team=personas.team,
        name="bastion",
        address=jump.address,
        port=jump.port,
        username=jump.username,
        credential=credential,
    )
    trust(api, bastion)
    behind = place(personas, credential, inner, "a")
    behind.jump_host = bastion
    behind.save()
    trust(api, behind)
    trust(api, place(personas, credential, other, "b"))

    collection = collect(api, personas)

    assert {t["host_name"]: t["status"] for t in collection["targets"]} == {
        "inner": "succeeded",
        "other-side": "succeeded",
    }


def test_trusting_a_fingerprint_the_host_did_not_present_is_refused(
    personas, credential, start_host
):
    test_host = start_host("plain", dump=None)
    api = ApiClient(personas.member)
    host = place(personas, credential, test_host, "a")
    api.post(f"/api/hosts/{host.pk}/host-key/scan")

    refused = api.post(
        f"/api/hosts/{host.pk}/host-key/trust", {"fingerprint": "SHA256:not-the-key"}
    )

    assert refused.status_code == 400
    assert refused.body["errors"][0]["field"] == "fingerprint"
    host.refresh_from_db()
    assert host.host_key_fingerprint == ""


def test_scanning_a_host_where_nothing_listens_ends_in_a_failed_scan_that_says_why(
    personas, credential, celery_worker
):
    host = host_create(
        team=personas.team,
        name="gone",
        address="127.0.0.1",
        port=_closed_port(),
        username="perf",
        credential=credential,
    )

    scanned = host_key_scanned(ApiClient(personas.member), host)

    # The request answered at once (202); the worker's scan ended in words to act on.
    assert scanned["status"] == "failed" and scanned["fingerprint"] is None
    assert "connection refused" in scanned["error"]
