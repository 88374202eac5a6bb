"""Reads of API tokens."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet

from investigations.models import ApiToken


def api_tokens_for(*, user: AbstractBaseUser) -> QuerySet[ApiToken]:
    """The user's API tokens, newest first (the rows only)."""
    return ApiToken.objects.filter(user=user)


def api_token_get(*, user: AbstractBaseUser, token_id: int) -> ApiToken | None:
    """The user's API token with this id, or None: another user's token is none."""
    return ApiToken.objects.filter(user=user, pk=token_id).first()
