"""A case's root causes: the findings that point to knowledge-base entries, confirming one
with its evidence (page and API), closing that asks for it, and the checklist's last steps."""

import re
from html import unescape
from pathlib import Path

import pytest
from django.utils import translation

from investigations.analysis.rules.base import Verdict
from investigations.choices import FindingSeverity, Status
from investigations.models import (
    CaseRootCause,
    ChecklistItem,
    Finding,
    Investigation,
    Postmortem,
    RootCause,
    TimelineEvent,
)
from investigations.services.findings import PairVerdicts, findings_record
from investigations.services.investigations import investigation_create
from tests.conftest import ApiClient, loaded_page

# The shipped entries, put back if a transactional test of this process emptied them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shipped_knowledge")]
ANALYSIS = Path(__file__).resolve().parents[2] / "investigations" / "analysis"
HOSTILE = '<script>alert("x")</script> {{ 7*7 }} "; DROP TABLE'


def entry(slug: str) -> RootCause:
    return RootCause.objects.get(slug=slug)


def governor_finding(personas, status: str = "open") -> Finding:
    from collectors.phrase import Phrase

    findings_record(
        investigation=personas.investigation,
        pairs=[
            PairVerdicts(
                "facts:1:2",
                None,
                None,
                [
                    Verdict(
                        rule="cpu_governor",
                        root_cause="cpu-governor-powersave",
                        severity=FindingSeverity.HIGH,
                        title=Phrase("CPU frequency governor is 'powersave' on side B"),
                        explanation=Phrase("It lowers the clock."),
                        recommendation=Phrase("Set performance."),
                        side_a="performance",
                        side_b="powersave",
                    )
                ],
            )
        ],
    )
    finding = Finding.objects.get(investigation=personas.investigation, rule="cpu_governor")
    if status != "open":
        Finding.objects.filter(pk=finding.pk).update(status=status)
        finding.refresh_from_db()
    return finding


def investigation_path(personas) -> str:
    return f"/api/investigations/{personas.investigation.pk}"


def step(personas, key: str) -> ChecklistItem:
    return ChecklistItem.objects.get(investigation=personas.investigation, key=key)


# --- every rule names an entry that ships ------------------------------------------------------


def test_every_root_cause_a_rule_names_is_in_the_knowledge_base():
    named = set()
    for source in ANALYSIS.rglob("*.py"):
        named |= set(re.findall(r'root_cause="([a-z0-9-]+)"', source.read_text()))
        # profile rules list theirs positionally after the rule name
        named |= set(re.findall(r'"profile_[a-z_]+",\n\s+"([a-z0-9-]+)",', source.read_text()))
    assert len(named) >= 15
    assert named <= set(RootCause.objects.values_list("slug", flat=True)), named - set(
        RootCause.objects.values_list("slug", flat=True)
    )


def test_a_finding_points_to_its_entry_and_the_api_says_which(personas):
    finding = governor_finding(personas)

    assert finding.root_cause == entry("cpu-governor-powersave")
    listed = ApiClient(personas.viewer).get(f"{investigation_path(personas)}/findings").body
    (item,) = [f for f in (listed["items"] if isinstance(listed, dict) else listed)]
    assert item["root_cause"] == {
        "id": finding.root_cause_id,
        "title": finding.root_cause.title,
        "title_zh": finding.root_cause.title_zh,
    }


# --- confirming through the API ------------------------------------------------------------------


def test_patch_names_the_root_cause_and_it_lands_on_the_timeline_and_the_checklist(personas):
    governor = entry("cpu-governor-powersave")

    answer = ApiClient(personas.member).patch(
        investigation_path(personas), {"root_cause": governor.pk}
    )

    assert answer.status_code == 200, answer.body
    (cause,) = answer.body["root_causes"]
    assert cause["id"] == governor.pk and cause["title"] == governor.title
    assert cause["confirmed_by"] == personas.member.username
    event = TimelineEvent.objects.filter(
        investigation=personas.investigation, kind="root_cause"
    ).get()
    assert governor.title in event.summary
    assert step(personas, "root_cause").status == "done"


