"""The form of a knowledge-base entry: every text in English and, beside it, in Chinese."""

import json

from django import forms
from django.utils.translation import gettext_lazy as _

from investigations.choices import RootCauseCategory
from investigations.models.knowledge import BILINGUAL
from investigations.services.knowledge import EDITABLE, TEXT_FIELDS

LABELS = {
    "title": _("Title"),
    "symptoms": _("Symptoms"),
    "detection": _("How to detect it"),
    "fix": _("Fix"),
    "verification": _("How to verify the fix"),
    "monitoring": _("Monitoring that would have caught it"),
}
HELP = {
    "symptoms": _("How it shows: what is slower, by how much, under what load."),
    "detection": _(
        "Where to look on a host: files, commands, metrics. Wrap commands in `backticks`."
    ),
    "fix": _("What to change, and how to make it survive a reboot."),
    "verification": _("How to prove the fix worked, e.g. the same ladder again."),
    "monitoring": _("The metric or alert that would have caught it before users did."),
}


class RootCauseForm(forms.Form):
    category = forms.ChoiceField(
        choices=RootCauseCategory.choices, initial=RootCauseCategory.OTHER, label=_("Category")
    )
    references = forms.CharField(
        required=False,
        label=_("References"),
        help_text=_("Links or citations, one a line."),
        widget=forms.Textarea(attrs={"rows": 3}),
    )

    signals = forms.CharField(
        required=False,
        strip=False,
        label=_("Signals"),
        help_text=_(
            "How to recognise it from a case's evidence, as a JSON list: each signal names its "
            "source (finding, baseline, capture, profile or ladder), what it reads, a weight "
            "above 0 and at most 1, and its direction (for or against); decisive: true marks "
            'the evidence it cannot be without. Example: {"source": "finding", "rule": '
            '"cpu_governor", "weight": 0.8, "direction": "for", "decisive": true}'
        ),
        widget=forms.Textarea(attrs={"rows": 8, "class": "token", "spellcheck": "false"}),
    )

    def __init__(self, *args, teams=None, installation: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        for name in BILINGUAL:
            english, chinese = LABELS[name], _("%(label)s (Chinese)") % {"label": LABELS[name]}
            if name == "title":
                widgets = (
                    forms.TextInput(attrs={"autofocus": True}),
                    forms.TextInput(attrs={"lang": "zh-Hans"}),
                )
            else:
                widgets = (
                    forms.Textarea(attrs={"rows": 6}),
                    forms.Textarea(attrs={"rows": 6, "lang": "zh-Hans"}),
                )
            self.fields[name] = forms.CharField(
                required=name == "title",
                strip=False,
                label=english,
                help_text=HELP.get(name, ""),
                widget=widgets[0],
            )
            self.fields[f"{name}_zh"] = forms.CharField(
                required=False, strip=False, label=chinese, widget=widgets[1]
            )
        # The browser stops at the limits the service enforces (investigations/limits.py).
        for name, limit in TEXT_FIELDS.items():
            self.fields[name].widget.attrs["maxlength"] = limit
        if teams is not None:
            # Asked only of someone who could write it for more than one owner: the teams they
            # lead, and for an operator the installation (no team).
            self.fields["team"] = forms.ModelChoiceField(
                queryset=teams,
                required=not installation,
                empty_label=_("The installation: every signed-in user reads it")
                if installation
                else None,
                label=_("Written by the team"),
                help_text=_("Its members read it and its leads edit it."),
            )
        self.order_fields(["team", "category"])

    def clean_signals(self) -> list:
        text = self.cleaned_data.get("signals") or ""
        if not text.strip():
            return []
        try:
            return json.loads(text)
        except ValueError as error:
            raise forms.ValidationError(
                _("Not valid JSON (line %(line)s, column %(column)s): %(error)s"),
                params={
                    "line": getattr(error, "lineno", "?"),
                    "column": getattr(error, "colno", "?"),
                    "error": getattr(error, "msg", str(error)),
                },
            ) from None

    def pairs(self) -> list[tuple]:
        """The texts as (English field, Chinese field) rows, for the side-by-side layout."""
        return [(self[name], self[f"{name}_zh"]) for name in BILINGUAL]

    def service_fields(self) -> dict:
        """The cleaned values as root_cause_create/update take them."""
        return {name: self.cleaned_data[name] for name in EDITABLE}


def signals_text(signals: list[dict]) -> str:
    """The signals as the form shows them: a JSON list, one signal a line."""
    if not signals:
        return ""
    lines = ",\n".join("  " + json.dumps(signal, ensure_ascii=False) for signal in signals)
    return f"[\n{lines}\n]"


def references_text(references: list[str]) -> str:
    """The references as the form shows them: one a line."""
    return "\n".join(references)
