"""The postmortem: what it gathers from the case, what people write in it, its Markdown
export and its action items, in the API and on the pages."""

import re
from datetime import date, timedelta
from pathlib import Path

import pytest
from django.utils import timezone

from investigations.analysis.postmortem_markdown import block, inline, postmortem_markdown
from investigations.choices import EventKind, EvidenceKind, ItemStatus
from investigations.models import ActionItem, Investigation, Postmortem, TimelineEvent
from investigations.selectors import checklist_item_by_key
from investigations.selectors.postmortem import postmortem_of
from investigations.services.checklist import checklist_item_update
from investigations.services.investigations import investigation_create
from investigations.services.knowledge import case_root_cause_confirm, root_cause_create
from investigations.services.ladder_imports import ladder_import
from investigations.services.postmortem import postmortem_update
from investigations.services.timeline import timeline_entry_add
from tests.conftest import HOSTILE_STRINGS, ApiClient, loaded_page

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parent.parent.parent
RESULTS = Path(__file__).resolve().parent.parent / "collectors" / "data" / "loadresults"
# Markdown that must come out as text: a heading, a script link, HTML, a table, code, a
# list, a quote, a setext underline, an indented code block, an entity and an image.
HOSTILE_MARKDOWN = (
    "# heading\n"
    "[x](javascript:alert(1)) <script>alert(1)</script>\n"
    "| a | b |\n"
    "|---|---|\n"
    "`tick` ```fence```\n"
    "1. one\n"
    "- item\n"
    "> quote\n"
    "===\n"
    "        indented code\n"
    "&lt;b&gt; ![img](http://example.com/x.png) *em* _em_ ~~gone~~ \\"
)


def api(path: str, personas, user=None):
    return ApiClient(
        user or personas.member
    ), f"/api/investigations/{personas.investigation.pk}{path}"


def note(personas, summary: str, *, user=None, ago: timedelta, kind=EventKind.NOTE, action=""):
    return timeline_entry_add(
        investigation=personas.investigation,
        user=user or personas.member,
        kind=kind,
        action=action,
        summary=summary,
        occurred_at=timezone.now() - ago,
    )


def import_ladder(personas):
    return ladder_import(
        investigation=personas.investigation,
        user=personas.member,
        side_key="b",
        format="locust-csv",
        files=[("locust.csv", (RESULTS / "locust_stats_history.csv").read_bytes())],
    )


# --- what it gathers ----------------------------------------------------------------------


def test_it_gives_the_case_times_and_the_durations_between_them(personas):
    started = timezone.now() - timedelta(hours=5)
    Investigation.objects.filter(pk=personas.investigation.pk).update(
        started_at=started,
        detected_at=started + timedelta(minutes=15),
        mitigated_at=started + timedelta(hours=1, minutes=5),
        resolved_at=started + timedelta(hours=4),
        symptom_metric="p99 latency",
        symptom_unit="ms",
        symptom_load="500 users",
        symptom_value_a=1445,
        symptom_value_b=557,
    )
    client, path = api("/postmortem", personas)

    body = client.get(path).body

    assert body["times"]["started_at"].startswith(started.strftime("%Y-%m-%dT%H:%M"))
    assert body["durations"] == {"to_detect": 900.0, "to_mitigate": 3900.0, "to_resolve": 14400.0}
    assert body["symptom"]["metric"] == "p99 latency"
    assert body["symptom"]["ratio"] == pytest.approx(1445 / 557)
    assert body["sides"] == {"a": "new cloud", "b": "old cloud"}
    markdown = client.get(path + ".md").content.decode()
    assert "Time to detect: 15 min" in markdown
    assert "Time to mitigate: 1 h 5 min" in markdown
    assert "Time to resolve: 4 h 0 min" in markdown
    assert "A is 2.59× worse than B" in markdown
    page = personas.client(personas.viewer).get(
        f"/investigations/{personas.investigation.pk}/postmortem/"
    )
    assert "1 h 5 min" in page.content.decode()