def test_patch_sets_several_and_an_empty_list_withdraws_them(personas):
    api = ApiClient(personas.member)
    ids = [entry("too-many-vcpus").pk, entry("short-lived-tls-connections").pk]

    several = api.patch(investigation_path(personas), {"root_causes": ids})
    assert sorted(c["id"] for c in several.body["root_causes"]) == sorted(ids)

    none = api.patch(investigation_path(personas), {"root_causes": []})
    assert none.body["root_causes"] == []
    assert not CaseRootCause.objects.exists()
    assert step(personas, "root_cause").status != "done"


@pytest.mark.parametrize(
    "body, field",
    [
        ({"root_cause": 999_999}, "root_causes"),
        ({"root_causes": [1, 999_999]}, "root_causes"),
        ({"root_causes": "cpu"}, "root_causes"),
    ],
)
def test_unknown_root_causes_are_refused_with_the_field_named(personas, body, field):
    answer = ApiClient(personas.member).patch(investigation_path(personas), body)

    assert answer.status_code in (400, 422), answer.body
    assert field in {e["field"] for e in answer.body["errors"]}
    assert not CaseRootCause.objects.exists()


def test_viewers_may_not_and_outsiders_see_nothing(personas):
    body = {"root_cause": entry("old-kernel").pk}

    assert ApiClient(personas.viewer).patch(investigation_path(personas), body).status_code == 403
    assert ApiClient(personas.outsider).patch(investigation_path(personas), body).status_code == 404
    for name in ("case_root_cause_new",):
        url = f"/investigations/{personas.investigation.pk}/root-causes/"
        assert personas.client(personas.outsider).post(url, {}).status_code == 404, name
        assert personas.client(personas.viewer).post(url, {}).status_code == 403, name
    propose = (
        f"/investigations/{personas.investigation.pk}/root-causes/{body['root_cause']}/propose/"
    )
    assert personas.client(personas.outsider).post(propose).status_code == 404
    assert not CaseRootCause.objects.exists()


def test_evidence_must_be_of_the_same_case(personas):
    from investigations.services.knowledge import case_root_cause_confirm

    other = investigation_create(team=personas.team, user=personas.lead, title="Another case")
    foreign = TimelineEvent.objects.filter(investigation=other).first()

    with pytest.raises(Exception) as refused:
        case_root_cause_confirm(
            investigation=personas.investigation,
            user=personas.member,
            root_cause=entry("old-kernel"),
            evidence=[{"kind": "event", "id": foreign.pk}],
        )
    assert "evidence" in refused.value.message_dict


# --- closing asks for it --------------------------------------------------------------------------


def test_closing_asks_for_the_root_cause_or_why_there_is_none(personas):
    lead = ApiClient(personas.lead)

    refused = lead.patch(investigation_path(personas), {"status": "closed"})
    assert refused.status_code == 400
    assert [e["field"] for e in refused.body["errors"]] == ["root_cause"]
    assert Investigation.objects.get(pk=personas.investigation.pk).status == Status.OPEN

    closed = lead.patch(
        investigation_path(personas),
        {"status": "closed", "close_reason": "The other cloud was retired; no need."},
    )
    assert closed.status_code == 200, closed.body
    assert closed.body["status"] == "closed"
    assert closed.body["close_reason"] == "The other cloud was retired; no need."


def test_a_case_with_its_root_cause_closes_in_one_call(personas):
    answer = ApiClient(personas.lead).patch(
        investigation_path(personas),
        {"root_cause": entry("cpu-governor-powersave").pk, "status": "closed"},
    )

    assert answer.status_code == 200, answer.body
    assert answer.body["status"] == "closed" and answer.body["close_reason"] == ""


def test_the_page_closes_without_a_root_cause_only_with_a_reason(personas):
    client = personas.client(personas.lead)
    url = f"/investigations/{personas.investigation.pk}/status/"

    page = loaded_page(client, f"/investigations/{personas.investigation.pk}/")
    assert "Close without a root cause" in page
    client.post(url, {"status": "closed"})
    assert Investigation.objects.get(pk=personas.investigation.pk).status == Status.OPEN
    client.post(url, {"status": "closed", "reason": "Duplicate of the DNS case."})
    assert Investigation.objects.get(pk=personas.investigation.pk).close_reason == (
        "Duplicate of the DNS case."
    )


# --- the panel ---------------------------------------------------------------------------------


