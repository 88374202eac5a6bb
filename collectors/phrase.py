"""Sentences written once, in English, and read in each person's own language.

What the machinery says for everyone to read (an SSH error stored on a target, a finding's
title, a knee's explanation, a timeline entry) is kept as a Phrase: an English template with
named values, such as ``Phrase("Cannot reach %(host)s: connection refused", host="db-a")``.
A Phrase is the English text itself (a str), so it goes wherever a message went before; it
also remembers its template and values, stored as ``[template, values]``, so that a page
can look the template up in the catalogue of the reader's language and fill the values in:
a team of mixed languages shares one record. Values are data (host names, numbers, paths,
tools' own words) and are never translated, unless a value is itself a Phrase (a choice's
label, a nested message).

Templates are marked with `gettext_noop` so that `makemessages` finds them; nothing here
needs Django: collectors/ stays a plain library.
"""


def gettext_noop(text: str) -> str:
    """Marks a template for the translators (makemessages extracts calls by this name); the
    text itself stays English here."""
    return text


def ngettext_noop(singular: str, plural: str) -> tuple[str, str]:
    """Marks a template that counts something, with its plural, for the translators (the
    makemessages command of investigations/ extracts calls by this name); a Phrase made of
    it picks the form by its value `count`, in each reader's language."""
    return singular, plural


class Phrase(str):
    """The English text of a template and its values; `template` and `values` kept, and
    `plural` for a template that counts (made of ngettext_noop: `count` picks the form)."""

    def __new__(cls, template: str | tuple[str, str], /, **values):
        plural = None
        if isinstance(template, tuple):
            template, plural = template
        chosen = plural if plural is not None and values.get("count") != 1 else template
        phrase = super().__new__(cls, fill(chosen, values))
        phrase.template = template
        phrase.plural = plural
        phrase.values = values
        return phrase

    def __repr__(self) -> str:
        if self.plural is not None:
            return f"Phrase({(self.template, self.plural)!r}, **{self.values!r})"
        return f"Phrase({self.template!r}, **{self.values!r})"

    def as_json(self) -> list:
        """``[template, values]`` (``[template, values, plural]`` for one that counts), a
        nested Phrase as ``{"phrase": [template, values]}``."""
        stored = [self.template, {k: _stored(v) for k, v in self.values.items()}]
        return stored if self.plural is None else [*stored, self.plural]

    @classmethod
    def from_json(cls, data) -> "Phrase":
        """The inverse of as_json; raises ValueError on anything else."""
        if not (
            isinstance(data, list | tuple)
            and len(data) in (2, 3)
            and all(isinstance(text, str) for text in data[:1] + data[2:])
        ):
            raise ValueError("a stored phrase is [template, values] or [template, values, plural]")
        template, values = data[0], data[1]
        if not isinstance(values, dict):
            raise ValueError("a stored phrase's values are an object")
        if len(data) == 3:
            if "count" not in values:
                raise ValueError("a stored phrase that counts has a count")
            template = (template, data[2])
        try:
            return cls(
                template,
                **{
                    k: cls.from_json(v["phrase"]) if isinstance(v, dict) and "phrase" in v else v
                    for k, v in values.items()
                },
            )
        except (KeyError, TypeError) as error:
            raise ValueError(f"a stored phrase does not fill its template: {error}") from None


def _stored(value):
    return {"phrase": value.as_json()} if isinstance(value, Phrase) else value


def fill(template: str, values: dict) -> str:
    """The template with its values; a template without values is used as it is (so that a
    sentence with a literal % needs no escaping)."""
    return template % values if values else template


def as_phrase(text) -> Phrase:
    """A Phrase as it is; any other text as a phrase of its own (shown as it was written)."""
    return text if isinstance(text, Phrase) else Phrase(str(text))


def phrase_of(error: BaseException) -> Phrase:
    """What an error says, as a phrase: its own `phrase`, the Phrase it was raised with, or
    its text."""
    phrase = getattr(error, "phrase", None)
    if isinstance(phrase, Phrase):
        return phrase
    if error.args and isinstance(error.args[0], Phrase):
        return error.args[0]
    return Phrase(str(error))


def joined(parts, separator: str = "; ") -> Phrase:
    """Several phrases read as one, each in the reader's language (the template that joins
    them has no words to translate)."""
    parts = [as_phrase(part) for part in parts]
    names = [f"p{number}" for number in range(len(parts))]
    template = separator.replace("%", "%%").join(f"%({name})s" for name in names)
    return Phrase(template, **dict(zip(names, parts, strict=True)))