def test_until_entries_are_chosen_it_tells_notes_actions_status_and_root_causes(personas):
    action = note(
        personas, "Restarted the pool", ago=timedelta(hours=2), kind="action", action="restart"
    )
    client, path = api("/postmortem", personas)

    body = client.get(path).body

    assert body["events_chosen"] is False and body["events"] == []
    kinds = {entry["kind"] for entry in body["timeline"]}
    assert kinds <= {"note", "action", "status", "root_cause"}
    assert action.pk in [entry["id"] for entry in body["timeline"]]
    # The checklist's bookkeeping is not the story.
    checklist = TimelineEvent.objects.filter(
        investigation=personas.investigation, kind=EventKind.CHECKLIST
    )
    assert not {e.pk for e in checklist} & {entry["id"] for entry in body["timeline"]}
    page = personas.client(personas.viewer).get(
        f"/investigations/{personas.investigation.pk}/postmortem/"
    )
    assert "told by default" in page.content.decode()


def test_the_default_entries_are_not_announced_as_none(personas):
    """Issue 24 bug 9: "No entries chosen yet" stood above the entries it then listed."""
    note(personas, "Paged the on-call", ago=timedelta(hours=3))
    note(personas, "Restarted the pool", ago=timedelta(hours=2))
    client, path = api("/postmortem", personas)
    browser = personas.client(personas.viewer)

    page = browser.get(f"/investigations/{personas.investigation.pk}/postmortem/").content.decode()
    markdown = client.get(path + ".md").content.decode()

    listed = page.index("Restarted the pool")
    told = page.index("entries are told by default")
    assert "No entries chosen" not in page and listed < told
    assert "No entries chosen" not in markdown and "Restarted the pool" in markdown


def test_chosen_entries_are_told_in_time_order_with_their_authors(personas):
    later = note(personas, "Found the governor on powersave", ago=timedelta(minutes=30))
    earlier = note(personas, "Paged the on-call", user=personas.lead, ago=timedelta(hours=3))
    note(personas, "Not part of the story", ago=timedelta(hours=1))
    client, path = api("/postmortem", personas)

    body = client.patch(path, {"events": [later.pk, earlier.pk]}).body

    assert body["events"] == [earlier.pk, later.pk]
    assert body["events_chosen"] is True
    assert [(e["summary"], e["author"]) for e in body["timeline"]] == [
        ("Paged the on-call", "lena"),
        ("Found the governor on powersave", "max"),
    ]
    markdown = client.get(path + ".md").content.decode()
    assert markdown.index("Paged the on-call") < markdown.index("Found the governor")
    assert "Not part of the story" not in markdown
    # A deleted entry leaves the write-up too.
    TimelineEvent.objects.filter(pk=earlier.pk).update(deleted_at=timezone.now())
    assert [e["id"] for e in client.get(path).body["timeline"]] == [later.pk]


def test_automatic_entries_are_told_in_the_readers_language(personas):
    client, path = api("/postmortem", personas)

    english = client.get(path).body["timeline"]
    chinese = client.get(path, headers={**client.headers, "Accept-Language": "zh-CN"}).body

    assert english[0]["summary"] == f"Investigation opened: {personas.investigation.title}"
    assert chinese["timeline"][0]["summary"] == f"发起调查：{personas.investigation.title}"


def test_it_lists_the_methods_steps_with_their_status_evidence_and_notes(personas):
    item = checklist_item_by_key(investigation=personas.investigation, key="path")
    checklist_item_update(
        item=item, user=personas.member, status=ItemStatus.IN_PROGRESS, notes="SLB drawn, NAT next"
    )
    client, path = api("/postmortem", personas)

    method = client.get(path).body["method"]

    assert [step["key"] for step in method][:3] == ["symptom", "path", "pairs"]
    assert len(method) == 11
    drawn = next(step for step in method if step["key"] == "path")
    assert drawn["title"] == "Draw the traffic path"
    assert drawn["status"] == "in_progress"
    assert drawn["notes"] == "SLB drawn, NAT next"
    chinese = client.get(path, headers={**client.headers, "Accept-Language": "zh-CN"}).body
    assert chinese["method"][1]["title"] == "画出流量路径"


