from django.conf import settings
from django.db import models
from django.utils.translation import gettext_lazy as _


class UserPreference(models.Model):
    """What a person chose for themselves; an empty language means "as my browser asks"."""

    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="preference"
    )
    language = models.CharField(
        _("language"), max_length=16, blank=True, choices=settings.LANGUAGES
    )

    def __str__(self) -> str:
        return f"{self.user} ({self.language or 'browser'})"
