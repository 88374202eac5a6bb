"""Stored phrases (collectors/phrase.py) read in the language of whoever reads them.

A row that says something for everyone (a finding, a failed target, a timeline entry, a
ladder's knee) keeps its text in English, for search and the API's English readers, and
beside it, in `phrases`, the phrase it was made from: {text name: [template, values]}.
"""

from django.utils.translation import gettext, gettext_noop, ngettext

from collectors.phrase import Phrase, as_phrase, fill, phrase_of

# Templates older rows were stored with, before the phrases that count had plurals: kept
# in the catalogue so that those rows still read in each person's language.
LEGACY_TEMPLATES = (
    gettext_noop("%(kind)s collected from %(done)s of %(count)s hosts"),
    gettext_noop("%(kind)s cancelled: collected from %(done)s of %(count)s hosts"),
    gettext_noop("%(kind)s requested from %(count)s hosts: %(hosts)s"),
    gettext_noop("Imported %(count)s %(format)s profiles onto side %(side)s: %(files)s"),
    gettext_noop("Imported %(count)s baseline results onto side %(side)s: %(files)s"),
    gettext_noop("Imported %(format)s onto side %(side)s: %(count)s steps (%(loads)s)"),
    gettext_noop("CPU profiles of both sides of %(count)s pairs"),
    gettext_noop("packet captures of both sides of %(count)s pairs"),
    gettext_noop("facts from both hosts of %(pairs)s pair(s); %(findings)s finding(s) reviewed"),
    gettext_noop("%(nodes)s nodes joined by %(edges)s edge"),
    gettext_noop("%(nodes)s nodes joined by %(edges)s edges"),
    gettext_noop("%(count)s roles present on both sides"),
)


def translate(phrase: Phrase) -> str:
    """The phrase in the active language (English where the catalogue has no translation);
    one that counts in the form its language gives its count."""
    values = {k: translate(v) if isinstance(v, Phrase) else v for k, v in phrase.values.items()}
    plural = getattr(phrase, "plural", None)
    try:
        if plural is not None:
            return fill(ngettext(phrase.template, plural, int(values["count"])), values)
        translated = gettext(phrase.template)
        if translated == phrase.template and "count" in values:
            # An older row's template that is now the singular of one that counts.
            translated = ngettext(phrase.template, phrase.template, int(values["count"]))
        return fill(translated, values)
    except (KeyError, ValueError, TypeError):
        # A translation whose placeholders do not match its template: the English is right.
        return str(phrase) if plural is not None else fill(phrase.template, values)


def _stored(row, name: str):
    """The text `name` of a row (a model instance, or a dict such as a ladder's stored
    analysis) and the phrases stored beside it."""
    if isinstance(row, dict):
        return row.get(name, ""), row.get("phrases") or {}
    return getattr(row, name, ""), getattr(row, "phrases", None) or {}


def stored_phrase(row, name: str) -> Phrase:
    """The row's text `name` as a phrase: the one it was made from, or the text as stored."""
    value, phrases = _stored(row, name)
    if not isinstance(value, Phrase) and name in phrases:
        try:
            return Phrase.from_json(phrases[name])
        except ValueError:
            pass
    return as_phrase(value)


def stored_text(row, name: str) -> str:
    """The row's text `name` in the active language: from the phrase it was made from where
    it has one, else as stored (older rows, and what people wrote themselves)."""
    value, phrases = _stored(row, name)
    if isinstance(value, Phrase) or name in phrases:
        return translate(stored_phrase(row, name))
    return value


def with_phrases(changes: dict, limits: dict | None = None) -> dict:
    """A row's field values with each Phrase written as its English (cut to its field's
    length in `limits`) and kept whole in `phrases`, for each reader's language."""
    phrases = {name: text.as_json() for name, text in changes.items() if isinstance(text, Phrase)}
    if not phrases:
        return changes
    limits = limits or {}
    written = {
        name: str(text)[: limits.get(name)] if isinstance(text, Phrase) else text
        for name, text in changes.items()
    }
    return {**written, "phrases": phrases}


def message_of(error: Exception) -> str:
    """An error's message in the active language (collectors' errors carry a Phrase)."""
    return translate(phrase_of(error))