def test_root_causes_come_with_their_evidence_named_and_linked(personas):
    ladder = import_ladder(personas)
    seen = note(personas, "perf shows cpufreq in the hot path", ago=timedelta(minutes=5))
    cause = root_cause_create(
        user=personas.lead, team=personas.team, title="CPU governor on powersave", category="cpu"
    )
    case_root_cause_confirm(
        investigation=personas.investigation,
        user=personas.lead,
        root_cause=cause,
        evidence=[
            {"kind": EvidenceKind.LADDER, "id": ladder.pk},
            {"kind": EvidenceKind.EVENT, "id": seen.pk},
        ],
        fix="cpupower frequency-set -g performance",
    )
    client, path = api("/postmortem", personas)

    body = client.get(path).body

    [found] = body["root_causes"]
    assert found["title"] == "CPU governor on powersave"
    assert found["fix"] == "cpupower frequency-set -g performance"
    assert found["confirmed_by"] == "lena"
    assert [(e["kind"], e["label"], e["url"]) for e in found["evidence"]] == [
        ("ladder", f"Ladder #{ladder.pk}", f"/ladders/{ladder.pk}/"),
        (
            "event",
            "perf shows cpufreq in the hot path",
            f"/investigations/{personas.investigation.pk}/#event-{seen.pk}",
        ),
    ]
    # The ladder is there for the verification, with its verdicts.
    assert [entry["id"] for entry in body["ladders"]] == [ladder.pk]
    assert body["ladders"][0]["steps"] == [1, 2, 3]
    # The default timeline tells the root cause.
    assert "Root cause confirmed: CPU governor on powersave" in [
        e["summary"] for e in body["timeline"]
    ]
    markdown = client.get(path + ".md", HTTP_HOST="127.0.0.1:8811").content.decode()
    assert f"[Ladder #{ladder.pk}](<http://127.0.0.1:8811/ladders/{ladder.pk}/>)" in markdown
    assert "### [CPU governor on powersave](<http://127.0.0.1:8811/knowledge/" in markdown


def test_the_markdown_links_go_where_the_app_is_reached(personas, settings):
    """Issue 24 bug 4: the links pointed to port 8000 while the app ran on 8811."""
    ladder = import_ladder(personas)
    postmortem_update(investigation=personas.investigation, user=personas.member, summary="x")
    browser = personas.client(personas.viewer)
    page = f"/investigations/{personas.investigation.pk}/postmortem.md"
    ladder_path = f"/ladders/{ladder.pk}/"

    settings.BASE_URL = ""
    by_request = browser.get(page, HTTP_HOST="127.0.0.1:8811").content.decode()
    without_request = postmortem_markdown(postmortem_of(personas.investigation))
    settings.BASE_URL = "https://perfcase.example.org"
    configured = browser.get(page, HTTP_HOST="127.0.0.1:8811").content.decode()

    assert f"(<http://127.0.0.1:8811{ladder_path}>)" in by_request
    assert ":8000" not in by_request and "PERFCASE_BASE_URL" not in by_request
    assert f"(<{ladder_path}>)" in without_request
    assert "PERFCASE_BASE_URL is not set" in without_request
    assert f"(<https://perfcase.example.org{ladder_path}>)" in configured


def test_evidence_deleted_since_is_still_named(personas):
    seen = note(personas, "will be deleted", ago=timedelta(minutes=5))
    cause = root_cause_create(
        user=personas.lead, team=personas.team, title="Swappiness", category="memory"
    )
    case_root_cause_confirm(
        investigation=personas.investigation,
        user=personas.lead,
        root_cause=cause,
        evidence=[{"kind": "event", "id": seen.pk}],
    )
    TimelineEvent.objects.filter(pk=seen.pk).update(deleted_at=timezone.now())
    client, path = api("/postmortem", personas)

    [evidence] = client.get(path).body["root_causes"][0]["evidence"]

    assert evidence["url"] == ""
    assert "no longer there" in evidence["label"]


# --- writing it ---------------------------------------------------------------------------


def test_a_responder_writes_it_and_each_save_lands_on_the_timeline_once(personas):
    client, path = api("/postmortem", personas)

    response = client.patch(path, {"summary": "Powersave governor.", "impact": "Checkout p99 x2"})

    assert response.status_code == 200, response.body
    assert response.body["summary"] == "Powersave governor."
    assert response.body["updated_by"] == "max"
    logged = TimelineEvent.objects.filter(
        investigation=personas.investigation, kind=EventKind.POSTMORTEM
    )
    assert [e.summary for e in logged] == ["Edited the postmortem: summary, impact"]
    # Saving the same text again changes nothing, and says nothing.
    client.patch(path, {"summary": "Powersave governor."})
    assert logged.count() == 1
    # Kept with the phrase it was made from, for each reader's language.
    assert logged.get().phrases["summary"][0] == "Edited the postmortem: %(fields)s"


