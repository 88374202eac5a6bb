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

Parts are named "module:attribute" (or given as objects) and loaded when first used, so this
registry imports none of them: kinds import their parts, the machinery imports the registry,
never the reverse (no import cycle through it). See "Adding an evidence kind" in the README.
"""

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

# A part: an object, or "module:attribute" naming one (loaded on first use).
Ref = object


def resolve(ref: Ref):
    """The object a part names."""
    if not isinstance(ref, str):
        return ref
    module, _, attribute = ref.partition(":")
    target = importlib.import_module(module)
    return getattr(target, attribute) if attribute else target


@dataclass(frozen=True)
class EvidenceSource:
    """How a piece of a kind is named as a root cause's evidence: its model (an item names
    a row of the case), the rows that may be named and shown, those the confirm form offers
    (newest first), their label and link, and the postmortem's label and link where they
    differ."""

    model: Ref
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
    plan: Ref | None = None
    # () -> a list of URL patterns (each keeps its name: templates reverse them).
    urls: Ref | None = None
    # Its ninja Router; its API module registers its importers (api/imports.py).
    router: Ref | None = None
    # The module whose @panel registers its panel on the investigation page, and its name.
    views: Ref | None = None
    panel: str = ""
    # The checklist steps its evidence completes: {step key: investigation -> Phrase | None}.
    checklist: dict[str, Ref] = field(default_factory=dict)
    # How a root cause names a piece of it (None: a root cause cannot).
    evidence: EvidenceSource | None = None
    # investigation -> its section of the postmortem (None: it has none).
    postmortem: Ref | None = None

    @cached_property
    def plan_instance(self):
        """The kind's Plan, made once."""
        return resolve(self.plan)() if self.plan is not None else None

    @property
    def form(self):
        """The parameters form of a collected kind: the page's form and the API's schema."""
        plan = self.plan_instance
        return plan.parameters_form if plan is not None else None


_registry: dict[str, Kind] = {}
_loaded = False


def register(kind: Kind) -> Kind:
    """Make `kind` known to the machinery (a second registration of its key replaces it)."""
    _registry[kind.key] = kind
    return kind


def unregister(key: str) -> None:
    """Forget a kind (a test's own)."""
    _registry.pop(key, None)


def _load() -> None:
    # Each module of this package registers its kind when imported: import them all once.
    global _loaded
    if not _loaded:
        _loaded = True
        for module in pkgutil.iter_modules(__path__):
            if module.name != "schema":
                importlib.import_module(f"{__name__}.{module.name}")


def kinds() -> list[Kind]:
    """Every registered kind, in order."""
    _load()
    return sorted(_registry.values(), key=lambda kind: (kind.order, kind.key))


def kind_named(key: str) -> Kind:
    _load()
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
