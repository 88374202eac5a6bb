"""Packet captures on the web: the panel (empty, listing, analysing, failed), a capture
imported through the page and analysed, its page, two compared with their marks, the pcap
downloaded as it was kept, and who may see and do what.

The captures are synthetic (collectors.capture.synth) with connections and silences chosen
here: side A opens a new connection for each request and its server waits 150 ms before
each response; side B keeps one connection for every request and answers at once.
"""

import io
import json
import re
from html import unescape

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.utils import timezone

from collectors.capture.synth import (
    ACK,
    FIN,
    LINKTYPE_ETHERNET,
    LINKTYPE_IPV4,
    PSH,
    SYN,
    PcapngWriter,
    PcapWriter,
    Segment,
    frame,
    ip_packet,
    syn_options,
)
from collectors.phrase import Phrase
from investigations.choices import CaptureStatus
from investigations.models import Capture, Job
from investigations.phrases import with_phrases
from investigations.services.captures import capture_analyse_stored
from tests.collectors.test_capture import DATA as CAPTURES_DATA
from tests.conftest import HOSTILE_STRINGS, loaded_page

pytestmark = pytest.mark.django_db

HX = {"HTTP_HX_REQUEST": "true"}
CLIENT, SERVER = "192.0.2.10", "192.0.2.80"
START_NS = 1_700_000_000 * 10**9
REQUEST = b"GET /checkout HTTP/1.1\r\nHost: shop\r\n\r\n"


def connection(sport: int, start_ns: int, *, requests: int, think_ms: float, serve_ms: float):
    """A TCP connection: handshake, `requests` requests each answered after `serve_ms`, the
    client waiting `think_ms` before each next one, then a close. (time ns, segment)s."""
    c, s = 1000 + sport * 7, 90000 + sport * 13
    t = start_ns
    out = []

    def add(dt_ms: float, from_client: bool, seq: int, ack: int, flags: int, payload=b"",
            options=b"") -> None:  # fmt: skip
        nonlocal t
        t += int(dt_ms * 1_000_000)
        src, dst = (CLIENT, SERVER) if from_client else (SERVER, CLIENT)
        sp, dp = (sport, 443) if from_client else (443, sport)
        out.append((t, Segment(src, dst, sp, dp, seq, ack, flags, 502, payload, options)))

    add(0, True, c, 0, SYN, options=syn_options())
    add(0.3, False, s, c + 1, SYN | ACK, options=syn_options())
    add(0.3, True, c + 1, s + 1, ACK)
    c, s = c + 1, s + 1
    for index in range(requests):
        add(think_ms if index else 0.2, True, c, s, PSH | ACK, REQUEST)
        c += len(REQUEST)
        add(serve_ms, False, s, c, PSH | ACK, b"x" * 600)
        s += 600
        add(0.2, True, c, s, ACK)
    add(0.5, True, c, s, FIN | ACK)
    add(0.2, False, s, c + 1, FIN | ACK)
    add(0.2, True, c + 1, s + 1, ACK)
    return out


def churning_side() -> list:
    """Side A: a new connection for each of 12 requests, each answered after 150 ms."""
    packets = []
    for index in range(12):
        start = START_NS + index * 200_000_000
        packets += connection(41000 + index, start, requests=1, think_ms=0, serve_ms=150)
    return sorted(packets, key=lambda p: p[0])


def keepalive_side() -> list:
    """Side B: one connection for 12 requests, each answered after 2 ms (the client thinks
    80 ms between them: no silence reaches the 100 ms threshold)."""
    return connection(42000, START_NS, requests=12, think_ms=80, serve_ms=2)


def pcap(packets) -> bytes:
    stream = io.BytesIO()
    writer = PcapWriter(stream, LINKTYPE_ETHERNET)
    for time_ns, segment in packets:
        writer.write(time_ns, frame(LINKTYPE_ETHERNET, ip_packet(segment)))
    return stream.getvalue()


def pcapng(packets) -> bytes:
    stream = io.BytesIO()
    writer = PcapngWriter(stream)
    interface = writer.interface(LINKTYPE_ETHERNET, resolution=9)
    for time_ns, segment in packets:
        writer.write(interface, time_ns, frame(LINKTYPE_ETHERNET, ip_packet(segment)))
    return stream.getvalue()


SIDE_A = pcap(churning_side())
SIDE_B = pcapng(keepalive_side())