def test_the_write_up_step_completes_when_summary_and_lessons_are_written(personas):
    client, path = api("/postmortem", personas)
    step = lambda: checklist_item_by_key(investigation=personas.investigation, key="write_up")  # noqa: E731

    client.patch(path, {"summary": "The governor."})
    assert step().status == ItemStatus.TODO
    client.patch(path, {"lessons": "Alert on the CPU governor."})

    assert step().status == ItemStatus.DONE and step().auto
    assert client.get(path).body["written"] is True
    # And reopens when the summary goes.
    client.patch(path, {"summary": ""})
    assert step().status == ItemStatus.TODO


def test_a_patch_is_searchable_afterwards(personas):
    from investigations.selectors.search import search_scores

    client, path = api("/postmortem", personas)
    client.patch(path, {"lessons": "irqbalance pinned every interrupt to cpu0"})

    scores = search_scores(
        kind="investigation", query="irqbalance", among=[personas.investigation.pk]
    )

    assert [pk for pk, _score in scores] == [personas.investigation.pk]


@pytest.mark.parametrize(
    "body, field",
    [
        ({"events": [10**12]}, "events"),
        ({"summary": "x" * 20_001}, "summary"),
        ({"lessons": "x" * 20_001}, "lessons"),
        ({"summary": None}, "summary"),
        ({"verification": "a\x00b"}, "verification"),
    ],
    ids=["unknown-event", "summary-too-long", "lessons-too-long", "null", "nul"],
)
def test_a_bad_patch_is_refused_naming_the_field(personas, body, field):
    client, path = api("/postmortem", personas)

    response = client.patch(path, body)

    assert response.status_code in (400, 422), response.body
    assert field in [error["field"] for error in response.body["errors"]], response.body
    assert (
        not Postmortem.objects.filter(investigation=personas.investigation)
        .exclude(summary="")
        .exists()
    )


def test_entries_of_another_investigation_or_deleted_ones_are_refused(personas):
    other = investigation_create(team=personas.team, user=personas.lead, title="Another case")
    theirs = TimelineEvent.objects.filter(investigation=other).first()
    gone = note(personas, "deleted", ago=timedelta(minutes=1))
    TimelineEvent.objects.filter(pk=gone.pk).update(deleted_at=timezone.now())
    client, path = api("/postmortem", personas)

    for pk in (theirs.pk, gone.pk):
        response = client.patch(path, {"events": [pk]})

        assert response.status_code == 400, response.body
        assert response.body["errors"] == [
            {"field": "events", "message": f"No timeline entry {pk} in this investigation."}
        ]


def test_the_service_refuses_fields_it_does_not_know(personas):
    from django.core.exceptions import ValidationError

    with pytest.raises(ValidationError) as refused:
        postmortem_update(investigation=personas.investigation, user=personas.member, title="x")

    assert "title" in refused.value.message_dict


# --- action items -------------------------------------------------------------------------


def test_action_items_are_added_changed_done_and_deleted(personas):
    client, path = api("/actions", personas)

    created = client.post(
        path,
        {
            "title": "Add an alert on the CPU governor",
            "owner": personas.lead.pk,
            "due": "2030-01-31",
        },
    )

    assert created.status_code == 201, created.body
    item = created.body
    assert item["owner"] == personas.lead.pk and item["owner_name"] == "lena"
    assert item["due"] == "2030-01-31" and item["done"] is False and item["done_at"] is None
    done = client.patch(f"{path}/{item['id']}", {"done": True}).body
    assert done["done"] is True and done["done_at"] is not None
    # The same change with the id in the body (PATCH …/actions).
    reopened = client.patch(path, {"id": item["id"], "done": False, "owner": None, "due": None})
    assert reopened.status_code == 200, reopened.body
    assert reopened.body["done_at"] is None
    assert reopened.body["owner"] is None and reopened.body["due"] is None
    assert client.get(path).body == {"items": [reopened.body]}
    summaries = list(
        TimelineEvent.objects.filter(
            investigation=personas.investigation, kind=EventKind.POSTMORTEM
        ).values_list("summary", flat=True)
    )
    assert summaries == [
        "Action item added: Add an alert on the CPU governor",
        "Action item done: Add an alert on the CPU governor",
        "Action item changed: Add an alert on the CPU governor",
    ]
    assert client.delete(f"{path}/{item['id']}").status_code == 204
    assert client.get(path).body == {"items": []}
    assert ActionItem.objects.count() == 0


