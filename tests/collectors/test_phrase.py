"""Phrases: stored in English, with the template and values to read them in any language."""

import json

import pytest

from collectors.errors import Unreachable
from collectors.phrase import Phrase, as_phrase, joined, ngettext_noop
from collectors.ssh import paramiko_key


def test_a_phrase_is_its_english_text():
    phrase = Phrase("Cannot reach %(host)s: connection refused", host="db-a")

    assert phrase == "Cannot reach db-a: connection refused"
    assert "db-a" in phrase and phrase.startswith("Cannot reach")
    assert json.dumps({"error": phrase}) == '{"error": "Cannot reach db-a: connection refused"}'
    assert (phrase.template, phrase.values) == (
        "Cannot reach %(host)s: connection refused",
        {"host": "db-a"},
    )


def test_a_template_without_values_keeps_its_percent_signs():
    assert Phrase("100% of requests failed") == "100% of requests failed"


def test_a_phrase_survives_json_with_the_phrases_inside_it():
    kind = Phrase("Host facts")
    phrase = Phrase(
        "%(kind)s collected from %(done)s of %(count)s hosts", kind=kind, done=2, count=3
    )

    stored = json.loads(json.dumps(phrase.as_json()))
    back = Phrase.from_json(stored)

    assert stored == [
        "%(kind)s collected from %(done)s of %(count)s hosts",
        {"kind": {"phrase": ["Host facts", {}]}, "done": 2, "count": 3},
    ]
    assert back == "Host facts collected from 2 of 3 hosts"
    assert isinstance(back.values["kind"], Phrase) and back.values["kind"].template == "Host facts"


@pytest.mark.parametrize(
    "stored",
    [
        None,
        "text",
        [],
        ["only a template"],
        [1, {}],
        ["%(a)s", []],
        ["%(a)s", {"b": 1}],
    ],
)
def test_something_that_is_not_a_stored_phrase_is_refused(stored):
    with pytest.raises(ValueError):
        Phrase.from_json(stored)


def test_joined_phrases_stay_phrases_and_the_join_has_nothing_to_translate():
    parts = [Phrase("db-a: %(error)s", error="timed out"), "a note written by a person"]

    phrase = joined(parts, separator="; 100% ")

    assert phrase == "db-a: timed out; 100% a note written by a person"
    assert phrase.template == "%(p0)s; 100%% %(p1)s"
    assert [value.template for value in phrase.values.values()] == [
        "db-a: %(error)s",
        "a note written by a person",
    ]
    assert joined([]) == ""


def test_text_that_is_not_a_phrase_becomes_one_that_reads_as_it_was_written():
    assert as_phrase("Cancelled.").template == "Cancelled."
    kept = Phrase("%(x)s", x=1)
    assert as_phrase(kept) is kept


def test_a_collector_error_keeps_its_phrase_and_says_it_in_english():
    error = Unreachable(
        Phrase("Cannot reach %(host)s: no answer within %(seconds)s s", host="db-a", seconds="10")
    )

    assert error.message == str(error) == "Cannot reach db-a: no answer within 10 s"
    assert error.phrase.values == {"host": "db-a", "seconds": "10"}
    assert Unreachable("plain words").phrase.template == "plain words"


def test_the_errors_collectors_raise_carry_their_phrase():
    with pytest.raises(Exception) as raised:
        paramiko_key("not a key")

    assert raised.value.phrase.template == "The stored credential cannot be used: %(error)s"
    assert raised.value.phrase.values["error"].template.startswith("This is not a")


def test_a_phrase_that_counts_is_english_in_the_form_of_its_count_and_stored_with_its_plural():
    forms = ngettext_noop("%(count)s pair", "%(count)s pairs")

    one, three = Phrase(forms, count=1), Phrase(forms, count=3)
    back = Phrase.from_json(json.loads(json.dumps(three.as_json())))

    assert (one, three, back) == ("1 pair", "3 pairs", "3 pairs")
    assert three.as_json() == ["%(count)s pair", {"count": 3}, "%(count)s pairs"]
    assert (back.template, back.plural) == ("%(count)s pair", "%(count)s pairs")
    assert Phrase("%(count)s pair", count=1).as_json() == ["%(count)s pair", {"count": 1}]


@pytest.mark.parametrize(
    "stored",
    [["%(count)s pair", {"n": 1}, "%(count)s pairs"], ["%(count)s pair", {"count": 1}, 5]],
)
def test_a_stored_phrase_that_counts_needs_its_count_and_a_plural_text(stored):
    with pytest.raises(ValueError):
        Phrase.from_json(stored)
