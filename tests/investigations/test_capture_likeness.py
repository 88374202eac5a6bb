"""Captures compare like with like (issue 24): made here with real curl against a server on
loopback and recorded by real tcpdump, imported and analysed as a worker would.

Side A: 20 curls, 0.2 s apart (4 s or more), and a copy of that file cut inside a record
after its third connection (imported later, so newest); side B: the same 20 curls without pauses.
Every connection carries one request, and there is no TLS: no finding may say that one side
opens more connections, nor point to a TLS cause, and the comparison judges no figure that
only says how long each capture ran.
"""

import os
import re
import shutil
import subprocess
import tempfile
import time
from html import unescape
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from collectors.capture import analyse_capture, compare, read_packets
from collectors.capture.remote import CaptureRequest
from collectors.capture.summary import durations_alike
from investigations.analysis.capture_rules import evaluate_captures
from investigations.models import Capture, Finding
from investigations.selectors.captures import capture_pairs
from investigations.selectors.hypotheses import case_evidence
from investigations.services.captures import capture_analyse_stored, capture_import
from tests.collectors.test_capture_live import need, tcpdump
from tests.conftest import ApiClient
from tests.traffic import server

# The shipped entries, put back if a transactional test of this process emptied them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shipped_knowledge")]

ADDRESS = "127.0.0.233"
CURLS = 20
TLS_RULE, TLS_CAUSE = "capture_tls_handshakes", "short-lived-tls-connections"
DATA = Path(__file__).parent.parent / "collectors" / "data" / "captures"


def answer_http(connection) -> None:
    """An HTTP answer to each request, the connection kept until the client closes it."""
    buffered = b""
    while True:
        data = connection.recv(4096)
        if not data:
            return
        buffered += data
        while b"\r\n\r\n" in buffered:
            _, buffered = buffered.split(b"\r\n\r\n", 1)
            connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n")


def curl(port: int, *paths: str) -> None:
    """One curl process: one connection, one request per path (kept alive between them)."""
    urls = [f"http://{ADDRESS}:{port}/{path}" for path in paths]
    outputs = [arg for url in urls for arg in ("-o", os.devnull, url)]
    subprocess.run(
        [shutil.which("curl") or "curl", "--silent", "--show-error", "--noproxy", "*",
         "--http1.1", "--max-time", "10", *outputs],
        check=True,
        timeout=30,
    )  # fmt: skip


def cut_after(content: bytes, path: Path, *, connections: int) -> bytes:
    """The capture cut inside the first record of its connection number `connections` + 1
    (as a copy cut short by hand is): whole up to there, then a partial record."""
    first = next(p.number for p in read_packets(path) if p.stream == connections)
    offset = 24  # the pcap file header, then 16 bytes before each record's data
    for _ in range(first - 1):
        offset += 16 + int.from_bytes(content[offset + 8 : offset + 12], "little")
    return content[: offset + 20]


@pytest.fixture(scope="module")
def recorded() -> dict[str, bytes]:
    """{"a": 20 curls 0.2 s apart, "cut": a's first three connections and a partial
    record, "b": 20 curls one after the other, "keepalive": one curl of 20 requests}."""
    need("tcpdump", "curl", root=True)
    files = {}
    with tempfile.TemporaryDirectory(prefix="perfcase-likeness-") as directory:
        with server(ADDRESS, answer_http) as port:
            for name, pause in (("a", 0.2), ("b", 0.0), ("keepalive", None)):
                path = Path(directory) / f"{name}.pcap"
                with tcpdump(path, "lo", f"host {ADDRESS} and tcp port {port}"):
                    if pause is None:
                        curl(port, *map(str, range(CURLS)))
                    for number in range(CURLS if pause is not None else 0):
                        time.sleep(pause if number else 0)
                        curl(port, str(number))
                files[name] = path.read_bytes()
            files["cut"] = cut_after(files["a"], Path(directory) / "a.pcap", connections=3)
    return files


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")


