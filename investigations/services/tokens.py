import hashlib
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from investigations.models import ApiToken

TOKEN_PREFIX = "pc_"
# Recording every use would turn each API read into a write; once a minute is enough.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def _digest(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def api_token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """A new token; the raw value is returned once and never stored."""
    name = " ".join(name.split())
    if not name:
        raise ValidationError({"name": _("Name the token after what will use it.")})
    if len(name) > 200:
        raise ValidationError({"name": _("A token name has at most 200 characters.")})
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        user=user,
        name=name,
        digest=_digest(raw),
        prefix=raw[:10],
        expires_at=timezone.now() + timedelta(days=settings.API_TOKEN_DAYS),
    )
    return token, raw


def api_token_revoke(*, token: ApiToken) -> None:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])


def api_token_authenticate(*, raw: str):
    """The active user a token belongs to, or None."""
    token = (
        ApiToken.objects.select_related("user")
        .filter(digest=_digest(raw), revoked_at=None, user__is_active=True)
        .filter(Q(expires_at=None) | Q(expires_at__gt=timezone.now()))
        .first()
    )
    if token is None:
        return None
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at > LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.user
