"""A case's likely causes from its evidence: the selector on the demo and on built cases (a
bounded number of queries), GET /api/investigations/{id}/hypotheses, the "Likely causes"
panel, and the signals of a knowledge-base entry on its page and in its edit form."""

import json
import re
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils.html import escape

from collectors.phrase import Phrase
from investigations.analysis.ladder import Point, slower_side
from investigations.analysis.rules.base import Verdict
from investigations.choices import FindingSeverity, LadderStatus
from investigations.models import BaselineResult, Ladder, RootCause
from investigations.selectors.hypotheses import case_hypotheses
from investigations.services.findings import PairVerdicts, findings_record
from tests.conftest import ApiClient, loaded_page
from tests.investigations.test_knowledge_owners import operator, team_entry

# Ranked against the shipped entries, put back after a transactional test emptied them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shipped_knowledge")]


def raise_findings(investigation, *verdicts: tuple[str, str]) -> None:
    """Findings of these (rule, subject) on the case, as the rules record them."""
    findings_record(
        investigation=investigation,
        pairs=[
            PairVerdicts(
                "facts:1:2",
                None,
                None,
                [
                    Verdict(
                        rule=rule,
                        subject=subject,
                        severity=FindingSeverity.HIGH,
                        title=Phrase(f"{rule} differs"),
                        explanation=Phrase("It differs."),
                        recommendation=Phrase("Align it."),
                        side_a="x",
                        side_b="y",
                    )
                    for rule, subject in verdicts
                ],
            )
        ],
    )


def hypotheses_url(investigation) -> str:
    return f"/api/investigations/{investigation.pk}/hypotheses"


# --- the selector --------------------------------------------------------------------------


def test_the_demo_case_names_its_confirmed_cause_first(demo_case):
    _, case = demo_case
    found = case_hypotheses(investigation=case)
    top = found["hypotheses"][0]
    assert top.entry.slug == "cpu-governor-powersave"
    assert found["difference_found"]
    assert {item.kind for item in found["compared"]} >= {"facts", "baseline", "ladder"}
    assert any(item.kind == "finding" for item in top.supporting)


def test_the_selector_reads_a_bounded_number_of_queries_however_many_findings(personas):
    case = personas.investigation
    raise_findings(case, ("cpu_governor", ""))

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            case_hypotheses(investigation=case)
        return len(captured)

    before = queries()
    raise_findings(case, *(("fact_differs", f"sysctl.key_{n}") for n in range(40)))
    raise_findings(case, ("thp_enabled", ""), ("clocksource", ""))
    assert queries() == before <= 12


def test_a_case_with_no_evidence_ranks_nothing(personas):
    found = case_hypotheses(investigation=personas.investigation)
    assert found == {"hypotheses": [], "compared": [], "difference_found": False}


def slower_ladder_and_cpu_rows(investigation, *, slower: str, events_a: float, events_b: float):
    """A completed ladder whose sides part with `slower` the slower, and the baseline's
    single-thread CPU result of each side's service host."""
    Ladder.objects.create(
        investigation=investigation,
        steps=[10],
        step_seconds=20,
        status=LadderStatus.COMPLETED,
        analysis={"divergence": {"index": 0, "load": 10, "reason": "they part", "slower": slower}},
    )
    for key, events in (("a", events_a), ("b", events_b)):
        BaselineResult.objects.create(
            investigation=investigation,
            side=investigation.sides.get(key=key),
            role="service",
            benchmark="cpu_1",
            metric="events_per_second",
            values=[events],
            median=events,
            spread=0.0,
        )


def governor(found) -> tuple[list[str], list[str]]:
    (hypothesis,) = [h for h in found["hypotheses"] if h.entry.slug == "cpu-governor-powersave"]
    return [i.summary for i in hypothesis.supporting], [i.summary for i in hypothesis.against]