@pytest.mark.parametrize(
    "body, field",
    [
        ({"title": ""}, "title"),
        ({"title": "   "}, "title"),
        ({"title": "x" * 5_001}, "title"),
        ({"title": "ok", "due": "next week"}, "due"),
        ({"title": "ok", "owner": "lena"}, "owner"),
        ({}, "title"),
    ],
    ids=["empty", "blank", "too-long", "bad-due", "owner-name", "missing"],
)
def test_a_bad_action_item_is_refused_naming_the_field(personas, body, field):
    client, path = api("/actions", personas)

    response = client.post(path, body)

    assert response.status_code in (400, 422), response.body
    assert field in [error["field"] for error in response.body["errors"]], response.body
    assert ActionItem.objects.count() == 0


def test_an_owner_must_be_a_member_of_the_team(personas):
    client, path = api("/actions", personas)

    for owner in (personas.outsider.pk, 10**12):
        response = client.post(path, {"title": "Alert", "owner": owner})

        assert response.status_code == 400, response.body
        assert response.body["errors"][0]["field"] == "owner"


def test_action_items_of_another_investigation_are_not_found(personas):
    other = investigation_create(team=personas.team, user=personas.lead, title="Another case")
    client = ApiClient(personas.member)
    theirs = client.post(f"/api/investigations/{other.pk}/actions", {"title": "Theirs"}).body
    _, path = api("/actions", personas)

    assert client.patch(f"{path}/{theirs['id']}", {"done": True}).status_code == 404
    assert client.patch(path, {"id": theirs["id"], "done": True}).status_code == 404
    assert client.delete(f"{path}/{theirs['id']}").status_code == 404
    assert ActionItem.objects.get(pk=theirs["id"]).done is False


# --- access -------------------------------------------------------------------------------


def _endpoints(personas, action_id: int):
    base = f"/api/investigations/{personas.investigation.pk}"
    return {
        "reads": [f"{base}/postmortem", f"{base}/postmortem.md", f"{base}/actions"],
        "writes": [
            ("patch", f"{base}/postmortem", {"summary": "x"}),
            ("post", f"{base}/actions", {"title": "x"}),
            ("patch", f"{base}/actions/{action_id}", {"done": True}),
            ("patch", f"{base}/actions", {"id": action_id, "done": True}),
            ("delete", f"{base}/actions/{action_id}", None),
        ],
    }


def _pages(personas, action_id: int):
    base = f"/investigations/{personas.investigation.pk}"
    return {
        "reads": [f"{base}/postmortem/", f"{base}/postmortem/print/", f"{base}/postmortem.md"],
        "writes": [
            (f"{base}/postmortem/", {"section": "summary", "summary": "x"}),
            (f"{base}/postmortem/", {"section": "events"}),
            (f"{base}/postmortem/actions/", {"title": "x"}),
            (f"{base}/postmortem/actions/{action_id}/", {"done": "true"}),
            (f"{base}/postmortem/actions/{action_id}/delete/", {}),
        ],
    }


def _call(client: ApiClient, method: str, path: str, body=None):
    return client.delete(path) if method == "delete" else getattr(client, method)(path, body)


def test_outsiders_get_404_from_every_endpoint_and_page(personas):
    item = ActionItem.objects.create(investigation=personas.investigation, title="Alert")
    outsider = ApiClient(personas.outsider)
    endpoints = _endpoints(personas, item.pk)
    for path in endpoints["reads"]:
        assert outsider.get(path).status_code == 404, path
    for method, path, body in endpoints["writes"]:
        assert _call(outsider, method, path, body).status_code == 404, (method, path)
    browser = personas.client(personas.outsider)
    pages = _pages(personas, item.pk)
    for path in pages["reads"]:
        assert browser.get(path).status_code == 404, path
    for path, data in pages["writes"]:
        assert browser.post(path, data).status_code == 404, path
    panel = browser.get(f"/investigations/{personas.investigation.pk}/panels/postmortem/")
    assert panel.status_code == 404
    assert ActionItem.objects.get(pk=item.pk).done is False
    assert not Postmortem.objects.exists()


