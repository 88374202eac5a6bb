"""Encryption at rest for secrets people give us (SSH private keys and passphrases)."""

import base64
import hashlib
from functools import cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured


@cache
def _box() -> MultiFernet:
    keys = settings.CREDENTIAL_KEYS
    if not keys:
        # DEBUG only (settings refuse this otherwise): a key derived from SECRET_KEY.
        digest = hashlib.sha256(b"perfcase-credentials:" + settings.SECRET_KEY.encode()).digest()
        keys = [base64.urlsafe_b64encode(digest).decode()]
    try:
        return MultiFernet([Fernet(key) for key in keys])
    except ValueError:
        raise ImproperlyConfigured(
            "PERFCASE_CREDENTIAL_KEYS must hold Fernet keys (32 url-safe base64-encoded bytes)"
        ) from None


def seal(plaintext: str) -> str:
    return _box().encrypt(plaintext.encode()).decode()


def unseal(token: str) -> str:
    try:
        return _box().decrypt(token.encode()).decode()
    except InvalidToken:
        raise ImproperlyConfigured(
            "A stored credential cannot be decrypted: PERFCASE_CREDENTIAL_KEYS no longer "
            "holds the key it was sealed with"
        ) from None