@pytest.fixture(autouse=True)
def media(settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    return tmp_path / "media"


def html(response) -> str:
    return response.content.decode()


def case_url(personas) -> str:
    return f"/investigations/{personas.investigation.pk}/"


def panel_url(personas) -> str:
    return f"/investigations/{personas.investigation.pk}/panels/captures/"


def import_url(personas) -> str:
    return f"/investigations/{personas.investigation.pk}/captures/import/"


def detail_url(capture) -> str:
    return f"/investigations/{capture.investigation_id}/captures/{capture.pk}/"


def pcap_url(capture) -> str:
    return f"/investigations/{capture.investigation_id}/captures/{capture.pk}/pcap/"


def compare_url(personas, a=None, b=None) -> str:
    url = f"/investigations/{personas.investigation.pk}/captures/compare/"
    return f"{url}?a={a.pk}&b={b.pk}" if a and b else url


def upload(personas, user, side: str, name: str, data: bytes):
    return personas.client(user).post(
        import_url(personas),
        {"capture-side": side, "capture-file": SimpleUploadedFile(name, data)},
    )


def imported(personas, side: str, name: str, data: bytes) -> Capture:
    """Imported through the page by a responder, then analysed as the worker would."""
    response = upload(personas, personas.member, side, name, data)
    assert response.status_code == 302, html(response)
    capture = Capture.objects.filter(investigation=personas.investigation).first()
    capture_analyse_stored(capture_id=capture.pk, seconds=60)
    capture.refresh_from_db()
    assert capture.job.status == CaptureStatus.READY, capture.job.error
    return capture


@pytest.fixture
def pair(personas):
    a = imported(personas, "a", "checkout-a.pcap", SIDE_A)
    b = imported(personas, "b", "checkout-b.pcapng", SIDE_B)
    return a, b


def stored_files(media) -> list:
    return [p for p in media.rglob("*") if p.is_file()] if media.exists() else []


# --- the panel ------------------------------------------------------------------------------


def test_the_panel_says_what_captures_are_for_when_there_are_none(personas):
    page = unescape(loaded_page(personas.client(personas.member), case_url(personas)))

    assert 'id="captures"' in page
    assert "Packet captures" in page
    assert "No packet capture yet." in page
    assert 'name="kind" value="capture"' in page  # the start form posts to collection_new
    assert "cap_net_raw" in page and "sudo -n" in page and "tcpdump" in page
    assert "Import a capture made elsewhere" in page
    panel = html(personas.client(personas.member).get(panel_url(personas), **HX))
    assert 'hx-trigger="every 2s"' not in panel


def test_a_viewer_sees_the_panel_without_its_forms(personas):
    page = html(personas.client(personas.viewer).get(panel_url(personas), **HX))

    assert "No packet capture yet." in page
    assert 'value="capture"' not in page
    assert "/captures/import/" not in page


def test_an_imported_capture_is_listed_while_analysed_and_the_panel_polls(personas):
    response = upload(personas, personas.member, "a", "checkout-a.pcap", SIDE_A)
    assert response.status_code == 302
    assert response["Location"].endswith("#captures")
    capture = Capture.objects.get()
    Job.objects.filter(pk=capture.job_id).update(progress=42)

    panel = html(personas.client(personas.viewer).get(panel_url(personas), **HX))

    assert "checkout-a.pcap" in panel
    assert "Analysing" in panel
    assert 'value="42"' in panel and "42 %" in panel
    assert f'hx-get="{panel_url(personas)}"' in panel and 'hx-trigger="every 2s"' in panel
    assert "1 analysing" in panel  # beside the title


def test_an_analysed_capture_is_listed_with_its_packets_and_the_polling_stops(personas, pair):
    a, b = pair
    panel = html(personas.client(personas.viewer).get(panel_url(personas), **HX))

    assert 'hx-trigger="every 2s"' not in panel
    assert panel.count("Ready") == 2
    assert f">{a.packets}<" in panel and f">{b.packets}<" in panel
    assert a.packets == len(churning_side()) and b.packets == len(keepalive_side())
    assert f'href="{detail_url(a)}"' in panel and f'href="{detail_url(b)}"' in panel
    # The imports name no host: they pair as the imported pair.
    assert f"?a={a.pk}&amp;b={b.pk}" in panel
    assert "imported" in panel


def test_a_failed_analysis_says_why(personas):
    upload(personas, personas.member, "b", "b.pcap", SIDE_A)
    capture = Capture.objects.get()
    Job.objects.filter(pk=capture.job_id).update(
        status=CaptureStatus.FAILED,
        **with_phrases(
            {"error": Phrase("%(file)s cannot be analysed: %(error)s", file="b.pcap", error="boom")}
        ),
    )

    panel = unescape(html(personas.client(personas.viewer).get(panel_url(personas), **HX)))
    detail = unescape(html(personas.client(personas.viewer).get(detail_url(capture))))

    assert "Failed" in panel and "b.pcap cannot be analysed: boom" in panel
    assert 'hx-trigger="every 2s"' not in panel
    assert "b.pcap cannot be analysed: boom" in detail
    assert "download it to open it in Wireshark" in detail


def test_an_analysis_past_its_deadline_reads_as_failed_and_stops_the_polling(personas):
    upload(personas, personas.member, "a", "a.pcap", SIDE_A)
    Job.objects.filter(kind="capture_analysis").update(
        deadline_at=timezone.now() - timezone.timedelta(minutes=1)
    )

    panel = html(personas.client(personas.viewer).get(panel_url(personas), **HX))

    assert "Failed" in panel and "did not finish within its time limit" in panel
    assert 'hx-trigger="every 2s"' not in panel
    assert Capture.objects.get().job.status == CaptureStatus.ANALYSING  # a read never writes


# --- importing ------------------------------------------------------------------------------


def test_an_import_through_the_page_keeps_the_file_and_analyses_it(personas, pair, media):
    a, b = pair

    assert a.name == "checkout-a.pcap" and a.side.key == "a" and a.host is None
    assert a.size == len(SIDE_A) and b.size == len(SIDE_B)
    assert a.created_by == personas.member
    assert a.analysis["connections"] == 12 and b.analysis["connections"] == 1
    # Side A's server kept each request waiting 150 ms: twelve silences of the server.
    assert a.analysis["gap_count"] == 12
    assert {(g["silent"], g["before"]) for g in a.analysis["gaps"]} == {("server", "response")}
    assert a.marks and all(m["packets"] for m in a.marks)
    assert len(stored_files(media)) == 2


def test_a_file_that_is_not_a_capture_is_refused_and_nothing_is_kept(personas, media):
    response = upload(personas, personas.member, "b", "notes.pcap", b"GET / HTTP/1.1\r\n" * 40)

    assert response.status_code == 400
    page = unescape(html(response))
    assert "notes.pcap is not a pcap or pcapng file" in page
    # The import form is open, with the side chosen still chosen.
    assert re.search(r'<details class="capture-import" open>', page)
    assert re.search(r'<option value="b" selected>B</option>', page)
    assert Capture.objects.count() == 0
    assert stored_files(media) == []


def test_a_file_cut_inside_its_header_is_refused_at_once_naming_it(personas, media):
    response = upload(personas, personas.member, "a", "cut.pcap", SIDE_A[:10])

    assert response.status_code == 400  # its first bytes are a capture's, but no more
    page = unescape(html(response))
    assert (
        "cut.pcap is 10 bytes: too short to be a capture, whose file header alone is 24 bytes."
        in page
    )
    assert re.search(r'<details class="capture-import" open>', page)
    assert Capture.objects.count() == 0 and stored_files(media) == []


def test_an_empty_file_is_refused(personas, media):
    response = upload(personas, personas.member, "a", "empty.pcap", b"")

    assert response.status_code == 400
    assert "The submitted file is empty." in html(response)
    assert Capture.objects.count() == 0 and stored_files(media) == []


def test_several_files_import_at_once_onto_one_side(personas):
    response = personas.client(personas.member).post(
        import_url(personas),
        {
            "capture-side": "b",
            "capture-file": [
                SimpleUploadedFile("one.pcap", SIDE_A),
                SimpleUploadedFile("two.pcapng", SIDE_B),
            ],
        },
        follow=True,
    )

    assert "Imported 2 captures onto side B: they are being analysed." in html(response)
    assert sorted(Capture.objects.values_list("name", "side__key")) == [
        ("one.pcap", "b"),
        ("two.pcapng", "b"),
    ]


def test_an_import_without_a_file_names_the_field(personas):
    response = personas.client(personas.member).post(import_url(personas), {"capture-side": "a"})

    assert response.status_code == 400
    assert "Choose a pcap or pcapng file." in html(response)
    assert Capture.objects.count() == 0


def test_a_damaged_capture_is_analysed_up_to_the_damage_and_says_so(personas):
    damaged = SIDE_A[:-30]  # cut inside the last record
    capture = imported(personas, "a", "cut-short.pcap", damaged)

    page = unescape(html(personas.client(personas.viewer).get(detail_url(capture))))

    assert "Read this first" in page
    assert "The file is damaged in 1 place" in page
    assert "the file ends inside a record" in page


def test_packets_in_a_tunnel_not_read_are_counted_on_the_page_never_dropped(personas):
    data = (CAPTURES_DATA / "tunnels-ethernet.pcap").read_bytes()
    capture = imported(personas, "a", "tunnels.pcap", data)

    page = unescape(html(personas.client(personas.viewer).get(detail_url(capture))))

    assert "Read this first" in page
    assert "2 packets came through a tunnel this analysis does not read" in page
    assert "2 skipped (inside a tunnel not read here: 2)" in page


def test_tcp_in_ip_fragments_is_counted_as_skipped_on_the_page(personas):
    segment = Segment("192.0.2.1", "192.0.2.2", 40000, 80, 1, 1, 0x18, payload=b"x" * 40)
    body = ip_packet(segment)[20:]
    stream = io.BytesIO()
    writer = PcapWriter(stream, LINKTYPE_IPV4)
    writer.write(10**18, ip_packet(segment, transport=body[:16], fragment=(0, True)))
    writer.write(10**18 + 1, ip_packet(segment, transport=body[16:], fragment=(2, False)))
    capture = imported(personas, "a", "fragments.pcap", stream.getvalue())

    page = unescape(html(personas.client(personas.viewer).get(detail_url(capture))))

    assert "2 skipped (TCP in IP fragments, not reassembled: 2)" in page


# --- a capture's page -----------------------------------------------------------------------


def test_a_captures_page_shows_its_figures_charts_silences_and_connections(personas, pair):
    a, _b = pair
    response = personas.client(personas.viewer).get(detail_url(a))
    assert response.status_code == 200
    page = unescape(html(response))

    assert '<h1 class="title">checkout-a.pcap</h1>' in page
    assert "new connections per second" in page  # the figures, with their labels
    assert "TCP connections" in page
    # A chart per figure and the packet-by-packet one, each from its json_script.
    for name in ("connections", "traffic", "intervals", "waits", "timeline"):
        assert f'data-chart="chart-capture-{name}"' in page
        assert f'id="capture-{name}" type="application/json"' in page
    assert "seconds since the capture began" in page
    # The silences: who was silent and what it sent then.
    gaps = page[page.index('<table class="list gaps">') :]
    gaps = gaps[: gaps.index("</table>")]
    assert gaps.count("<tr>") == 13  # the heading and twelve silences
    assert "server" in gaps and "its response" in gaps
    assert "192.0.2.10:41000 -&gt; 192.0.2.80:443" in html(response)
    assert "Server ports" in page and ">443<" in page
    assert f'href="{pcap_url(a)}"' in page
    assert "Compare with the other side" in page


def test_an_empty_capture_has_a_page_and_compares(personas, pair):
    a, _b = pair
    empty = imported(personas, "b", "header-only.pcap", pcap([]))
    client = personas.client(personas.viewer)

    page = unescape(html(client.get(detail_url(empty))))
    compared = client.get(compare_url(personas, a, empty))

    assert empty.packets == 0
    assert "No TCP connection in this capture." in page
    assert "0 silences longer than 100 ms" in page
    assert compared.status_code == 200
    assert "No silence longer than 100 ms." in unescape(html(compared))


def test_a_captures_page_while_it_is_analysed_polls_for_itself(personas):
    upload(personas, personas.member, "a", "a.pcap", SIDE_A)
    capture = Capture.objects.get()

    page = html(personas.client(personas.viewer).get(detail_url(capture)))

    assert "Being analysed" in page
    assert f'hx-get="{detail_url(capture)}"' in page and 'hx-select="#capture-live"' in page
    assert "data-chart" not in page


def test_a_capture_stopped_at_its_cap_with_kernel_drops_says_both(personas, pair):
    a, _b = pair
    Capture.objects.filter(pk=a.pk).update(
        truncated=True,
        tcpdump={"captured": 9000, "received": 9400, "dropped": 400, "stopped_at_cap": True},
    )

    page = unescape(html(personas.client(personas.viewer).get(detail_url(a))))

    assert "The capture stopped at its size cap" in page
    assert "The kernel dropped 400 packets" in page
    assert "tcpdump: dropped by the kernel" in page


def test_the_pcap_downloads_as_it_was_kept(personas, pair):
    a, b = pair
    for capture, data in ((a, SIDE_A), (b, SIDE_B)):
        response = personas.client(personas.viewer).get(pcap_url(capture))

        assert response.status_code == 200
        assert response["Content-Type"] == "application/vnd.tcpdump.pcap"
        assert response["Content-Disposition"] == f'attachment; filename="{capture.name}"'
        assert b"".join(response.streaming_content) == data


def test_a_collected_capture_named_after_its_host_downloads_as_a_pcap(personas, pair):
    a, _b = pair
    Capture.objects.filter(pk=a.pk).update(name="app-a")

    response = personas.client(personas.viewer).get(pcap_url(a))

    assert response["Content-Disposition"] == 'attachment; filename="app-a.pcap"'


# --- two captures compared ------------------------------------------------------------------


def compare_rows(page: str) -> dict[str, str]:
    """Each figure's row of the comparison table: {label: its mark's class, or ""}."""
    table = page[page.index('<table class="list capture-compare">') :]
    table = table[: table.index("</table>")]
    rows = {}
    for row in re.findall(r"<tr>\s*<th scope=\"row\">(.*?)</th>(.*?)</tr>", table, re.S):
        label, cells = row
        mark = re.search(r'class="mark (mark-[a-z-]+)"', cells)
        rows[unescape(label)] = mark.group(1) if mark else ""
    return rows


def test_the_comparison_marks_each_figure_from_side_as_point_of_view(personas, pair):
    a, b = pair
    response = personas.client(personas.viewer).get(compare_url(personas, a, b))
    assert response.status_code == 200
    page = html(response)
    rows = compare_rows(page)

    # A opens a connection for each request where B reuses one, and its server keeps each
    # waiting.
    assert rows["requests per connection"] == "mark-worse"
    assert rows["silences over the threshold per request"] == "mark-worse"
    assert rows["longest silence (s)"] == ""  # B has none: nothing to compare with
    # A's capture ran 2.4 s, B's 1 s: what is counted over each whole capture has no verdict.
    assert rows["new connections per second"] == "mark-unjudged"
    assert rows["silences over the threshold"] == "mark-unjudged"
    assert rows["seconds the servers were silent (in gaps)"] == "mark-unjudged"
    assert "The captures ran for different lengths" in page
    assert rows["retransmissions"] == "mark-about-equal"  # none on either side
    assert rows["packets"] == ""  # plain volume: no verdict
    assert "↓" in page and "≈" in page
    assert '<span class="visually-hidden">worse</span>' in page
    assert '<span class="visually-hidden">about equal</span>' in page
    assert 'title="worse on side A"' in page


def test_the_comparison_draws_both_sides_on_each_chart_and_each_sides_connections(personas, pair):
    a, b = pair
    page = unescape(html(personas.client(personas.viewer).get(compare_url(personas, a, b))))

    for name in ("connections", "traffic", "intervals", "waits", "timeline-a", "timeline-b"):
        assert f'data-chart="chart-compare-{name}"' in page
    script = re.search(r'id="compare-connections" type="application/json">(.*?)</script>', page)
    names = [trace["name"] for trace in json.loads(script.group(1))["data"]]
    assert names == ["A · new cloud new connections", "B · old cloud new connections"]
    assert "Longest silences" in page


def test_the_comparison_without_a_query_shows_the_newest_pair(personas, pair):
    a, b = pair
    page = html(personas.client(personas.viewer).get(compare_url(personas)))

    assert f'href="{detail_url(a)}"' in page and f'href="{detail_url(b)}"' in page


def test_the_comparison_without_any_pair_is_not_found(personas):
    assert personas.client(personas.viewer).get(compare_url(personas)).status_code == 404


def test_the_comparison_of_a_capture_still_analysed_says_so(personas, pair):
    a, b = pair
    Job.objects.filter(pk=b.job_id).update(status=CaptureStatus.ANALYSING)

    page = html(personas.client(personas.viewer).get(compare_url(personas, a, b)))

    assert "Both captures must be analysed before they compare" in page
    assert "data-chart" not in page


def test_the_comparison_ignores_ids_that_are_not_ids(personas, pair):
    url = f"/investigations/{personas.investigation.pk}/captures/compare/?a=%C2%B2&b=1e9"
    assert personas.client(personas.viewer).get(url).status_code == 200  # the newest pair


# --- the ladder's marks -------------------------------------------------------------------------


def test_the_mark_template_gives_an_arrow_a_title_and_a_word():
    from django.template.loader import render_to_string

    assert render_to_string("investigations/_mark.html", {"verdict": ""}).strip() == ""
    better = render_to_string("investigations/_mark.html", {"verdict": "better"})
    assert 'class="mark mark-better"' in better and "↑" in better
    assert '<span aria-hidden="true">↑</span>' in better
    assert '<span class="visually-hidden">better</span>' in better
    assert "mark-about-equal" in render_to_string(
        "investigations/_mark.html", {"verdict": "about equal"}
    )


# --- who may see and do what ----------------------------------------------------------------


def test_an_outsider_finds_nothing(personas, pair):
    a, b = pair
    client = personas.client(personas.outsider)

    assert client.get(detail_url(a)).status_code == 404
    assert client.get(pcap_url(a)).status_code == 404
    assert client.get(compare_url(personas, a, b)).status_code == 404
    assert client.get(panel_url(personas), **HX).status_code == 404
    assert upload(personas, personas.outsider, "a", "x.pcap", SIDE_A).status_code == 404
    assert Capture.objects.count() == 2


def test_a_capture_of_another_investigation_is_not_found_here(personas, pair):
    from investigations.services.investigations import investigation_create

    a, b = pair
    other = investigation_create(
        team=personas.team, user=personas.lead, title="Another case", side_a_label="x",
        side_b_label="y",
    )  # fmt: skip
    client = personas.client(personas.lead)

    assert client.get(f"/investigations/{other.pk}/captures/{a.pk}/").status_code == 404
    assert client.get(f"/investigations/{other.pk}/captures/{a.pk}/pcap/").status_code == 404
    url = f"/investigations/{other.pk}/captures/compare/?a={a.pk}&b={b.pk}"
    assert client.get(url).status_code == 404


def test_a_viewer_reads_everything_but_cannot_import_or_start(personas, pair, media):
    a, b = pair
    client = personas.client(personas.viewer)

    assert client.get(detail_url(a)).status_code == 200
    assert client.get(pcap_url(a)).status_code == 200
    assert client.get(compare_url(personas, a, b)).status_code == 200
    assert upload(personas, personas.viewer, "a", "x.pcap", SIDE_A).status_code == 403
    started = client.post(
        f"/investigations/{personas.investigation.pk}/collections/", {"kind": "capture"}
    )
    assert started.status_code == 403
    assert Capture.objects.count() == 2 and len(stored_files(media)) == 2


def test_the_import_takes_posts_only(personas):
    assert personas.client(personas.member).get(import_url(personas)).status_code == 405


def test_signed_out_visitors_are_sent_to_sign_in(personas, pair):
    from django.test import Client

    a, _b = pair
    for url in (detail_url(a), pcap_url(a), compare_url(personas)):
        response = Client().get(url)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]


