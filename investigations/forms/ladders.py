"""The form of a new load ladder."""

from django import forms
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

from collectors.loadrun import validate_url
from investigations.choices import LoadKind, LoadTool
from investigations.phrases import message_of

MAX_LOAD_DIGITS = 9


def parse_steps(text: str) -> list[int]:
    # Signs are read, so that "-5" is refused for what it is (a load below 1), not as text.
    words = [w for w in text.replace(",", " ").split() if w]
    if not words or not all(w.removeprefix("-").isdigit() and w.isascii() for w in words):
        raise ValidationError(_("Give the loads as whole numbers, e.g. 10, 20, 50, 100."))
    if any(len(w) > MAX_LOAD_DIGITS for w in words):
        # Python refuses to read an integer of thousands of digits (a ValueError, a 500).
        raise ValidationError(
            _("A load has at most %(count)s digits.") % {"count": MAX_LOAD_DIGITS}
        )
    return [int(w) for w in words]


def _url(url: str) -> str:
    try:
        validate_url(url)
    except ValueError as error:
        raise ValidationError(message_of(error)) from None
    return url


class LadderForm(forms.Form):
    prefix = "ladder"

    side_a_url = forms.CharField(label=_("URL on side A"), help_text="http:// or https://")
    side_b_url = forms.CharField(label=_("URL on side B"))
    steps = forms.CharField(
        initial="10, 20, 50, 100, 200", label=_("Steps"), help_text=_("The load of each step")
    )
    load_kind = forms.TypedChoiceField(
        choices=LoadKind.choices,
        required=False,
        empty_value=LoadKind.CONCURRENCY,
        initial=LoadKind.CONCURRENCY,
        label=_("Load is"),
        help_text=_("requests/s: hey or k6 hold the rate whatever the latency"),
    )
    step_seconds = forms.IntegerField(
        initial=30, min_value=1, max_value=600, label=_("Seconds a step")
    )
    warmup_seconds = forms.IntegerField(
        initial=5, min_value=0, max_value=300, label=_("Warm-up seconds")
    )
    tool = forms.ChoiceField(choices=LoadTool.choices, initial=LoadTool.WRK, label=_("Tool"))
    stop_error_rate = forms.FloatField(
        initial=5, min_value=0.01, max_value=100, label=_("Stop above errors (%)")
    )
    stop_p99_ms = forms.FloatField(required=False, min_value=0.001, label=_("Stop above p99 (ms)"))
    margin = forms.FloatField(
        initial=20, min_value=1, max_value=99, label=_("Sides differ beyond (%)")
    )

    def clean_steps(self) -> list[int]:
        return parse_steps(self.cleaned_data["steps"])

    # The service checks the URLs again (the API's requests); here, so that a bad URL shows
    # beside the other fields' errors, not only once the rest of the form is right.
    def clean_side_a_url(self) -> str:
        return _url(self.cleaned_data["side_a_url"])

    def clean_side_b_url(self) -> str:
        return _url(self.cleaned_data["side_b_url"])

    def service_fields(self) -> dict:
        data = dict(self.cleaned_data)
        data["stop_error_rate"] = data["stop_error_rate"] / 100
        data["margin"] = data["margin"] / 100
        return data
