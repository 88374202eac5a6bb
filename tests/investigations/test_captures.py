"""Packet captures end to end: real tcpdump over real sshd test hosts, a real Celery worker,
traffic of known shape on loopback (short TLS connections to side A's server, one paused
keep-alive connection to side B's), the API, the findings, the checklist and imports."""

import hashlib
import io
import re
import socket
import struct
import tempfile
import threading
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import translation

from collectors.capture import synth
from collectors.capture.remote import CaptureRequest, PcapCounter
from investigations.choices import CaptureStatus
from investigations.models import Capture, ChecklistItem, Finding, Job
from investigations.phrases import translate
from investigations.services.captures import capture_analyse_stored, capture_import
from investigations.services.diagnosis_stages import _empty_captures
from tests.conftest import ApiClient, require_real_tool, wait_for
from tests.conftest import trust_host_key as trust
from tests.investigations.test_facts_end_to_end import place
from tests.traffic import keepalive_client, pausing_server, tls_clients, tls_server

pytestmark = pytest.mark.django_db(transaction=True)
# The servers each side's service talks to: an address of its own on loopback.
SERVER_A, SERVER_B = "127.0.0.231", "127.0.0.232"


def need_tcpdump() -> None:
    import shutil

    if not any(shutil.which(t, path="/usr/sbin:/usr/bin:/sbin:/bin") for t in ["tcpdump"]):
        require_real_tool("tcpdump is not installed (apt-get install tcpdump)")


def concurrently(*calls) -> None:
    """Run the calls at once, each in a thread; raise the first one's error."""
    errors = []

    def run(call):
        try:
            call()
        except BaseException as error:  # noqa: BLE001 (raised again below)
            errors.append(error)

    threads = [threading.Thread(target=run, args=(call,), daemon=True) for call in calls]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    if errors:
        raise errors[0]


def root_host(start_host, name: str, **options):
    """A test host the probe signs in to as root: allowed to capture."""
    return start_host(name, dump=None, username="root", **options)


def start_collection(api: ApiClient, personas, **parameters) -> int:
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "capture", **parameters},
    )
    assert created.status_code == 201, created.body
    return created.body["id"]


def finished(api: ApiClient, collection_id: int, timeout: float = 120) -> dict:
    return wait_for(
        lambda: (
            (body := api.get(f"/api/collections/{collection_id}").body)["status"]
            in ("completed", "failed")
            and body
        ),
        timeout=timeout,
    )


def capturing(api: ApiClient, collection_id: int) -> dict:
    """Once every target reports that it captures (tcpdump has opened the interface: its
    pcap header came back)."""

    def ready():
        body = api.get(f"/api/collections/{collection_id}").body
        targets = body["targets"]
        return all(
            t["step"].startswith("capturing") or t["status"] in ("succeeded", "failed")
            for t in targets
        )

    return wait_for(ready, timeout=60, interval=0.1)


def test_a_service_port_captures_the_traffic_of_the_process_that_listens_on_it(
    personas, celery_worker, credential, start_host, shipped_knowledge
):
    """Found on each host as the capture begins: the port it listens on and its connections,
    never the SSH session; a filter given narrows it."""
    need_tcpdump()
    hosts = {
        side: place(personas, credential, root_host(start_host, f"app-{side}"), side)
        for side in ("a", "b")
    }
    api = ApiClient(personas.member)
    for host in hosts.values():
        trust(api, host)
    with tls_server(SERVER_A, Path(tempfile.mkdtemp())) as (port, client):
        # The hosts share this machine's network and processes: each finds the same server.
        collection_id = start_collection(
            api, personas, seconds=8, interface="lo", service_port=port, filter_b="tcp"
        )
        capturing(api, collection_id)
        tls_clients(SERVER_A, port, client)
        collection = finished(api, collection_id)

    assert collection["status"] == "completed", [t["error"] for t in collection["targets"]]
    listed = api.get(f"/api/investigations/{personas.investigation.pk}/captures").body["items"]
    for item in listed:
        capture = api.get(f"/api/captures/{item['id']}").body
        service = f"not tcp port {hosts[item['side']].port}"
        assert re.search(rf"\btcp port {port}\b", capture["filter"]), capture["filter"]
        if item["side"] == "a":
            assert capture["filter"].endswith(f"and {service}"), capture["filter"]
        else:
            assert capture["filter"].endswith(f"and {service}) and (tcp)"), capture["filter"]
        assert capture["tls_handshakes"] >= 12, capture


