"""The form of an evidence collection: each kind's parameters form is its plan's schema
(investigations/runs/<kind>.py), shared with the API, so the page's form is that one."""

from investigations.runs.facts import FactsParameters as CollectFactsForm

__all__ = ["CollectFactsForm", "start_ids"]


def start_ids(kind: str) -> str:
    """The HTML ids of a kind's start form: every kind's form is on the one investigation
    page, and several have a field of the same name (seconds), whose label must find it."""
    return f"id_{kind}-%s"
