"""Timeline entries people wrote can be edited and deleted by their author or a lead, the
old text kept; what Perfcase wrote itself never changes."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.urls import reverse
from django.utils import timezone

from investigations.choices import EventKind
from investigations.models import TimelineEvent
from investigations.services.timeline import (
    timeline_entry_add,
    timeline_entry_delete,
    timeline_entry_edit,
)
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db
HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def note(personas):
    return timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.NOTE,
        summary="LB shows 502s from 14:02",
    )


def test_the_author_edits_a_note_and_the_old_text_stays_in_its_history(personas, note):
    edited = timeline_entry_edit(event=note, user=personas.member, summary="LB 502s from 14:05")

    assert edited.summary == "LB 502s from 14:05" and edited.edited_at is not None
    assert [old["summary"] for old in edited.history] == ["LB shows 502s from 14:02"]
    assert edited.history[0]["by"] == personas.member.username


def test_a_lead_may_edit_and_delete_anyones_note(personas, note):
    timeline_entry_edit(event=note, user=personas.lead, summary="corrected by the lead")
    timeline_entry_delete(event=note, user=personas.lead)

    stored = TimelineEvent.objects.get(pk=note.pk)
    assert stored.deleted_at is not None and stored.deleted_by == personas.lead
    listed = ApiClient(personas.viewer).get(
        f"/api/investigations/{personas.investigation.pk}/timeline?kind=note"
    )
    assert listed.body["items"] == []


def test_another_responder_may_not_change_someone_elses_note(personas, note):
    other = personas.lead.__class__.objects.create_user(username="rita", password="x")
    from investigations.models import Membership

    Membership.objects.create(team=personas.team, user=other, role="responder")
    with pytest.raises(PermissionDenied):
        timeline_entry_edit(event=note, user=other, summary="mine now")
    with pytest.raises(PermissionDenied):
        timeline_entry_delete(event=note, user=other)
    assert TimelineEvent.objects.get(pk=note.pk).summary == "LB shows 502s from 14:02"


def test_what_perfcase_wrote_itself_cannot_be_changed(personas):
    created = personas.investigation.events.filter(author=None).first() or (
        personas.investigation.events.exclude(kind__in=["note", "action"]).first()
    )
    with pytest.raises(PermissionDenied):
        timeline_entry_edit(event=created, user=personas.lead, summary="rewritten history")


def test_an_edit_is_checked_like_a_new_entry(personas, note):
    with pytest.raises(ValidationError) as caught:
        timeline_entry_edit(
            event=note,
            user=personas.member,
            summary="x" * 5_001,
            occurred_at=timezone.now() + timedelta(days=1),
        )
    assert set(caught.value.message_dict) == {"summary", "occurred_at"}


def test_the_api_edits_and_deletes_with_history(personas, note):
    api = ApiClient(personas.member)
    url = f"/api/investigations/{personas.investigation.pk}/timeline/{note.pk}"

    patched = api.patch(url, {"summary": "502s began at 14:05"})
    assert patched.status_code == 200, patched.body
    assert patched.body["summary"] == "502s began at 14:05"
    assert patched.body["history"][0]["summary"] == "LB shows 502s from 14:02"
    assert ApiClient(personas.viewer).patch(url, {"summary": "no"}).status_code == 403
    assert api.delete(url).status_code == 204
    assert api.delete(url).status_code == 404


def test_the_page_edits_a_note_in_place_and_shows_it_was_edited(personas, note):
    client = personas.client(personas.member)
    local = timezone.localtime(note.occurred_at).strftime("%Y-%m-%dT%H:%M")

    response = client.post(
        reverse("timeline_entry_edit", args=[note.pk]),
        {"summary": "LB 502s from 14:05", "occurred_at": local},
        **HX,
    )

    text = response.content.decode()
    assert response.status_code == 200
    assert "LB 502s from 14:05" in text and "edited" in text
    assert "<s>LB shows 502s from 14:02</s>" in text


def test_a_viewer_sees_no_edit_controls(personas, note):
    text = (
        personas.client(personas.viewer)
        .get(reverse("investigation_detail", args=[personas.investigation.pk]))
        .content.decode()
    )
    assert reverse("timeline_entry_edit", args=[note.pk]) not in text


def test_the_incident_times_stand_on_the_timeline_and_the_story_leaves_out_bookkeeping(
    personas,
):
    from investigations.services.investigations import investigation_update

    start = timezone.now() - timedelta(hours=3)
    investigation_update(
        investigation=personas.investigation,
        user=personas.lead,
        started_at=start,
        detected_at=start + timedelta(minutes=5),
        # The symptom step completes itself: checklist bookkeeping on the timeline.
        symptom_metric="p99",
        symptom_value_a=480,
        symptom_value_b=240,
    )
    client = personas.client(personas.member)
    url = reverse("timeline", args=[personas.investigation.pk])

    everything = client.get(url, **HX).content.decode()
    story = client.get(url, {"kind": "story"}, **HX).content.decode()

    for text in (everything, story):
        assert text.index("Impact started") < text.index("Detected")
    assert "Checklist:" in everything
    assert "Checklist:" not in story