def test_a_service_port_nothing_listens_on_fails_the_target_saying_so(
    personas, celery_worker, credential, start_host
):
    need_tcpdump()
    host = place(personas, credential, root_host(start_host, "app-a"), "a")
    api = ApiClient(personas.member)
    trust(api, host)
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]  # bound, never listening
        collection = finished(api, start_collection(api, personas, seconds=2, service_port=port))

    (target,) = collection["targets"]
    assert collection["status"] == "failed" and target["status"] == "failed"
    assert f"No process listens on port {port} on app-a" in target["error"], target["error"]


def test_both_sides_are_captured_together_and_the_network_is_compared(
    personas, celery_worker, credential, start_host, shipped_knowledge
):
    need_tcpdump()
    hosts = {
        side: place(
            personas, credential, start_host(f"app-{side}", dump=None, username="root"), side
        )
        for side in ("a", "b")
    }
    # Placed with another role: captures go to the "service" hosts unless asked.
    place(personas, credential, start_host("db-a", dump=None), "a", role="database")
    api = ApiClient(personas.member)
    for host in hosts.values():
        trust(api, host)

    with (
        tls_server(SERVER_A, Path(tempfile.mkdtemp())) as (port_a, client),
        pausing_server(SERVER_B) as port_b,
    ):
        collection_id = start_collection(
            api,
            personas,
            seconds=10,
            interface="lo",
            # The server's address as well as its port: another test's server on another
            # loopback address may be given the same port.
            filter_a=f"host {SERVER_A} and tcp port {port_a}",
            filter_b=f"host {SERVER_B} and tcp port {port_b}",
        )
        capturing(api, collection_id)
        concurrently(
            lambda: tls_clients(SERVER_A, port_a, client),
            lambda: keepalive_client(SERVER_B, port_b),
        )
        collection = finished(api, collection_id)

    assert collection["status"] == "completed", [t["error"] for t in collection["targets"]]
    assert {t["host_name"] for t in collection["targets"]} == {"app-a", "app-b"}
    listed = api.get(f"/api/investigations/{personas.investigation.pk}/captures").body["items"]
    captures = {c["side"]: c for c in listed}
    assert set(captures) == {"a", "b"}
    for side, capture in captures.items():
        assert capture["status"] == "ready" and capture["packets"] > 10, (
            {k: capture[k] for k in ("filter", "tcpdump", "host_name", "side")},
            port_a,
            port_b,
        )
        assert capture["host"] == hosts[side].pk and capture["collection"] == collection_id
        assert capture["interface"] == "lo" and capture["seconds"] == 10
        assert capture["truncated"] is False and capture["tcpdump"]["captured"] >= 10

    a = api.get(f"/api/captures/{captures['a']['id']}").body
    b = api.get(f"/api/captures/{captures['b']['id']}").body
    # Side A: twelve short TLS connections, a handshake each; side B: one connection.
    assert a["connections"] == 12 and a["tls_handshakes"] == 12
    assert b["connections"] == 1 and b["tls_handshakes"] == 0
    assert a["filter"] == f"host {SERVER_A} and tcp port {port_a}"
    assert b["filter"] == f"host {SERVER_B} and tcp port {port_b}"
    # Side B's client paused about 0.2 s before each of its requests.
    paused = [g for g in b["gaps"] if g["silent"] == "client" and g["before"] == "request"]
    assert len(paused) >= 7 and all(0.18 < g["seconds"] < 0.5 for g in paused), b["gaps"]
    assert {"connection", "at", "seconds", "silent", "before"} <= set(b["gaps"][0])
    # The whole analysis comes through, not only the figures the schema names first.
    assert {"connection", "tls", "timeline", "inter_packet_time", "problems"} <= set(b)
    assert b["connection"]["requests"] >= 8 and a["tls"]["client_hellos"] == 12
    for key in ("packets", "bytes", "duration_s", "connections_per_s", "retransmissions",
                "duplicate_acks", "zero_windows", "resets"):  # fmt: skip
        assert key in a, key

    compared = api.get(
        f"/api/investigations/{personas.investigation.pk}/captures/compare",
        data={"a": a["id"], "b": b["id"]},
    ).body
    rows = {row["figure"]: row for row in compared["figures"]}
    assert rows["tls_handshakes_per_request"]["better"] == "b" and rows["connections"]["a"] == 12
    assert rows["requests_per_connection"]["better"] == "b"

    rules = set(
        Finding.objects.filter(investigation=personas.investigation).values_list("rule", flat=True)
    )
    assert {"capture_connection_churn", "capture_tls_handshakes", "capture_request_pauses"} <= (
        rules
    ), rules
    pauses = Finding.objects.get(
        investigation=personas.investigation, rule="capture_request_pauses"
    )
    assert "before" in pauses.title and pauses.host_b == hosts["b"]
    # TLS seen on side A: its churn points to the TLS cause.
    churn = Finding.objects.get(
        investigation=personas.investigation, rule="capture_connection_churn"
    )
    assert churn.root_cause.slug == "short-lived-tls-connections"
    assert churn.title.startswith("Side A makes ") and "requests per connection" in churn.title
    step = ChecklistItem.objects.get(investigation=personas.investigation, key="packets_at_knee")
    assert step.status == "done" and step.auto

    pcap = api.get(f"/api/captures/{a['id']}/pcap")
    assert pcap["Content-Type"] == "application/vnd.tcpdump.pcap"
    content = b"".join(pcap.streaming_content)
    assert hashlib.sha256(content).hexdigest() == a["sha256"] and len(content) == a["size"]
    assert content[:4] in (b"\xd4\xc3\xb2\xa1", b"\x4d\x3c\xb2\xa1")