@pytest.mark.parametrize(("slower", "counts_for"), [("b", False), ("a", True)])
def test_a_baseline_row_counts_for_a_cause_only_where_it_shows_the_slower_side_worse(
    personas, slower, counts_for
):
    """Side A computes at half B's speed. With the ladder finding A slower, that supports a
    CPU cause; with B slower, it explains nothing of the gap and counts as no difference."""
    raise_findings(personas.investigation, ("cpu_governor", "cpu0"))
    slower_ladder_and_cpu_rows(personas.investigation, slower=slower, events_a=500, events_b=1000)

    supporting, against = governor(case_hypotheses(investigation=personas.investigation))

    baseline_for = [s for s in supporting if "cpu_1" in s or "worse at" in s]
    baseline_against = [s for s in against if "cpu_1" in s or "worse at" in s]
    if counts_for:
        assert baseline_for and not baseline_against, (supporting, against)
    else:
        assert baseline_against and not baseline_for, (supporting, against)
        assert (
            "worse on the faster side, so it does not explain why side B is slower"
            in (baseline_against[0])
        )


def test_the_slower_side_is_where_throughput_is_lower_else_where_p99_is_higher():
    def at(load, rps, p99):
        return Point(0, load, rps, None, p99, 0.0)

    weak, strong = [at(10, 100, 5), at(20, 100, 50)], [at(10, 100, 5), at(20, 190, 6)]
    assert slower_side(weak, strong, 20, 0.2) == "a"
    assert slower_side(strong, weak, 20, 0.2) == "b"
    same_rps, slow_tail = [at(10, 100, 5)], [at(10, 100, 9)]
    assert slower_side(same_rps, slow_tail, 10, 0.2) == "b"
    assert slower_side(weak, strong, None, 0.2) is None


# --- the API -------------------------------------------------------------------------------


def test_the_api_answers_the_contract(personas):
    case = personas.investigation
    raise_findings(
        case, ("cgroup_cpu_limit", "service.cgroup.cpu_quota"), ("cgroup_throttling", "")
    )

    response = ApiClient(personas.viewer).get(hypotheses_url(case))

    assert response.status_code == 200, response.body
    body = response.body
    top = body["items"][0]
    assert set(top) >= {"rank", "root_cause", "score", "for", "against", "missing", "next_step"}
    assert top["rank"] == 1
    assert top["root_cause"]["slug"] == "cgroup-cpu-throttling"
    assert set(top["root_cause"]) == {"id", "slug", "title"}
    assert 0 < top["score"] <= 1
    assert {tuple(sorted(item)) for item in top["for"]} == {("id", "kind", "summary", "url")}
    assert {item["kind"] for item in top["for"]} == {"finding"}
    # No baseline, capture or profile was collected: the facts' findings alone.
    assert all(isinstance(text, str) for text in top["missing"])
    assert top["next_step"]
    assert [line["delta"] for line in top["explanation"]][0] > 0
    assert [item["rank"] for item in body["items"]] == list(range(1, len(body["items"]) + 1))
    assert body["compared"] == [] and body["difference_found"] is True


def test_no_difference_found_says_what_was_compared(demo_case, api_as):
    _, case = demo_case
    case.findings.all().delete()
    body = api_as(case.lead).get(hypotheses_url(case)).body
    assert body["items"] == [] or all(item["score"] <= body["low_score"] for item in body["items"])
    assert body["difference_found"] is False
    assert {item["kind"] for item in body["compared"]} >= {"facts", "baseline"}


def test_others_cases_are_404_and_strangers_401(personas):
    url = hypotheses_url(personas.investigation)
    assert ApiClient(personas.outsider).get(url).status_code == 404
    assert ApiClient().get(url).status_code == 401
    assert (
        ApiClient(personas.viewer).get("/api/investigations/999999/hypotheses").status_code == 404
    )


# --- the panel -----------------------------------------------------------------------------


