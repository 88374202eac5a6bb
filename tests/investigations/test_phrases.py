"""What the machinery writes for everyone (findings, failed hosts, the timeline, a ladder's
knee) reads in each person's language; what people write stays as they wrote it."""

import pytest
from django.test import override_settings
from django.utils import translation
from django.utils.html import escape
from django.utils.translation import gettext

from collectors.errors import Unreachable
from collectors.facts import FactsSnapshot
from collectors.phrase import Phrase
from investigations.choices import EventKind, HostRole
from investigations.models import Finding, TimelineEvent
from investigations.phrases import stored_text, translate
from investigations.services.collections import collection_request
from investigations.services.facts import facts_store
from investigations.services.inventory import host_create, member_add
from investigations.services.targets import target_claim, target_fail
from investigations.services.timeline import timeline_entry_add
from investigations.services.webhooks import _event_payload
from tests.conftest import ApiClient, loaded_page

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-CN,zh;q=0.9"}
GOVERNOR = "CPU frequency governor is '%(governor)s' on side %(side)s"


def chinese(template: str, **values) -> str:
    with translation.override("zh-hans"):
        text = gettext(template)
    assert text != template, f"no Chinese for {template!r}"
    return text % values if values else text


@pytest.fixture
def collected(personas):
    """Facts of db-a (A, powersave) and db-b (B, performance), stored as a collection stores
    them: the governor finding is raised."""
    for side, name in (("a", "db-a"), ("b", "db-b")):
        host = host_create(team=personas.team, name=name, address="10.0.0.9", username="perf")
        member_add(
            investigation=personas.investigation,
            user=personas.lead,
            host=host,
            side_key=side,
            role=HostRole.DATABASE,
        )
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    for target in collection.targets.all():
        target = target_claim(target_id=target.pk, seconds=60)
        governor = "powersave" if target.side.key == "a" else "performance"
        facts_store(target=target, snapshot=FactsSnapshot(facts={"cpu.governor": governor}))
    return collection


def test_a_finding_keeps_its_english_and_the_phrase_it_was_made_from(personas, collected):
    finding = Finding.objects.get(investigation=personas.investigation, rule="cpu_governor")

    assert finding.title == "CPU frequency governor is 'powersave' on side A"
    assert finding.phrases["title"] == [GOVERNOR, {"governor": "powersave", "side": "A"}]
    assert set(finding.phrases) == {"title", "explanation", "recommendation"}


def test_the_case_page_shows_findings_in_chinese_to_a_chinese_browser(personas, collected):
    page = loaded_page(
        personas.client(personas.member), f"/investigations/{personas.investigation.pk}/", **CHINESE
    )

    assert escape(chinese(GOVERNOR, governor="powersave", side="A")) in page
    assert "CPU frequency governor is" not in page


def test_the_api_answers_findings_in_the_language_asked_for_and_english_otherwise(
    personas, collected
):
    api = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}/findings"

    english = {f["rule"]: f for f in api.get(path).body}["cpu_governor"]
    zh = {f["rule"]: f for f in api.get(path, **CHINESE).body}["cpu_governor"]

    assert english["title"] == "CPU frequency governor is 'powersave' on side A"
    assert zh["title"] == chinese(GOVERNOR, governor="powersave", side="A")
    assert zh["explanation"] != english["explanation"] and zh["rule"] == "cpu_governor"


def test_a_hosts_error_reads_in_chinese_with_its_details_kept(personas):
    host = host_create(team=personas.team, name="app-a", address="10.0.0.7", username="perf")
    member_add(
        investigation=personas.investigation,
        user=personas.lead,
        host=host,
        side_key="a",
        role=HostRole.SERVICE,
    )
    collection = collection_request(investigation=personas.investigation, user=personas.member)
    target = target_claim(target_id=collection.targets.get().pk, seconds=60)
    refused = Unreachable(
        Phrase(
            "Cannot reach %(host)s: connection refused (is sshd running?)",
            host="app-a (perf@10.0.0.7:22)",
        )
    )
    target_fail(target_id=target.pk, error=refused.phrase, attempt=target.attempts)
    api = ApiClient(personas.member)

    answer = api.get(f"/api/collections/{collection.pk}", **CHINESE).body

    expected = chinese(
        "Cannot reach %(host)s: connection refused (is sshd running?)",
        host="app-a (perf@10.0.0.7:22)",
    )
    assert answer["targets"][0]["error"] == expected
    assert api.get(f"/api/collections/{collection.pk}").body["targets"][0]["error"] == (
        "Cannot reach app-a (perf@10.0.0.7:22): connection refused (is sshd running?)"
    )
    # The timeline's "collected from 0 of 1 hosts; failed: ..." nests the same error.
    ended = TimelineEvent.objects.filter(investigation=personas.investigation).last()
    with translation.override("zh-hans"):
        assert expected in stored_text(ended, "summary")


def test_timeline_entries_of_the_machinery_are_translated_and_peoples_words_never(personas):
    note = timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.NOTE,
        # The very words of a message in the catalogue: still the person's own.
        summary="Cancelled.",
    )
    opened = TimelineEvent.objects.filter(investigation=personas.investigation).first()

    with translation.override("zh-hans"):
        assert stored_text(note, "summary") == "Cancelled."
        assert stored_text(opened, "summary") == chinese(
            "Investigation opened: %(title)s", title=personas.investigation.title
        )
    assert opened.summary == f"Investigation opened: {personas.investigation.title}"


def test_a_row_written_before_phrases_shows_its_stored_text(personas, collected):
    finding = Finding.objects.get(investigation=personas.investigation, rule="cpu_governor")
    Finding.objects.filter(pk=finding.pk).update(phrases={})
    finding.refresh_from_db()

    with translation.override("zh-hans"):
        assert stored_text(finding, "title") == finding.title


def test_values_are_never_translated_but_nested_phrases_are():
    phrase = Phrase(
        "%(kind)s requested from %(count)s hosts: %(hosts)s",
        kind=Phrase("Host facts"),
        count=2,
        hosts="Cancelled. (A)",
    )

    with translation.override("zh-hans"):
        text = translate(phrase)

    assert chinese("Host facts") in text and "Cancelled. (A)" in text


@override_settings(LANGUAGE_CODE="zh-hans")
def test_a_chat_channel_gets_the_installations_language(personas):
    event = TimelineEvent.objects.filter(investigation=personas.investigation).first()

    text = _event_payload(event)["text"]

    assert chinese("Investigation opened: %(title)s", title=personas.investigation.title) in text