def test_viewers_read_but_get_403_on_every_write(personas):
    item = ActionItem.objects.create(investigation=personas.investigation, title="Alert")
    viewer = ApiClient(personas.viewer)
    endpoints = _endpoints(personas, item.pk)
    for path in endpoints["reads"]:
        assert viewer.get(path).status_code == 200, path
    for method, path, body in endpoints["writes"]:
        assert _call(viewer, method, path, body).status_code == 403, (method, path)
    browser = personas.client(personas.viewer)
    pages = _pages(personas, item.pk)
    for path in pages["reads"]:
        assert browser.get(path).status_code == 200, path
    for path, data in pages["writes"]:
        assert browser.post(path, data).status_code == 403, path
    assert ActionItem.objects.get(pk=item.pk).done is False
    assert not Postmortem.objects.exists()
    page = browser.get(f"/investigations/{personas.investigation.pk}/postmortem/").content.decode()
    assert "<textarea" not in page and "Add action item" not in page


def test_anonymous_callers_are_sent_to_sign_in(personas):
    base = f"/investigations/{personas.investigation.pk}"
    from django.test import Client

    for path in (f"{base}/postmortem/", f"{base}/postmortem/print/", f"{base}/postmortem.md"):
        response = Client().get(path)
        assert response.status_code == 302 and "/accounts/login/" in response["Location"]
    assert ApiClient().get(f"/api{base}/postmortem").status_code == 401


# --- the Markdown export ------------------------------------------------------------------


def test_the_markdown_is_a_download_named_after_the_case(personas):
    client, path = api("/postmortem.md", personas)

    response = client.get(path)

    assert response.status_code == 200
    assert response["Content-Type"] == "text/markdown; charset=utf-8"
    pk = personas.investigation.pk
    assert response["Content-Disposition"] == (
        f'attachment; filename="postmortem-{pk}-Checkout-p99-doubled-on-the-new-cloud.md"'
    )
    text = response.content.decode()
    assert text.startswith("# Checkout p99 doubled on the new cloud\n")
    for heading in ("Summary", "Impact", "Timeline", "Method", "Root causes", "Fix"):
        assert f"\n## {heading}\n" in text
    for heading in ("Verification", "Action items", "Lessons"):
        assert f"\n## {heading}\n" in text


def test_a_chinese_title_names_the_file_in_chinese(personas):
    case = investigation_create(team=personas.team, user=personas.lead, title='容器/性能 "差" 一倍')
    client = ApiClient(personas.member)

    response = client.get(f"/api/investigations/{case.pk}/postmortem.md")

    disposition = response["Content-Disposition"]
    assert disposition.startswith("attachment; filename*=utf-8''")
    assert f"postmortem-{case.pk}-%E5%AE%B9%E5%99%A8-%E6%80%A7%E8%83%BD" in disposition
    assert "/" not in disposition.split("''", 1)[1] and '"' not in disposition.split("''", 1)[1]


def _fill_every_text_field(personas, text: str):
    """The same text in every text field a postmortem shows."""
    investigation = personas.investigation
    Investigation.objects.filter(pk=investigation.pk).update(
        title=text[:200], symptom_metric=text[:200], symptom_load=text[:200], symptom_unit="ms|`"
    )
    investigation.sides.update(label=text[:200])
    events = [note(personas, text, ago=timedelta(minutes=9))]
    item = checklist_item_by_key(investigation=investigation, key="symptom")
    checklist_item_update(item=item, user=personas.member, notes=text)
    item = checklist_item_by_key(investigation=investigation, key="pairs")
    checklist_item_update(
        item=item, user=personas.member, status=ItemStatus.NOT_APPLICABLE, na_reason=text[:500]
    )
    cause = root_cause_create(
        user=personas.lead, team=personas.team, title=text[:200], category="cpu"
    )
    case_root_cause_confirm(
        investigation=investigation,
        user=personas.lead,
        root_cause=cause,
        evidence=[{"kind": "event", "id": events[0].pk}],
        fix=text,
    )
    client, path = api("/postmortem", personas)
    response = client.patch(
        path,
        {name: text for name in ("summary", "impact", "fix", "verification", "lessons")}
        | {"events": [e.pk for e in events]},
    )
    assert response.status_code == 200, response.body
    added = ApiClient(personas.member).post(
        f"/api/investigations/{investigation.pk}/actions",
        {"title": text, "owner": personas.member.pk},
    )
    assert added.status_code == 201, added.body
    return client, path


