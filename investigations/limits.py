"""How much a person may type into each text field: one table, enforced by the services (so
the pages and the API refuse the same things with the same messages) and shown by the forms
as maxlength. The README lists it."""

from django.utils.translation import gettext as _

TITLE = 200  # an investigation's title, a checklist step's title
SHORT = 200  # symptom metric and load, side labels, names
REASON = 500  # why a checklist step does not apply
ENTRY = 5_000  # a timeline entry, a checklist step's notes
SPEC = 2_000  # a path node's spec per side, its state note, an edge's notes
NOTES = 20_000  # an investigation's notes (the postmortem's draft)


def too_long(value: str, limit: int) -> str | None:
    """The message for a text over its limit, or None."""
    if len(value) > limit:
        return _("Keep it to %(limit)s characters (this is %(length)s).") % {
            "limit": f"{limit:,}",
            "length": f"{len(value):,}",
        }
    return None