def test_each_host_says_why_it_cannot_capture_while_the_others_carry_on(
    personas, celery_worker, credential, start_host
):
    need_tcpdump()
    good = start_host("good", dump=None, username="root")
    no_tcpdump = start_host("no-tcpdump", dump=None, username="root", hide_tools=["tcpdump"])
    unprivileged = start_host("unprivileged", dump=None)  # signs in as perfcase-probe
    api = ApiClient(personas.member)
    for side, test_host in (("a", good), ("b", no_tcpdump), ("b", unprivileged)):
        trust(api, place(personas, credential, test_host, side))

    collection = finished(
        api, start_collection(api, personas, seconds=1, interface="lo", filter="tcp port 9")
    )

    outcome = {t["host_name"]: (t["status"], t["error"]) for t in collection["targets"]}
    assert outcome["good"] == ("succeeded", "")
    assert outcome["no-tcpdump"] == (
        "failed",
        "tcpdump is not installed on no-tcpdump (apt-get install tcpdump).",
    )
    assert outcome["unprivileged"] == (
        "failed",
        "no permission to capture on unprivileged: run as root or grant cap_net_raw",
    )
    zh = api.get(f"/api/collections/{collection['id']}", HTTP_ACCEPT_LANGUAGE="zh-CN").body
    assert {t["host_name"]: t["error"] for t in zh["targets"]}["unprivileged"] != (
        outcome["unprivileged"][1]
    )
    # The good host's capture is kept although it saw nothing.
    (capture,) = Capture.objects.filter(investigation=personas.investigation)
    assert capture.host.name == "good" and capture.packets == 0
    # A diagnosis whose stage took it says so, rather than leave "no difference" to be read.
    with translation.override("en"):
        notes = [translate(note) for note in _empty_captures([collection["id"]])]
    assert notes == [
        "good (A): the capture saw no packets (its filter or interface missed the traffic), "
        "so it is not compared"
    ]