def test_people_text_cannot_make_markdown_of_its_own(personas):
    client, path = _fill_every_text_field(personas, HOSTILE_MARKDOWN)

    markdown = client.get(path + ".md").content.decode()
    (ROOT / "test-artifacts").mkdir(exist_ok=True)
    (ROOT / "test-artifacts" / "postmortem-hostile.md").write_text(markdown)

    lines = markdown.splitlines()
    # Headings: only ours, none of the text's.
    assert not [line for line in lines if re.match(r"\s*#+\s*heading", line)]
    assert "\\# heading" in markdown
    # No link, image, HTML or entity.
    assert "[x](javascript" not in markdown and "\\[x\\](javascript:alert(1))" in markdown
    assert "![img](" not in markdown
    assert "<script>" not in markdown and "\\<script\\>" in markdown
    assert not re.search(r"(?<!\\)&lt;", markdown)
    # No table but ours (the action items' header and separator start with "| Action" and "| ---").
    table_lines = [line for line in lines if line.lstrip().startswith("|")]
    assert all(re.match(r"\| (Action|---|\\# heading)", line) for line in table_lines), table_lines
    assert "\\| a \\| b \\|" in markdown
    # No code: no backtick unescaped, no indented block.
    assert not re.search(r"(?<!\\)`", markdown)
    assert not [line for line in lines if line.startswith("    ") and "indented" in line]
    # No list, quote, emphasis or setext heading of its own.
    assert not [line for line in lines if re.match(r"\s*(1\. one|- item|> quote|===)", line)]
    assert "1\\. one" in markdown and "\\- item" in markdown and "\\> quote" in markdown
    assert "\\=\\=\\=" in markdown or "\\===" in markdown
    assert "\\*em\\*" in markdown and "\\_em\\_" in markdown and "\\~\\~gone\\~\\~" in markdown
    # Every field's text arrived (its last words are in each copy).
    assert markdown.count("indented code") >= 9


@pytest.mark.parametrize(
    "text", HOSTILE_STRINGS, ids=["markup", "sql", "shell", "cjk", "emoji", "long"]
)
def test_hostile_strings_are_kept_and_shown_escaped(personas, text):
    client, path = _fill_every_text_field(personas, text)

    body = client.get(path).body
    assert body["summary"] == text and body["lessons"] == text
    assert body["actions"][0]["title"] == text
    markdown = client.get(path + ".md").content.decode()
    # No markup: every "<" is escaped, but for the destinations of our own links.
    assert not re.search(r"(?<!\\)<(?!http)", markdown)
    browser = personas.client(personas.viewer)
    for url in ("postmortem/", "postmortem/print/"):
        page = browser.get(f"/investigations/{personas.investigation.pk}/{url}").content.decode()
        assert "<script>alert" not in page and "<img src=x" not in page
    # Every copy arrives whole, escaped: title, summary … lessons, the entry, the action.
    assert markdown.count(inline(text)) >= 8


def test_escaping_keeps_ordinary_text_readable():
    assert inline("p99 went from 557 ms to 1445 ms on A") == "p99 went from 557 ms to 1445 ms on A"
    assert inline("容器性能不如虚拟机：TPS 差一倍") == "容器性能不如虚拟机：TPS 差一倍"
    assert block("first line\nsecond line\n\nnew paragraph") == (
        "first line  \nsecond line\n\nnew paragraph"
    )
    assert block("- a\n  - b", indent="  ") == "\\- a  \n  \\- b"


# --- the pages ----------------------------------------------------------------------------


def test_a_section_is_saved_in_place_with_htmx(personas):
    browser = personas.client(personas.member)
    url = f"/investigations/{personas.investigation.pk}/postmortem/"

    response = browser.post(
        url,
        {"section": "lessons", "lessons": "Alert on <the> governor"},
        headers={"HX-Request": "true"},
    )

    assert response.status_code == 200
    page = response.content.decode()
    assert page.lstrip().startswith('<div class="pm-written" id="pm-lessons">')
    assert "Alert on &lt;the&gt; governor" in page
    assert Postmortem.objects.get().lessons == "Alert on <the> governor"


def test_a_section_too_long_comes_back_with_its_error_and_the_text_typed(personas):
    browser = personas.client(personas.member)
    url = f"/investigations/{personas.investigation.pk}/postmortem/"
    typed = "y" * 20_001

    partial = browser.post(
        url, {"section": "impact", "impact": typed}, headers={"HX-Request": "true"}
    )
    whole = browser.post(url, {"section": "impact", "impact": typed})

    for response in (partial, whole):
        assert response.status_code == 400
        page = response.content.decode()
        assert "Keep it to 20,000 characters (this is 20,001)." in page
        assert typed in page
    assert not Postmortem.objects.exists()


