"""The investigation page's panels. Each feature registers its own panel beside its views
(a name, a title, a template and a context function); the page and the one panel URL render
whatever is registered, so a new kind of evidence adds a panel without touching the page.

The page itself draws only each panel's frame: htmx loads every panel from its own URL as
soon as the page is in, so a case with ten thousand events or fifty collections opens as
fast as an empty one, and each panel's queries run in a request of their own.

    @panel(name="profiles", title=_("CPU profiles"), template="...", order=55)
    def profiles_panel(request, investigation) -> dict:
        return {"profiles": profiles_for(investigation=investigation)}
"""

import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import import_module

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ImproperlyConfigured
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.template.loader import render_to_string
from django.urls import reverse
from django.utils.cache import patch_vary_headers
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_safe

from investigations.access import investigation_for_user
from investigations.choices import Role
from investigations.kinds import kinds
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
        panels_changed()
        return context

    return register


@cache
def _discover() -> None:
    # A feature registers its panel when its views module is imported. Import every module
    # of the views package once, so that no panel depends on someone else importing it first.
    package = import_module("investigations.views")
    for module in pkgutil.iter_modules(package.__path__):
        import_module(f"{package.__name__}.{module.name}")
    # And each registered evidence kind's views, wherever they live.
    for kind in kinds():
        if kind.views is not None:
            kind.views()


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


# A panel's frame on the investigation page: htmx fills it from the panel's URL as soon as
# the page is in (the answer, _panel.html's card, replaces it); without JavaScript, the
# heading's link opens the panel on a page of its own. Written here, and kept for each case
# and language, rather than an included template: fifteen includes cost more than all the
# rest of the page.
FRAME = (
    '<section class="card frame" id="{name}" hx-get="{url}"'
    ' hx-trigger="load, refresh-{name} from:body" hx-swap="outerHTML" hx-disinherit="*"'
    ' aria-busy="true"><h2><a class="panel-link" href="{url}">{title}</a></h2>'
    '<p class="muted loading" role="status"><span class="spinner" aria-hidden="true"></span>'
    '{loading}</p><noscript><p><a href="{url}">{alone}</a></p></noscript></section>'
)


def panel_menu() -> SafeString:
    """The section menu's links, one a panel in the page's order."""
    return _menu(get_language())


@lru_cache(maxsize=16)
def _menu(language: str) -> SafeString:
    return format_html_join(
        "", '<a href="#{}">{}</a>', ((p.name, p.title) for p in panels_in_order())
    )


def panels_html(request: HttpRequest, investigation, *, drawn: bool = False) -> SafeString:
    """Every panel's frame, in order, two half-width neighbours in a row. Frames cost no
    query; their URLs carry the page's query (a node chosen on the path, a timeline filter).
    `drawn`: every panel's card instead, so every panel's queries (a page answering a failed
    form shows that form, with its errors, in its panel)."""
    if drawn:
        return _rows([(p, panel_render(request, investigation, p)) for p in panels_in_order()])
    return _frames(investigation.pk, request.GET.urlencode(), get_language())


@lru_cache(maxsize=256)
def _frames(pk: int, query: str, language: str) -> SafeString:
    """The frames of one case's page in one language: the same for every reader, so drawn
    once a process and kept (the last 256, a few KiB each)."""
    loading, alone = _("Loading…"), _("Open this section")
    frames = []
    for each in panels_in_order():
        url = reverse("investigation_panel", args=[pk, each.name])
        url = f"{url}?{query}" if query else url
        frame = format_html(
            FRAME, name=each.name, url=url, title=each.title, loading=loading, alone=alone
        )
        frames.append((each, frame))
    return _rows(frames)


def panels_changed() -> None:
    """Forget the frames and menus kept: the registry changed."""
    _frames.cache_clear()
    _menu.cache_clear()


def _rows(panels: list[tuple[Panel, str]]) -> SafeString:
    rows: list[list[str]] = []
    halves = False
    for each, html in panels:
        if each.half and halves and len(rows[-1]) == 1:
            rows[-1].append(html)
        else:
            rows.append([html])
        halves = each.half
    return mark_safe(  # noqa: S308 - cards and frames, each escaped as it was drawn
        "\n".join(f'<div class="grid-2">{"".join(r)}</div>' if len(r) > 1 else r[0] for r in rows)
    )


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