def test_an_interface_the_host_does_not_have_is_named(
    personas, celery_worker, credential, start_host
):
    need_tcpdump()
    api = ApiClient(personas.member)
    trust(api, place(personas, credential, start_host("app-a", dump=None, username="root"), "a"))

    collection = finished(api, start_collection(api, personas, seconds=1, interface="eth9"))

    (target,) = collection["targets"]
    assert (target["status"], target["error"]) == (
        "failed",
        "interface eth9 does not exist on app-a",
    )


def test_a_capture_stops_at_its_size_cap_and_is_cut_after_a_whole_packet(
    personas, celery_worker, credential, start_host
):
    need_tcpdump()
    api = ApiClient(personas.member)
    trust(api, place(personas, credential, start_host("app-a", dump=None, username="root"), "a"))
    with pausing_server(SERVER_A, server_pause=0) as port:
        collection_id = start_collection(
            api,
            personas,
            seconds=20,
            interface="lo",
            filter=f"host {SERVER_A} and tcp port {port}",
            max_mb=1,
        )
        capturing(api, collection_id)
        # About 2.5 MB of requests and answers: past the cap of 1 MB.
        keepalive_client(SERVER_A, port, requests=6000, pause=0)
        collection = finished(api, collection_id)

    assert collection["status"] == "completed", [t["error"] for t in collection["targets"]]
    capture = Capture.objects.get(investigation=personas.investigation)
    assert capture.truncated and capture.tcpdump["stopped_at_cap"] is True
    assert 900_000 < capture.size <= 1024 * 1024
    with capture.pcap.open("rb") as file:
        content = file.read()
    assert hashlib.sha256(content).hexdigest() == capture.sha256
    # Whole packets only: the analysis finds no damage, and every record is there.
    assert capture.analysis["problems"] == []
    counter = PcapCounter()
    counter.feed(content)
    assert counter.whole == len(content) and capture.packets == counter.packets


@pytest.mark.parametrize(
    "parameters, field",
    [
        ({"filter": "tcp port 443; reboot"}, "filter"),
        ({"filter": "$(reboot)"}, "filter"),
        ({"filter": "host `id`"}, "filter"),
        ({"filter": "-w /tmp/x"}, "filter"),
        ({"filter": "tcp port"}, "filter"),  # the grammar is right, tcpdump cannot compile it
        ({"filter_a": "port ninety"}, "filter_a"),
        ({"filter_b": "host 'x'"}, "filter_b"),
        ({"interface": "eth0; reboot"}, "interface"),
        ({"interface": "-i"}, "interface"),
        ({"interface": "a-name-longer-than-15"}, "interface"),
        ({"seconds": 301}, "seconds"),
        ({"seconds": 0}, "seconds"),
        ({"snaplen": 10}, "snaplen"),
        ({"max_mb": 0}, "max_mb"),
        ({"step": "3"}, "ladder"),
    ],
)
def test_bad_parameters_are_refused_with_the_field_named(personas, parameters, field):
    need_tcpdump()
    api = ApiClient(personas.member)

    answer = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "capture", **parameters},
    )

    assert answer.status_code == 400, answer.body
    assert [e["field"] for e in answer.body["errors"]] == [field], answer.body


def test_tcpdump_says_what_is_wrong_with_a_filter(personas):
    need_tcpdump()
    answer = ApiClient(personas.member).post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "capture", "filter": "tcp port"},
    )
    assert "tcpdump cannot compile this filter" in answer.body["errors"][0]["message"]
    assert "syntax error" in answer.body["errors"][0]["message"]