def imported(personas, side: str, name: str, content: bytes) -> Capture:
    (capture,) = capture_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key=side,
        uploads=[SimpleUploadedFile(name, content)],
    )
    capture_analyse_stored(capture_id=capture.pk, seconds=60)
    capture = Capture.objects.select_related("job").get(pk=capture.pk)
    assert capture.job.status == "ready", capture.job.error
    return capture


@pytest.fixture
def issue_scenario(personas, recorded) -> dict[str, Capture]:
    """Side A's whole capture, side B's, then side A's cut copy: the newest."""
    return {
        "a": imported(personas, "a", "curls-a.pcap", recorded["a"]),
        "b": imported(personas, "b", "curls-b.pcap", recorded["b"]),
        "cut": imported(personas, "a", "curls-a-cut.pcap", recorded["cut"]),
    }


def test_the_recorded_captures_are_what_the_issue_describes(issue_scenario):
    a, b, cut = (issue_scenario[key].analysis for key in ("a", "b", "cut"))

    for whole in (a, b):
        assert whole["connections"] == CURLS and whole["connection"]["requests"] == CURLS
        assert whole["tls_handshakes"] == 0 and whole["problem_count"] == 0
    assert cut["connections"] == 3 and cut["problem_count"] == 1
    assert "ends inside a record" in cut["problems"][0]["message"]
    # The same 20 requests, captured over lengths that differ (by A's pauses alone).
    assert not durations_alike(a["duration_s"], b["duration_s"])


def test_a_damaged_capture_is_never_compared_by_default(personas, issue_scenario):
    (pair,) = capture_pairs(investigation=personas.investigation)

    assert (pair.a.pk, pair.b.pk) == (issue_scenario["a"].pk, issue_scenario["b"].pk)
    assert pair.a.analysis["connections"] == CURLS  # loaded whole, for the rules
    # The capture's page offers to compare B with A's whole capture, not the cut copy.
    b = issue_scenario["b"]
    page = personas.client(personas.viewer).get(
        f"/investigations/{personas.investigation.pk}/captures/{b.pk}/"
    )
    assert f"?a={issue_scenario['a'].pk}&amp;b={b.pk}" in page.content.decode()


def test_a_capture_that_saw_no_packets_is_never_compared_by_default(personas, recorded):
    """A filter that missed the traffic: the capture is kept and has its page, but it says
    nothing of its side, so neither the default pair nor the ranking reads it as compared
    ("no difference" would count against every network cause)."""
    a = imported(personas, "a", "curls-a.pcap", recorded["a"])
    b = imported(personas, "b", "curls-b.pcap", recorded["b"])
    header_only = recorded["b"][:24]
    empty = imported(personas, "b", "missed.pcap", header_only)  # newest on side B
    assert empty.packets == 0

    (pair,) = capture_pairs(investigation=personas.investigation)
    assert (pair.a.pk, pair.b.pk) == (a.pk, b.pk)
    assert "capture" in case_evidence(investigation=personas.investigation).compared

    Capture.objects.filter(pk=b.pk).delete()  # side B's only capture is the empty one
    assert capture_pairs(investigation=personas.investigation) == []
    assert "capture" not in case_evidence(investigation=personas.investigation).compared


def test_twenty_single_request_connections_on_each_side_raise_no_connection_finding(
    personas, issue_scenario
):
    findings = Finding.objects.filter(investigation=personas.investigation)

    rules = set(findings.values_list("rule", flat=True))
    assert not rules & {"capture_connection_churn", TLS_RULE}, rules
    assert not findings.filter(root_cause__slug=TLS_CAUSE).exists()


@pytest.mark.parametrize("side_a", ["a", "cut"])
def test_the_rules_compare_requests_per_connection_not_rates_per_second(recorded, side_a):
    """Even the cut copy, compared by hand, is like side B per connection."""
    with tempfile.NamedTemporaryFile(suffix=".pcap") as file:
        file.write(recorded[side_a])
        file.flush()
        a = analyse_capture(file.name).as_dict()
    with tempfile.NamedTemporaryFile(suffix=".pcap") as file:
        file.write(recorded["b"])
        file.flush()
        b = analyse_capture(file.name).as_dict()

    verdicts = evaluate_captures(a, b)
    assert not [v for v in verdicts if v.rule in ("capture_connection_churn", TLS_RULE)]
    assert not [v for v in verdicts if v.root_cause == TLS_CAUSE]


