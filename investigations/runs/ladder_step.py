"""What profiles and captures share: being taken during a step of a ladder, so that both
sides are measured under the load where they diverge.

A kind's parameters form subclasses LadderStepForm (the `ladder` and `step` fields and their
checks) and its plan's schedule() calls `on_ladder_step`: the collection then starts when
that step's measurement begins (`step` a number from 1), or during a one-step ladder that
holds the knee's load again (`step` "knee"), and its duration fits inside that step. The
ladder finds what was taken during its steps by the collection's parameters.
"""

from datetime import timedelta

from django import forms
from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

KNEE = "knee"


class LadderStepForm(forms.Form):
    # The schema of the API (kinds/schema.py): a step is a number or knee, and the ladder and
    # its step come together.
    json_schema = {"step": {"pattern": "^(knee|[1-9][0-9]{0,3})$"}}
    json_schema_rules = {"dependentRequired": {"ladder": ["step"], "step": ["ladder"]}}

    ladder = forms.IntegerField(
        required=False, min_value=1, label=_("During the ladder"), help_text=_("optional")
    )
    step = forms.CharField(
        required=False,
        max_length=32,
        label=_("At its step"),
        help_text=_("A step number of the ladder, or knee: its load held again"),
    )

    def clean_step(self):
        value = (self.cleaned_data.get("step") or "").strip().lower()
        if not value:
            return None
        if value == KNEE:
            return KNEE
        if not value.isdecimal() or int(value) < 1:
            raise ValidationError(_("A step number from 1, or knee."))
        return int(value)

    def clean(self):
        data = super().clean()
        if data.get("step") is not None and not data.get("ladder"):
            self.add_error("ladder", _("Choose the ladder whose step to take it during."))
        if data.get("ladder") and data.get("step") is None:
            self.add_error("step", _("Choose the ladder's step (a number, or knee)."))
        return data


def on_ladder_step(*, investigation, user, parameters: dict):
    """(parameters, start): the parameters with the ladder and its step (from 1) recorded
    and `seconds` cut to the step's length, and when the step's measurement begins; or the
    parameters as they were and None without a ladder. A ValidationError names the field."""
    ladder_id, step = parameters.pop("ladder", None), parameters.pop("step", None)
    if ladder_id is None:
        return parameters, None
    from investigations.services.ladders import ladder_hold_at_knee, ladder_step_window

    ladder = investigation.ladders.filter(pk=ladder_id).first()
    if ladder is None:
        raise ValidationError({"ladder": _("Choose a ladder of this investigation.")})
    if step == KNEE:
        ladder, index = ladder_hold_at_knee(ladder=ladder, user=user, seconds=parameters["seconds"])
    else:
        index = step - 1
    # A step's measurement must start at least this far ahead to be caught: the targets
    # connect and check first.
    lead = timedelta(seconds=settings.STEP_LEAD_SECONDS)
    start, seconds = ladder_step_window(ladder=ladder, index=index, lead=lead)
    parameters.update(ladder=ladder.pk, step=index + 1, seconds=min(parameters["seconds"], seconds))
    return parameters, start
