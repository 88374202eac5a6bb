"""The investigation page's panels. Each feature registers its own panel beside its views
(a name, a title, a template and a context function); the page and the one panel URL render
whatever is registered, so a new kind of evidence adds a panel without touching the page.

    @panel(name="profiles", title=_("CPU profiles"), template="...", order=55)
    def profiles_panel(request, investigation) -> dict:
        return {"profiles": profiles_for(investigation=investigation)}
"""

import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib import import_module

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.safestring import SafeString
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_safe

from investigations.access import investigation_for_user
from investigations.choices import Role
from investigations.views.pages import wants_partial

PanelContext = Callable[[HttpRequest, object], dict]


@dataclass(frozen=True)
class Panel:
    name: str  # the section's id, the last part of its URL, the end of its refresh event
    title: str
    template: str  # the panel's body, inside the card that _panel.html draws around it
    # (request, investigation) -> what the template reads; a "heading_note" in it ("3 open")
    # is shown beside the title.
    context: PanelContext
    order: int
    half: bool = False  # half-width, beside the next half-width panel

    @property
    def refresh_event(self) -> str:
        return f"refresh-{self.name}"


_registry: dict[str, Panel] = {}


def panel(*, name: str, title: str, template: str, order: int, half: bool = False):
    """Register the decorated context function as the investigation page's panel `name`."""

    def register(context: PanelContext) -> PanelContext:
        if name in _registry:
            raise ImproperlyConfigured(f"Two panels are named {name!r}.")
        _registry[name] = Panel(name, title, template, context, order, half)
        return context

    return register


@cache
def _discover() -> None:
    # A feature registers its panel when its views module is imported. Import every module
    # of the views package once, so that no panel depends on someone else importing it first.
    package = import_module("investigations.views")
    for module in pkgutil.iter_modules(package.__path__):
        import_module(f"{package.__name__}.{module.name}")


def panels_in_order() -> list[Panel]:
    _discover()
    return sorted(_registry.values(), key=lambda p: (p.order, p.name))


def panel_named(name: str) -> Panel:
    _discover()
    try:
        return _registry[name]
    except KeyError:
        raise Http404(_("No such panel.")) from None


def panel_render(request: HttpRequest, investigation, panel: Panel) -> SafeString:
    """The panel's card, as the page shows it first and as htmx swaps it in later."""
    url = reverse("investigation_panel", args=[investigation.pk, panel.name])
    context = {
        "investigation": investigation,
        "can_write": Role.rank(investigation.user_role) >= Role.rank(Role.RESPONDER),
        **panel.context(request, investigation),
        "panel": panel,
        "panel_url": url,
    }
    return render_to_string("investigations/_panel.html", context, request)


def panel_rows(request: HttpRequest, investigation) -> list[list[SafeString]]:
    """Every panel's card in order; two half-width neighbours share a row. Runs every
    panel's context function, so every panel's queries."""
    rows: list[list[SafeString]] = []
    halves = False
    for each in panels_in_order():
        card = panel_render(request, investigation, each)
        if each.half and halves and len(rows[-1]) == 1:
            rows[-1].append(card)
        else:
            rows.append([card])
        halves = each.half
    return rows


@require_safe
@login_required
def investigation_panel(request: HttpRequest, pk: int, name: str) -> HttpResponse:
    """One panel: alone for htmx (a refresh swaps the card), or on a page of its own (the
    link in the panel's heading, for browsers without JavaScript)."""
    investigation = investigation_for_user(request.user, pk)
    shown = panel_named(name)
    card = panel_render(request, investigation, shown)
    if wants_partial(request):
        response = HttpResponse(card)
    else:
        response = render(
            request,
            "investigations/investigation_panel.html",
            {"investigation": investigation, "panel": shown, "card": card},
        )
    patch_vary_headers(response, ["HX-Request"])
    return response