def test_without_javascript_a_save_returns_to_the_section(personas):
    browser = personas.client(personas.member)
    url = f"/investigations/{personas.investigation.pk}/postmortem/"

    response = browser.post(url, {"section": "summary", "summary": "Done."})

    assert response.status_code == 302
    assert response["Location"] == f"{url}#pm-summary"


def test_the_picker_chooses_entries_and_none_goes_back_to_the_default(personas):
    chosen = note(personas, "The one that matters", ago=timedelta(minutes=20))
    browser = personas.client(personas.member)
    url = f"/investigations/{personas.investigation.pk}/postmortem/"

    picked = browser.post(
        url, {"section": "events", "events": [chosen.pk]}, headers={"HX-Request": "true"}
    )

    assert picked.status_code == 200
    assert Postmortem.objects.get().events == [chosen.pk]
    assert "told by default" not in picked.content.decode()
    refused = browser.post(
        url, {"section": "events", "events": ["12x"]}, headers={"HX-Request": "true"}
    )
    assert refused.status_code == 400
    assert "Give a list of timeline entry ids." in refused.content.decode()
    browser.post(url, {"section": "events"}, headers={"HX-Request": "true"})
    assert Postmortem.objects.get().events == []


def test_action_items_on_the_page(personas):
    browser = personas.client(personas.member)
    base = f"/investigations/{personas.investigation.pk}/postmortem/actions/"
    hx = {"HX-Request": "true"}

    added = browser.post(
        base,
        {"title": "Alert on the governor", "owner": personas.lead.pk, "due": "2030-02-01"},
        headers=hx,
    )
    assert added.status_code == 200
    item = ActionItem.objects.get()
    assert (item.title, item.owner, item.due) == (
        "Alert on the governor",
        personas.lead,
        date(2030, 2, 1),
    )
    assert "Alert on the governor" in added.content.decode()

    browser.post(f"{base}{item.pk}/", {"done": "true"}, headers=hx)
    item.refresh_from_db()
    assert item.done and item.done_at is not None
    browser.post(
        f"{base}{item.pk}/", {"title": "Alert on powersave", "owner": "", "due": ""}, headers=hx
    )
    item.refresh_from_db()
    assert (item.title, item.owner, item.due, item.done) == ("Alert on powersave", None, None, True)

    refused = browser.post(base, {"title": "", "due": "31/01/2030"}, headers=hx)
    assert refused.status_code == 400
    assert "Enter a valid date." in refused.content.decode()
    refused = browser.post(base, {"title": "Alert", "owner": personas.outsider.pk}, headers=hx)
    assert refused.status_code == 400
    assert (
        "The owner must be a member of the investigation&#x27;s team." in refused.content.decode()
    )

    browser.post(f"{base}{item.pk}/delete/", headers=hx)
    assert not ActionItem.objects.exists()


def test_the_case_page_has_a_postmortem_panel(personas):
    ActionItem.objects.create(investigation=personas.investigation, title="Alert on the governor")
    ActionItem.objects.create(investigation=personas.investigation, title="Finished", done=True)
    browser = personas.client(personas.viewer)

    page = loaded_page(browser, f"/investigations/{personas.investigation.pk}/")

    assert 'id="postmortem"' in page
    assert f'href="/investigations/{personas.investigation.pk}/postmortem/"' in page
    assert f'href="/investigations/{personas.investigation.pk}/postmortem/print/"' in page
    assert f'href="/investigations/{personas.investigation.pk}/postmortem.md"' in page
    assert "Not written yet" in page
    assert "1 open action" in page and "Alert on the governor" in page
    assert "Finished" not in page


def test_the_print_view_has_no_forms_and_draws_the_ladders(personas):
    ladder = import_ladder(personas)
    postmortem_update(
        investigation=personas.investigation, user=personas.member, summary="Powersave."
    )

    page = (
        personas.client(personas.viewer)
        .get(f"/investigations/{personas.investigation.pk}/postmortem/print/")
        .content.decode()
    )

    assert "<form" not in page and "<button" not in page and "<nav" not in page
    assert f'data-chart="chart-ladder-{ladder.pk}-throughput"' in page
    assert f'<script id="ladder-{ladder.pk}-throughput" type="application/json">' in page
    assert "vendor/plotly.min.js" in page
    assert "Powersave." in page