# --- hostile strings ----------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["<script>alert(1)</script>.pcap", *HOSTILE_STRINGS])
def test_a_hostile_capture_name_shows_as_typed_everywhere(personas, pair, name):
    a, b = pair
    Capture.objects.filter(pk=a.pk).update(name=name[:200])
    client = personas.client(personas.viewer)

    for url in (case_url(personas), detail_url(a), compare_url(personas, a, b)):
        page = loaded_page(client, url)
        assert "<script>alert(" not in page
        assert "<img src=x" not in page
        assert name[:40] in unescape(page) or name[:40] in page
    response = client.get(pcap_url(a))
    assert response.status_code == 200
    assert "\n" not in response["Content-Disposition"]


def test_a_hostile_side_label_is_escaped_in_the_charts(personas, pair):
    a, b = pair
    personas.investigation.sides.filter(key="a").update(label='<img src=x onerror="alert(1)">')

    page = html(personas.client(personas.viewer).get(compare_url(personas, a, b)))

    assert "<img src=x" not in page
    # In the figures' JSON the label is HTML-escaped for plotly, which reads names as HTML.
    script = re.search(r'id="compare-connections"[^>]*>(.*?)</script>', page).group(1)
    names = [trace["name"] for trace in json.loads(script)["data"]]
    assert names[0] == 'A · &lt;img src=x onerror="alert(1)"&gt; new connections'
