"""Service errors onto page forms."""

from django import forms
from django.core.exceptions import ValidationError


def attach_errors(form: forms.Form, error: ValidationError) -> None:
    """Put a service's errors on the form fields they name, the rest on the form itself."""
    if not hasattr(error, "error_dict"):
        form.add_error(None, error)
        return
    for field, messages in error.message_dict.items():
        form.add_error(field if field in form.fields else None, messages)