def test_the_panel_shows_the_ranking_its_evidence_and_the_confirm_flow(personas):
    case = personas.investigation
    raise_findings(case, ("capture_tls_handshakes", ""))
    url = f"/investigations/{case.pk}/panels/likely_causes/"

    page = unescape(loaded_page(personas.client(personas.member), url))

    assert "Likely causes" in page
    assert "short-lived TLS connections" in page
    assert "capture_tls_handshakes differs" in page
    assert "How the score was made" in page
    # What would settle it: a CPU profile of both sides, one click away.
    assert "A CPU profile of both sides at the knee" in page
    assert 'name="kind" value="profile"' in page and "Collect it" in page
    assert f'action="/investigations/{case.pk}/root-causes/' in page or "cause-root_cause" in page
    entry = RootCause.objects.get(slug="short-lived-tls-connections")
    assert f'name="cause-root_cause" value="{entry.pk}"' in page
    finding = case.findings.get(rule="capture_tls_handshakes")
    assert f'name="cause-evidence" value="finding:{finding.pk}"' in page
    # A viewer reads it, but gets no buttons.
    viewer = loaded_page(personas.client(personas.viewer), url)
    assert "Collect it" not in viewer and "cause-root_cause" not in viewer


def test_confirming_a_hypothesis_makes_it_the_cases_root_cause(personas):
    case = personas.investigation
    raise_findings(case, ("clocksource", ""))
    entry = RootCause.objects.get(slug="slow-clocksource")
    finding = case.findings.get(rule="clocksource")
    client = personas.client(personas.member)

    response = client.post(
        f"/investigations/{case.pk}/root-causes/",
        {"cause-root_cause": entry.pk, "cause-evidence": f"finding:{finding.pk}"},
    )

    assert response.status_code == 302, response.content.decode()[:2000]
    confirmed = case.case_root_causes.get()
    assert confirmed.root_cause == entry
    assert confirmed.evidence == [{"kind": "finding", "id": finding.pk}]


def test_the_panel_is_empty_without_evidence_and_in_chinese(personas):
    client = personas.client(personas.lead)
    url = f"/investigations/{personas.investigation.pk}/panels/likely_causes/"
    assert "No evidence yet." in loaded_page(client, url)
    raise_findings(personas.investigation, ("cpu_governor", ""))
    page = loaded_page(client, url, HTTP_ACCEPT_LANGUAGE="zh-hans")
    assert "可能的原因" in page and "得分是怎么算出来的" in page


def test_the_panel_says_no_difference_found_with_what_was_compared(demo_case):
    client, case = demo_case
    case.findings.all().delete()
    page = loaded_page(client, f"/investigations/{case.pk}/panels/likely_causes/")
    assert "No difference found." in page
    assert "Host facts of 1 host pair" in page


# --- signals on an entry -------------------------------------------------------------------

SIGNALS = [{"source": "finding", "rule": "cpu_count", "weight": 0.5, "direction": "for"}]


def _form_data(client, url: str) -> dict:
    form = client.get(url).context["form"]
    return {name: form[name].value() or "" for name in form.fields}


def test_a_lead_gives_the_teams_entry_signals_and_the_page_shows_them(personas):
    entry = team_entry(personas)
    client = personas.client(personas.lead)
    url = f"/knowledge/{entry['id']}/edit/"
    data = _form_data(client, url) | {"signals": json.dumps(SIGNALS)}

    assert client.post(url, data).status_code == 302

    saved = RootCause.objects.get(pk=entry["id"])
    assert saved.signals == SIGNALS
    assert saved.revisions.get().current == {"signals": SIGNALS}
    page = personas.client(personas.viewer).get(f"/knowledge/{entry['id']}/").content.decode()
    assert 'id="signals"' in page and "Finding cpu_count" in page
    # The form shows them again, one a line.
    assert '"rule": "cpu_count"' in client.get(url).content.decode().replace("&quot;", '"')