def test_connection_churn_without_tls_names_no_tls_cause(recorded):
    """One request per connection against one connection for all twenty: churn, but a plain
    TCP one."""
    analyses = {}
    for name in ("b", "keepalive"):
        with tempfile.NamedTemporaryFile(suffix=".pcap") as file:
            file.write(recorded[name])
            file.flush()
            analyses[name] = analyse_capture(file.name).as_dict()
    assert analyses["keepalive"]["connections"] == 1
    assert analyses["keepalive"]["connection"]["requests"] == CURLS

    verdicts = evaluate_captures(analyses["b"], analyses["keepalive"])
    (churn,) = [v for v in verdicts if v.rule == "capture_connection_churn"]
    assert not [v for v in verdicts if v.root_cause == TLS_CAUSE or v.rule == TLS_RULE]

    assert churn.rule == "capture_connection_churn" and churn.root_cause == ""
    assert churn.severity == "medium"
    assert churn.title == ("Side A makes 1.0 requests per connection where the other makes 20.0")


def test_connection_churn_with_tls_seen_names_the_tls_cause():
    tls = analyse_capture(DATA / "tls-short-connections-sll2.pcap").as_dict()
    keepalive = analyse_capture(DATA / "keepalive-pauses-ethernet.pcap").as_dict()

    verdicts = {v.rule: v for v in evaluate_captures(tls, keepalive)}

    assert verdicts["capture_connection_churn"].root_cause == "short-lived-tls-connections"
    assert verdicts["capture_connection_churn"].severity == "high"
    assert verdicts["capture_tls_handshakes"].root_cause == "short-lived-tls-connections"


# --- the comparison ------------------------------------------------------------------------


def test_figures_over_captures_of_different_lengths_get_no_verdict(recorded):
    with tempfile.NamedTemporaryFile(suffix=".pcap") as file_a:
        file_a.write(recorded["a"])
        file_a.flush()
        with tempfile.NamedTemporaryFile(suffix=".pcap") as file_b:
            file_b.write(recorded["b"])
            file_b.flush()
            rows = {row.figure: row for row in compare(analyse_capture(file_a.name),
                                                       analyse_capture(file_b.name))}  # fmt: skip

    for figure in ("packets_per_s", "connections_per_s", "throughput_bps"):
        assert rows[figure].better is None, figure
        assert rows[figure].no_verdict == "durations_differ", figure
    # Per request and per connection the sides are alike, whatever the lengths.
    assert rows["requests_per_connection"].better == "same"
    assert rows["requests_per_connection"].no_verdict is None


def test_the_comparison_page_says_why_rates_have_no_verdict(personas, issue_scenario):
    a, b = issue_scenario["a"], issue_scenario["b"]
    url = f"/investigations/{personas.investigation.pk}/captures/compare/?a={a.pk}&b={b.pk}"
    client = personas.client(personas.viewer)

    page = unescape(client.get(url).content.decode())
    table = page[page.index('<table class="list capture-compare">') :]
    for label in ("packets per second", "new connections per second"):
        row = table[table.index(f'<th scope="row">{label}</th>') :]
        row = row[: row.index("</tr>")]
        assert "mark-unjudged" in row and "mark-better" not in row and "mark-worse" not in row
    row = table[table.index('<th scope="row">requests per connection</th>') :]
    assert "mark-about-equal" in row[: row.index("</tr>")]
    assert "The captures ran for different lengths (A " in page
    assert "rates per second and totals over each capture" in page

    zh = unescape(client.get(url, HTTP_ACCEPT_LANGUAGE="zh-CN").content.decode())
    assert "两次抓包的时长不同" in zh

    compared = ApiClient(personas.viewer).get(
        f"/api/investigations/{personas.investigation.pk}/captures/compare",
        data={"a": a.pk, "b": b.pk},
    )
    figures = {row["figure"]: row for row in compared.body["figures"]}
    assert figures["packets_per_s"]["better"] is None
    assert figures["packets_per_s"]["no_verdict"] == "durations_differ"


