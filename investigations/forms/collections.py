"""The form of an evidence collection: each kind's parameters form is its plan's schema
(investigations/runs/<kind>.py), shared with the API, so the page's form is that one."""

from investigations.runs.facts import FactsParameters as CollectFactsForm

__all__ = ["CollectFactsForm"]
