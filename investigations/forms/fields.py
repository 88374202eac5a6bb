"""Fields and widgets more than one form uses."""

from django import forms
from django.core.exceptions import ValidationError

DATETIME_WIDGET = forms.DateTimeInput(attrs={"type": "datetime-local"}, format="%Y-%m-%dT%H:%M")


class MinuteDateTimeField(forms.DateTimeField):
    """Shown and typed to the minute, so a time that matches to the minute is unchanged."""

    widget = DATETIME_WIDGET

    def has_changed(self, initial, data) -> bool:
        try:
            value = self.to_python(data)
        except ValidationError:
            return True
        return _to_minute(initial) != _to_minute(value)


def _to_minute(value):
    return value.replace(second=0, microsecond=0) if value else None