# --- imports ---------------------------------------------------------------------------------


def pcap_of(*connections, pause: float = 0.0) -> bytes:
    """A capture of plain request/response connections (synthetic, Ethernet)."""
    buffer = io.BytesIO()
    writer = synth.PcapWriter(buffer, synth.LINKTYPE_ETHERNET)
    at = 1_700_000_000.0
    for number, requests in enumerate(connections):
        for gap, segment in synth.conversation(
            "10.0.0.1", "10.0.0.2", 40000 + number, 80, requests=requests, pause=pause
        ):
            at += gap
            frame = synth.frame(synth.LINKTYPE_ETHERNET, synth.ip_packet(segment))
            writer.write(int(at * 1e9), frame)
    return buffer.getvalue()


def upload(name: str, content: bytes) -> SimpleUploadedFile:
    return SimpleUploadedFile(name, content, content_type="application/octet-stream")


def test_an_imported_pcap_is_analysed_by_a_worker(personas, celery_worker):
    api = ApiClient(personas.member)
    content = pcap_of(3, 3, pause=0.3)

    created = api.post_multipart(
        f"/api/investigations/{personas.investigation.pk}/imports",
        {"side": "b", "format": "pcap", "file": [upload("side-b.pcap", content)]},
    )

    assert created.status_code == 201, created.body
    (listed,) = created.body["captures"]
    assert listed["status"] == "analysing" and listed["side"] == "b"
    ready = wait_for(
        lambda: (
            (body := api.get(f"/api/captures/{listed['id']}").body)["status"] == "ready" and body
        ),
        timeout=60,
    )
    assert ready["connections"] == 2 and ready["packets"] > 10
    assert ready["sha256"] == hashlib.sha256(content).hexdigest()
    assert ready["size"] == len(content)
    assert any(g["seconds"] >= 0.3 for g in ready["gaps"])


def test_a_file_that_is_no_capture_is_refused_and_nothing_is_kept(personas):
    api = ApiClient(personas.member)

    answer = api.post_multipart(
        f"/api/investigations/{personas.investigation.pk}/imports",
        {
            "side": "a",
            "format": "pcap",
            "file": [upload("good.pcap", pcap_of(1)), upload("notes.txt", b"GET / HTTP/1.1\r\n")],
        },
    )

    assert answer.status_code == 400
    assert answer.body["errors"] == [
        {
            "field": "file",
            "message": "notes.txt is not a pcap or pcapng file (tcpdump -w and Wireshark write "
            "those; convert others with editcap): it is text whose first line is "
            "'GET / HTTP/1.1'.",
        }
    ]
    assert not Capture.objects.exists()


# A pcapng section header block without options: the shortest pcapng file there is.
PCAPNG_START = bytes.fromhex("0a0d0d0a1c0000004d3c2b1a01000000ffffffffffffffff1c000000")


@pytest.mark.parametrize(
    "name, content, message",
    [
        (
            "x.pcap",
            bytes.fromhex("d4c3b2a1") + b"\x02\x00\x04\x00\x00\x00",
            "x.pcap is 10 bytes: too short to be a capture, whose file header alone is 24 bytes.",
        ),
        (
            "x.pcapng",
            PCAPNG_START[:10],
            "x.pcapng is 10 bytes: too short to be a capture, whose file header alone is 28 bytes.",
        ),
        (
            "x.pcapng",
            PCAPNG_START[:4] + (64).to_bytes(4, "little") + PCAPNG_START[8:],
            "x.pcapng is 28 bytes: too short to be a capture, whose file header alone is 64 bytes.",
        ),
        (
            "x.pcapng",
            PCAPNG_START[:8] + b"\x00" * 20,
            "x.pcapng is not a pcap or pcapng file (tcpdump -w and Wireshark write those; "
            "convert others with editcap).",
        ),
        (
            "x.pcap",
            b"0123456789",
            "x.pcap is not a pcap or pcapng file (tcpdump -w and Wireshark write those; "
            "convert others with editcap): it is text whose first line is '0123456789'.",
        ),
    ],
)
def test_a_file_too_short_for_a_capture_is_refused_at_once_naming_it(
    personas, name, content, message
):
    answer = ApiClient(personas.member).post_multipart(
        f"/api/investigations/{personas.investigation.pk}/imports",
        {"side": "a", "format": "pcap", "file": [upload(name, content)]},
    )

    assert answer.status_code == 400
    assert answer.body["errors"] == [{"field": "file", "message": message}]
    assert not Capture.objects.exists()