def test_the_teams_signals_rank_its_entry(personas):
    entry = team_entry(personas)
    RootCause.objects.filter(pk=entry["id"]).update(
        signals=[{"source": "finding", "rule": "nic_queues", "weight": 0.9, "direction": "for"}]
    )
    raise_findings(personas.investigation, ("nic_queues", ""))
    found = case_hypotheses(investigation=personas.investigation)
    assert found["hypotheses"][0].entry.id == entry["id"]


@pytest.mark.parametrize(
    "text, error",
    [
        ("[{", "Not valid JSON (line 1, column 3)"),
        ('[{"source": "finding", "weight": 0.5}]', "Signal 1: rule is required"),
        ('[{"source": "finding", "rule": "x", "weight": 7}]', "weight must be a number"),
    ],
)
def test_bad_signals_are_refused_beside_the_field_and_the_text_is_kept(personas, text, error):
    entry = team_entry(personas)
    client = personas.client(personas.lead)
    url = f"/knowledge/{entry['id']}/edit/"
    data = _form_data(client, url) | {"signals": text}

    response = client.post(url, data)

    assert response.status_code == 400
    assert response.context["form"].errors["signals"]
    assert error in unescape(response.content.decode())
    assert escape(text) in response.content.decode()
    assert RootCause.objects.get(pk=entry["id"]).signals == []


def test_a_member_who_is_not_a_lead_cannot_edit_signals(personas):
    entry = team_entry(personas)
    url = f"/knowledge/{entry['id']}/edit/"
    assert personas.client(personas.member).post(url, {"signals": "[]"}).status_code == 403
    assert personas.client(personas.outsider).post(url, {"signals": "[]"}).status_code == 404


def test_shipped_signals_are_edited_by_operators_only(personas):
    shipped = RootCause.objects.get(slug="slow-clocksource")
    assert shipped.signals  # shipped with the entry
    url = f"/knowledge/{shipped.pk}/edit/"
    assert personas.client(personas.lead).post(url, {"signals": "[]"}).status_code == 403

    ops = operator()
    client = personas.client(ops)
    data = _form_data(client, url) | {"signals": json.dumps(SIGNALS)}
    assert client.post(url, data).status_code == 302
    assert RootCause.objects.get(pk=shipped.pk).signals == SIGNALS


def test_the_api_reads_and_writes_an_entrys_signals(personas):
    entry = team_entry(personas, signals=SIGNALS)
    assert entry["signals"] == SIGNALS
    api = ApiClient(personas.lead)
    bad = api.patch(f"/api/root-causes/{entry['id']}", {"signals": [{"source": "smoke"}]})
    assert bad.status_code == 400, bad.body
    assert "Signal 1: source must be one of" in json.dumps(bad.body)
    assert (
        ApiClient(personas.member)
        .patch(f"/api/root-causes/{entry['id']}", {"signals": []})
        .status_code
        == 403
    )
    changed = api.patch(f"/api/root-causes/{entry['id']}", {"signals": []})
    assert changed.status_code == 200 and changed.body["signals"] == []


def test_the_collection_that_would_settle_it_starts_in_one_click(personas):
    """The panel's button posts the kind's start form with its defaults: the CPU profile of
    both sides' service hosts is requested (never run here: no worker claims it)."""
    from tests.investigations.test_profiles import service_hosts

    case = personas.investigation
    service_hosts(personas)
    raise_findings(case, ("capture_tls_handshakes", ""))
    client = personas.client(personas.member)
    page = client.get(f"/investigations/{case.pk}/panels/likely_causes/").content.decode()
    [form] = [
        found
        for found in re.finditer(
            r'<form method="post" action="([^"]+)" class="inline">(.*?)</form>', page, re.S
        )
        if 'name="kind" value="profile"' in found[2]
    ]
    data = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form[2]))

    response = client.post(unescape(form[1]), data)

    assert response.status_code == 302, response.content.decode()[:3000]
    collection = case.collections.get()
    assert collection.kind == "profile"
    assert collection.targets.count() == 2