def test_the_panel_confirms_an_entry_with_its_evidence_and_fix(personas):
    finding = governor_finding(personas, status="confirmed")
    governor = entry("cpu-governor-powersave")
    client = personas.client(personas.member)
    page = unescape(loaded_page(client, f"/investigations/{personas.investigation.pk}/"))
    assert "No root cause confirmed yet" in page
    assert "What the findings point to" in page and "Name it the root cause" in page

    answer = client.post(
        f"/investigations/{personas.investigation.pk}/root-causes/",
        {
            "cause-root_cause": governor.pk,
            "cause-evidence": [f"finding:{finding.pk}"],
            "cause-fix": "cpupower frequency-set -g performance on every node",
        },
    )

    assert answer.status_code == 302
    found = CaseRootCause.objects.get()
    assert found.evidence == [{"kind": "finding", "id": finding.pk}]
    page = unescape(loaded_page(client, f"/investigations/{personas.investigation.pk}/"))
    assert "cpupower frequency-set -g performance on every node" in page
    assert f"#finding-{finding.pk}" in page
    assert "What the findings point to" not in page


def test_a_confirmed_finding_proposes_its_entry(personas):
    finding = governor_finding(personas, status="confirmed")

    personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/root-causes/{finding.root_cause_id}/propose/"
    )

    found = CaseRootCause.objects.get()
    assert found.root_cause_id == finding.root_cause_id
    assert found.evidence == [{"kind": "finding", "id": finding.pk}]


def test_a_new_entry_is_written_from_the_case_and_kept_for_the_next(personas):
    client = personas.client(personas.lead)
    form = {
        "cause-new_title": HOSTILE,
        "cause-new_title_zh": "连接池太小",
        "cause-new_category": "application",
        "cause-fix": HOSTILE,
    }

    refused = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/root-causes/", form
    )
    answer = client.post(f"/investigations/{personas.investigation.pk}/root-causes/", form)

    # A responder confirms entries of the knowledge base; the team's leads write new ones.
    assert refused.status_code == 400
    assert "Only the leads of this team may write a new root cause" in unescape(
        refused.content.decode()
    )
    assert answer.status_code == 302
    written = RootCause.objects.get(title=HOSTILE)
    assert written.team == personas.team and written.created_by == personas.lead
    page = loaded_page(client, f"/investigations/{personas.investigation.pk}/")
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page


def test_the_form_says_what_is_missing_and_keeps_what_was_typed(personas):
    answer = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/root-causes/",
        {"cause-fix": "kept"},
    )

    assert answer.status_code == 400
    page = unescape(answer.content.decode())
    assert "Choose a root cause from the knowledge base, or write a new one." in page
    assert "kept" in page
    assert not CaseRootCause.objects.exists()


def test_withdrawing_takes_it_off_the_case_not_the_knowledge_base(personas):
    governor = entry("cpu-governor-powersave")
    ApiClient(personas.member).patch(investigation_path(personas), {"root_cause": governor.pk})

    personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/root-causes/{governor.pk}/withdraw/"
    )

    assert not CaseRootCause.objects.exists() and RootCause.objects.filter(pk=governor.pk).exists()
    assert TimelineEvent.objects.filter(
        investigation=personas.investigation,
        kind="root_cause",
        summary__startswith="Root cause withdrawn",
    ).exists()


def test_the_panel_and_its_entries_read_in_chinese(personas):
    governor = entry("cpu-governor-powersave")
    ApiClient(personas.member).patch(investigation_path(personas), {"root_cause": governor.pk})

    page = loaded_page(
        personas.client(personas.viewer),
        f"/investigations/{personas.investigation.pk}/",
        HTTP_ACCEPT_LANGUAGE="zh-CN",
    )

    try:
        assert governor.title_zh in page
    finally:
        # The request left Chinese active in this thread; later modules read in English.
        translation.deactivate()


# --- the write-up step -------------------------------------------------------------------------


def test_the_write_up_step_completes_from_the_postmortem(personas):
    from investigations.services.checklist import checklist_refresh

    Postmortem.objects.create(
        investigation=personas.investigation, summary="The governor.", lessons="Alert on it."
    )
    checklist_refresh(investigation=personas.investigation, keys=["write_up"])

    assert step(personas, "write_up").status == "done"