# In one transaction, rolled back: no worker gets the analysis it would enqueue.
@pytest.mark.django_db
def test_a_capture_of_its_header_alone_is_kept(personas):
    captures = capture_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        uploads=[upload("none.pcap", pcap_of()), upload("none.pcapng", PCAPNG_START)],
    )

    assert [capture.size for capture in captures] == [24, 28]


def test_two_sides_analysed_at_the_same_moment_are_compared_with_each_other(personas, monkeypatch):
    """Two workers store the two sides at once (as a diagnosis's knee does: a collection
    each), each in its own transaction, and each reads the pairs for the findings. The
    second to read must see the side the first committed: before, both read before either
    had committed, neither saw a pair, and the difference was never found."""
    from django.db import connection

    from investigations.services import captures as service

    queued = []
    monkeypatch.setattr(service, "enqueue", lambda task, *args, **options: queued.append(args))
    for side, content in (("a", pcap_of(3, 3, pause=0.3)), ("b", pcap_of(3, 3))):
        capture_import(
            investigation=personas.investigation,
            user=personas.member,
            side_key=side,
            uploads=[upload(f"side-{side}.pcap", content)],
        )
    both_stored = threading.Barrier(2, timeout=30)
    refresh = service.capture_refresh

    def refresh_once_both_stored(*, investigation):
        both_stored.wait()  # each side is stored, in a transaction still open
        refresh(investigation=investigation)

    monkeypatch.setattr(service, "capture_refresh", refresh_once_both_stored)
    failures = []

    def worker(capture_id):
        try:
            capture_analyse_stored(capture_id=capture_id, seconds=60)
        except BaseException as error:
            failures.append(error)
        finally:
            connection.close()

    workers = [threading.Thread(target=worker, args=args) for args in queued]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join()

    assert len(queued) == 2 and not failures, failures
    rules = set(
        Finding.objects.filter(investigation=personas.investigation).values_list("rule", flat=True)
    )
    assert "capture_request_pauses" in rules, rules


# In one transaction, rolled back: no worker gets the analysis it would enqueue.
@pytest.mark.django_db
def test_a_truncated_capture_is_analysed_up_to_the_damage(personas):
    whole = pcap_of(4, 4)
    (capture,) = capture_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        uploads=[upload("cut.pcap", whole[:-30])],
    )

    capture_analyse_stored(capture_id=capture.pk, seconds=60)

    capture.refresh_from_db()
    assert capture.job.status == CaptureStatus.READY
    assert (
        capture.analysis["problems"]
        and "ends inside a record" in (capture.analysis["problems"][0]["message"])
    )
    assert capture.packets == PcapCounter_of(whole[:-30])


def PcapCounter_of(content: bytes) -> int:  # noqa: N802
    counter = PcapCounter()
    counter.feed(content)
    return counter.packets


def test_an_upload_past_the_limit_is_refused_with_the_limit(personas, monkeypatch):
    monkeypatch.setattr("investigations.services.captures.MAX_IMPORT_BYTES", 10_000)
    answer = ApiClient(personas.member).post_multipart(
        f"/api/investigations/{personas.investigation.pk}/imports",
        {"side": "a", "format": "pcap", "file": [upload("big.pcap", pcap_of(*[50] * 40))]},
    )
    assert answer.status_code == 400
    assert "big.pcap: larger than" in answer.body["errors"][0]["message"]
    assert not Capture.objects.exists()


