"""Reads of a person's own settings."""

from investigations.models import UserPreference


def user_language(*, user) -> str:
    """The language the person chose, or "" to follow the browser."""
    return UserPreference.objects.filter(user=user).values_list("language", flat=True).first() or ""
