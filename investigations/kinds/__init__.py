"""Evidence kinds: one descriptor each, and the registry the machinery iterates.

A kind (host facts, a CPU profile, a packet capture, the baseline pack, a ladder, and the
findings and timeline entries a root cause may name) is a `Kind`, written in a module of
this package and registered there by one line, `register(Kind(...))`. It names its parts;
the machinery reads them from the registry and never names a kind:

- the collection request and the worker: its Plan (runs/base.py) and so its parameters
  form, which is also the OpenAPI schema of its parameters (kinds/schema.py);
- urls.py: its URL patterns; api/root.py: its API router (and so its importers, which its
  API module registers: api/imports.py);
- the investigation page: its views module, whose @panel registers its panel;
- the checklist: the steps its evidence completes;
- root causes, the knowledge base and the postmortem: how a piece of it is named as
  evidence (`EvidenceSource`), and its postmortem section.

This module is the registry only and imports nothing of the app: the machinery imports it,
each kind's module imports it and its own parts, and kinds/loader.py (which the app runs when
it starts, apps.py) imports every kind's module. So no import runs the other way, and no
cycle goes through the registry. A part the machinery reads while it is being imported
itself (URL patterns, an API router, the views) is a function that imports it when called.
See "Adding an evidence kind" in the README.
"""

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property


@dataclass(frozen=True)
class EvidenceSource:
    """How a piece of a kind is named as a root cause's evidence: its model (an item names
    a row of the case), the rows that may be named and shown, those the confirm form offers
    (newest first), their label and link, and the postmortem's label and link where they
    differ."""

    model: type
    rows: Callable  # investigation -> QuerySet
    label: Callable  # row -> str
    url: Callable  # row -> str
    offer: Callable | None = None  # investigation -> QuerySet (None: rows)
    postmortem_label: Callable | None = None
    postmortem_url: Callable | None = None

    def offered(self, investigation):
        return (self.offer or self.rows)(investigation)

    def labelled(self, investigation, ids, *, postmortem: bool = False) -> list[tuple]:
        """(row, label, url) of each row with one of these ids on the case."""
        label = (postmortem and self.postmortem_label) or self.label
        url = (postmortem and self.postmortem_url) or self.url
        return [(row, label(row), url(row)) for row in self.rows(investigation).filter(pk__in=ids)]


@dataclass(frozen=True, eq=False)
class Kind:
    key: str  # the value stored (Collection.kind, a root cause's evidence "kind")
    label: str  # lazily translated
    order: int = 100
    # A collected kind: its Plan class (runs/base.py). Its form is `plan.parameters_form`.
    plan: type | None = None
    # () -> a list of URL patterns (each keeps its name: templates reverse them).
    urls: Callable | None = None
    # () -> its ninja Router; its API module registers its importers (api/imports.py).
    router: Callable | None = None
    # () -> the module whose @panel registers its panel on the investigation page.
    views: Callable | None = None
    panel: str = ""  # that panel's name
    # The name its start form has in that panel's context: a start form that fails comes
    # back in its panel, errors under its fields (views/collections.py).
    start_form: str = ""
    # The checklist steps its evidence completes: {step key: investigation -> Phrase | None}.
    checklist: dict[str, Callable] = field(default_factory=dict)
    # How a root cause names a piece of it (None: a root cause cannot).
    evidence: EvidenceSource | None = None
    # investigation -> its section of the postmortem (None: it has none).
    postmortem: Callable | None = None

    @cached_property
    def plan_instance(self):
        """The kind's Plan, made once."""
        return self.plan() if self.plan is not None else None

    @property
    def form(self):
        """The parameters form of a collected kind: the page's form and the API's schema."""
        return self.plan.parameters_form if self.plan is not None else None


_registry: dict[str, Kind] = {}


def register(kind: Kind) -> Kind:
    """Make `kind` known to the machinery (a second registration of its key replaces it)."""
    _registry[kind.key] = kind
    return kind


def unregister(key: str) -> None:
    """Forget a kind (a test's own)."""
    _registry.pop(key, None)


def kinds() -> list[Kind]:
    """Every registered kind, in order (the app registers its own when it starts)."""
    return sorted(_registry.values(), key=lambda kind: (kind.order, kind.key))


def kind_named(key: str) -> Kind:
    try:
        return _registry[key]
    except KeyError:
        raise LookupError(f"no evidence kind {key!r}") from None


def collected_kinds() -> list[Kind]:
    """The kinds a collection can gather (those with a Plan), in order."""
    return [kind for kind in kinds() if kind.plan is not None]


def evidence_kinds() -> list[Kind]:
    """The kinds a root cause can name as its evidence, in order."""
    return [kind for kind in kinds() if kind.evidence is not None]