# In one transaction, rolled back: no worker gets the analysis it would enqueue.
@pytest.mark.django_db
def test_an_analysis_whose_worker_died_is_failed_by_the_sweep(personas):
    from datetime import timedelta

    from django.utils import timezone

    from investigations.tasks import sweep

    (capture,) = capture_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="a",
        uploads=[upload("a.pcap", pcap_of(1))],
    )
    Job.objects.filter(pk=capture.job_id).update(deadline_at=timezone.now() - timedelta(seconds=1))

    sweep()

    capture.refresh_from_db()
    assert capture.job.status == CaptureStatus.FAILED
    assert "did not finish within its time limit" in capture.job.error


# --- the packet counter ------------------------------------------------------------------


@pytest.mark.parametrize("chunk", [1, 3, 16, 17, 24, 25, 4096])
def test_the_packet_counter_counts_records_however_the_stream_is_cut(chunk):
    content = pcap_of(3, 2)
    counter = PcapCounter()
    for start in range(0, len(content), chunk):
        counter.feed(content[start : start + chunk])
    records, offset = 0, 24
    while offset < len(content):
        (length,) = struct.unpack_from("<I", content, offset + 8)
        offset += 16 + length
        records += 1
    assert counter.packets == records and counter.whole == len(content)
    cut = PcapCounter()
    cut.feed(content[:-5])
    assert cut.packets == records - 1 and cut.whole < len(content) - 5


def test_the_packet_counter_hears_tcpdump_listen_from_the_file_header_alone():
    """tcpdump writes the header once it has opened the interface, before any packet: the
    progress says "capturing" from then on, not while tcpdump is still starting."""
    counter = PcapCounter()
    header = pcap_of()
    counter.feed(header[:23])
    assert not counter.listening
    counter.feed(header[23:])
    assert counter.listening and counter.packets == 0


# --- during a ladder's step ---------------------------------------------------------------


# In one transaction, rolled back: no worker claims the targets this test stores into.
@pytest.mark.django_db
def test_a_capture_tied_to_a_ladder_step_starts_then_and_the_ladder_lists_it(personas):
    from datetime import timedelta

    from investigations.runs.capture import Captured
    from investigations.services.captures import CaptureResult, capture_store
    from investigations.services.collections import collection_request
    from investigations.services.targets import target_claim
    from tests.investigations.test_profiles import ladder_of, service_hosts

    service_hosts(personas)
    ladder = ladder_of(personas)

    collection = collection_request(
        investigation=personas.investigation,
        user=personas.member,
        kind="capture",
        parameters={"seconds": 60, "filter": "tcp port 443", "ladder": ladder.pk, "step": "2"},
    )

    # Step 2 (index 1) measures from start + 25 s (its slot) + 2 s (its warm-up), for 20 s.
    assert collection.start_at == ladder.start_at + timedelta(seconds=27)
    assert collection.parameters["step"] == 2 and collection.parameters["seconds"] == 20
    content = pcap_of(2)
    for target in collection.targets.all():
        target = target_claim(target_id=target.pk, seconds=60)
        file = tempfile.TemporaryFile()
        file.write(content)
        capture_store(
            target=target,
            attempt=target.attempts,
            result=CaptureResult(
                request=CaptureRequest(filter="tcp port 443", seconds=20),
                captured=Captured("x.pcap", file, len(content), "0" * 64, False, 0),
                analysis={"packets": 16, "bytes": len(content)},
                marks=[],
                tcpdump={},
            ),
        )

    answer = ApiClient(personas.viewer).get(f"/api/ladders/{ladder.pk}").body

    assert sorted((c["step"], c["side"]) for c in answer["captures"]) == [(2, "a"), (2, "b")]
    page = personas.client(personas.viewer).get(f"/ladders/{ladder.pk}/")
    assert "Packet captures taken during its steps" in page.text and "app-b" in page.text
