"""SSH private keys: check what a person pasted and name its public fingerprint."""

import base64
import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, rsa

from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _

MIN_RSA_BITS = 2048


class PrivateKeyError(ValueError):
    """The text is not a usable private key; the message (a Phrase) says what to do."""


@dataclass(frozen=True)
class PrivateKeyInfo:
    key_type: str  # as OpenSSH names it: ssh-ed25519, ecdsa-sha2-nistp256, ssh-rsa
    bits: int
    fingerprint: str  # SHA256:..., as `ssh-keygen -l` prints it
    encrypted: bool


def inspect_private_key(text: str, passphrase: str = "") -> PrivateKeyInfo:
    """Parse an OpenSSH or PEM private key; raise PrivateKeyError with a reason if unusable."""
    data = text.strip().replace("\r\n", "\n").encode()
    if not data:
        raise PrivateKeyError(Phrase(_("Paste a private key.")))
    if data.startswith((b"ssh-", b"ecdsa-")):
        raise PrivateKeyError(
            Phrase(_("This is a public key. Paste the private key (the file without .pub)."))
        )
    if data.startswith(b"PuTTY-User-Key-File"):
        raise PrivateKeyError(
            Phrase(
                _(
                    "PuTTY keys are not supported: export it in OpenSSH format "
                    "(puttygen key.ppk -O private-openssh -o key)."
                )
            )
        )
    key, encrypted = _load(data, passphrase.encode() or None)
    if isinstance(key, dsa.DSAPrivateKey):
        raise PrivateKeyError(Phrase(_("DSA keys are refused by current OpenSSH; use ed25519.")))
    if isinstance(key, rsa.RSAPrivateKey) and key.key_size < MIN_RSA_BITS:
        raise PrivateKeyError(
            Phrase(
                _("This RSA key has %(bits)s bits; at least %(minimum)s are needed."),
                bits=key.key_size,
                minimum=MIN_RSA_BITS,
            )
        )
    if not isinstance(
        key, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    ):
        raise PrivateKeyError(Phrase(_("Only ed25519, ECDSA and RSA keys are supported.")))
    key_type, blob = public_key_blob(key)
    bits = 256 if isinstance(key, ed25519.Ed25519PrivateKey) else key.key_size
    return PrivateKeyInfo(key_type, bits, fingerprint_of_blob(blob), encrypted)


def load_private_key(text: str, passphrase: str = ""):
    """The cryptography key object; raises PrivateKeyError like inspect_private_key."""
    data = text.strip().replace("\r\n", "\n").encode()
    key, _encrypted = _load(data, passphrase.encode() or None)
    return key


def public_key_blob(key) -> tuple[str, bytes]:
    """The key's OpenSSH public type name and wire-format blob."""
    line = key.public_key().public_bytes(
        serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH
    )
    key_type, b64 = line.split()[:2]
    return key_type.decode(), base64.b64decode(b64)


def fingerprint_of_blob(blob: bytes) -> str:
    digest = hashlib.sha256(blob).digest()
    return "SHA256:" + base64.b64encode(digest).decode().rstrip("=")


OPENSSH_BEGIN = b"-----BEGIN OPENSSH PRIVATE KEY-----"
OPENSSH_MAGIC = b"openssh-key-v1\x00"
NOT_VALID = Phrase(
    _("This is not a valid private key in OpenSSH or PEM format (it may be truncated).")
)


def _is_encrypted(data: bytes) -> bool:
    """Read it from the key's own framing, not from a parser's error message."""
    if not data.startswith(OPENSSH_BEGIN):
        return b"Proc-Type: 4,ENCRYPTED" in data or data.startswith(
            b"-----BEGIN ENCRYPTED PRIVATE KEY-----"
        )
    body = b"".join(line for line in data.splitlines()[1:] if not line.startswith(b"-----"))
    try:
        raw = base64.b64decode(body, validate=True)
    except ValueError:
        raise PrivateKeyError(NOT_VALID) from None
    if not raw.startswith(OPENSSH_MAGIC) or len(raw) < len(OPENSSH_MAGIC) + 4:
        raise PrivateKeyError(NOT_VALID)
    length = int.from_bytes(raw[len(OPENSSH_MAGIC) : len(OPENSSH_MAGIC) + 4], "big")
    cipher = raw[len(OPENSSH_MAGIC) + 4 : len(OPENSSH_MAGIC) + 4 + length]
    return cipher != b"none"


def _load(data: bytes, password: bytes | None):
    is_openssh = data.startswith(OPENSSH_BEGIN)
    if not is_openssh and not data.startswith(b"-----BEGIN"):
        raise PrivateKeyError(Phrase(_("This is not a private key in OpenSSH or PEM format.")))
    encrypted = _is_encrypted(data)
    if encrypted and password is None:
        raise PrivateKeyError(Phrase(_("This key is encrypted: enter its passphrase.")))
    loader = (
        serialization.load_ssh_private_key if is_openssh else serialization.load_pem_private_key
    )
    try:
        # A passphrase given for a key that has none is ignored, not an error.
        return loader(data, password if encrypted else None), encrypted
    except Exception:  # cryptography raises assorted errors on bad input
        if encrypted:
            raise PrivateKeyError(Phrase(_("The passphrase does not unlock this key."))) from None
        raise PrivateKeyError(NOT_VALID) from None
