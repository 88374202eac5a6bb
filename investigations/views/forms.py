"""One way for a view to take a form: bind it, call the service, and on any error answer
400 with the form drawn again where it was, each error under the field it names (a
service's ValidationError too, see forms/errors.py), the typed values kept, the form open.
A view written with it cannot lose what was typed:

    return submit(
        LadderForm(request.POST),
        lambda data: ladder_request(investigation=case, user=request.user, **data),
        done=lambda ladder: redirect("ladder_detail", pk=ladder.pk),
        failed=on_case(request, case, panel="ladders", name="ladder_form"),
    )

`failed` draws the form again: `on_case` for a form in a panel of the investigation page
(the panel alone for htmx, else the whole page with every panel drawn), `on_page` for a
form on a page of its own, or any function of the form that answers a response.
"""

from collections.abc import Callable
from typing import Any

from django import forms
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils.cache import patch_vary_headers

from investigations.forms import attach_errors
from investigations.views.case_page import investigation_page
from investigations.views.pages import form_failed, wants_partial
from investigations.views.panels import panel_named, panel_render

Failed = Callable[[forms.Form], HttpResponse]


def submit(
    form: forms.Form,
    service: Callable[[dict], Any],
    *,
    done: Callable[[Any], HttpResponse],
    failed: Failed,
) -> HttpResponse:
    """`done(service(form.cleaned_data))` when the form is valid and the service takes it;
    else `failed(form)`, the form bound with every error, answered with status 400."""
    if form.is_valid():
        try:
            result = service(form.cleaned_data)
        except ValidationError as error:
            attach_errors(form, error)
        else:
            return done(result)
    response = failed(form)
    response.status_code = 400
    return response


def on_case(request: HttpRequest, investigation, *, panel: str, name: str) -> Failed:
    """A form of the investigation page's panel `panel`, whose context function reads it
    as `form_or(request, name, ...)`: for htmx, that panel's card again (swapped in place of
    the old one); without JavaScript, the page with every panel drawn, the form open in its
    panel (static/js/perfcase.js scrolls to the first error)."""

    def draw(form: forms.Form) -> HttpResponse:
        form_failed(request, **{name: form})
        if wants_partial(request):
            response = HttpResponse(panel_render(request, investigation, panel_named(panel)))
            patch_vary_headers(response, ["HX-Request"])
            return response
        return investigation_page(request, investigation, status=400)

    return draw


def on_page(request: HttpRequest, template: str, context: dict, *, name: str = "form") -> Failed:
    """A form on a page of its own: the page again, the form in its context as `name`."""
    return lambda form: render(request, template, {**context, name: form})
