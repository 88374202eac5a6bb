"""Writes of a person's own settings."""

from django.conf import settings
from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _

from investigations.models import UserPreference


def user_language_set(*, user, language: str) -> None:
    """Remember the person's language ("" to follow the browser)."""
    if language and language not in dict(settings.LANGUAGES):
        raise ValidationError(_("Unknown language: %(language)s") % {"language": language[:20]})
    UserPreference.objects.update_or_create(user=user, defaults={"language": language})