# --- captures collected from the hosts --------------------------------------------------------


def analysis_of(content: bytes) -> dict:
    with tempfile.NamedTemporaryFile(suffix=".pcap") as file:
        file.write(content)
        file.flush()
        return analyse_capture(file.name).as_dict()


def collected(personas, **contents: bytes) -> dict[str, Capture]:
    """A capture collection of both service hosts, the file of each side named stored (the
    other side's target never ends): {side: its capture}."""
    from investigations.runs.capture import Captured
    from investigations.services.captures import CaptureResult, capture_store
    from investigations.services.collections import collection_request
    from investigations.services.targets import target_claim

    collection = collection_request(
        investigation=personas.investigation,
        user=personas.member,
        kind="capture",
        parameters={"seconds": 5, "filter": "tcp port 80"},
    )
    stored = {}
    for target in collection.targets.select_related("side"):
        content = contents.get(target.side.key)
        if content is None:
            continue
        target = target_claim(target_id=target.pk, seconds=60)
        file = tempfile.TemporaryFile()
        file.write(content)
        stored[target.side.key] = capture_store(
            target=target,
            attempt=target.attempts,
            result=CaptureResult(
                request=CaptureRequest(filter="tcp port 80", seconds=5),
                captured=Captured("x.pcap", file, len(content), "0" * 64, False, 0),
                analysis=analysis_of(content),
                marks=[],
                tcpdump={},
            ),
        )
    return stored


def test_captures_of_the_same_collection_compare_before_newer_ones_of_one_side(personas, recorded):
    from tests.investigations.test_profiles import service_hosts

    service_hosts(personas)
    together = collected(personas, a=recorded["b"], b=recorded["b"])
    collected(personas, a=recorded["a"])  # newer, side A only
    collected(personas, a=recorded["cut"], b=recorded["b"])  # the newest, A's damaged

    (pair,) = capture_pairs(investigation=personas.investigation)

    assert (pair.a.pk, pair.b.pk) == (together["a"].pk, together["b"].pk)
    assert pair.key == f"capture:{together['a'].host_id}:{together['b'].host_id}"


def test_a_damaged_capture_compared_by_hand_says_it_is_damaged(personas, issue_scenario):
    cut, b = issue_scenario["cut"], issue_scenario["b"]
    url = f"/investigations/{personas.investigation.pk}/captures/compare/?a={cut.pk}&b={b.pk}"

    page = unescape(personas.client(personas.viewer).get(url).content.decode())

    assert "curls-a-cut.pcap (side A) is damaged: it was analysed up to the damage" in page
    assert "curls-b.pcap (side B) is damaged" not in page
    # The choices of what to compare say which capture is damaged.
    options = re.findall(r"<option [^>]*>([^<]*)</option>", page)
    assert [o for o in options if o.endswith(", damaged)")] == [
        option for option in options if "curls-a-cut.pcap" in option
    ]
    assert len(options) == 6


def test_no_past_case_is_similar_for_a_root_cause_the_captures_do_not_show(personas, recorded):
    from investigations.models import RootCause
    from investigations.selectors.similar import similar_cases
    from tests.investigations.test_similar import closed

    tls_case = closed(
        personas,
        "File uploads slow on the other cloud",
        root_cause=RootCause.objects.get(slug=TLS_CAUSE),
    )
    imported(personas, "a", "curls-a.pcap", recorded["a"])
    imported(personas, "b", "curls-b.pcap", recorded["b"])
    imported(personas, "a", "curls-a-cut.pcap", recorded["cut"])

    found = similar_cases(investigation=personas.investigation, user=personas.lead)

    reasons = [reason for item in found if item.case == tls_case for reason in item.reasons]
    assert not [reason for reason in reasons if "same root cause" in reason], reasons
