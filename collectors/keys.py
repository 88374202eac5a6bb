"""SSH private keys: check what a person pasted and name its public fingerprint."""

import base64
import hashlib
from dataclasses import dataclass

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import dsa, ec, ed25519, rsa

MIN_RSA_BITS = 2048


class PrivateKeyError(ValueError):
    """The text is not a usable private key; the message says what to do."""


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
        raise PrivateKeyError("Paste a private key.")
    if data.startswith((b"ssh-", b"ecdsa-")):
        raise PrivateKeyError(
            "This is a public key. Paste the private key (the file without .pub)."
        )
    if data.startswith(b"PuTTY-User-Key-File"):
        raise PrivateKeyError(
            "PuTTY keys are not supported: export it in OpenSSH format "
            "(puttygen key.ppk -O private-openssh -o key)."
        )
    key, encrypted = _load(data, passphrase.encode() or None)
    if isinstance(key, dsa.DSAPrivateKey):
        raise PrivateKeyError("DSA keys are refused by current OpenSSH; use ed25519.")
    if isinstance(key, rsa.RSAPrivateKey) and key.key_size < MIN_RSA_BITS:
        raise PrivateKeyError(
            f"This RSA key has {key.key_size} bits; at least {MIN_RSA_BITS} are needed."
        )
    if not isinstance(
        key, ed25519.Ed25519PrivateKey | ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey
    ):
        raise PrivateKeyError("Only ed25519, ECDSA and RSA keys are supported.")
    key_type, blob = public_key_blob(key)
    bits = 256 if isinstance(key, ed25519.Ed25519PrivateKey) else key.key_size
    return PrivateKeyInfo(key_type, bits, fingerprint_of_blob(blob), encrypted)


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


def _load(data: bytes, password: bytes | None):
    is_openssh = data.startswith(b"-----BEGIN OPENSSH PRIVATE KEY-----")
    if not is_openssh and not data.startswith(b"-----BEGIN"):
        raise PrivateKeyError("This is not a private key in OpenSSH or PEM format.")
    loader = (
        serialization.load_ssh_private_key if is_openssh else serialization.load_pem_private_key
    )
    try:
        return loader(data, password), password is not None
    except TypeError as error:
        # cryptography raises TypeError for a passphrase mismatch in either direction.
        if password is not None and "not encrypted" in str(error):
            return loader(data, None), False
        raise PrivateKeyError("This key is encrypted: enter its passphrase.") from None
    except ValueError as error:
        message = str(error).lower()
        if password is None and ("password" in message or "encrypted" in message):
            raise PrivateKeyError("This key is encrypted: enter its passphrase.") from None
        if password is not None and (
            "checksum" in message or "decrypt" in message or "password" in message
        ):
            raise PrivateKeyError("The passphrase does not unlock this key.") from None
        raise PrivateKeyError(
            "This is not a valid private key in OpenSSH or PEM format (it may be truncated)."
        ) from None
    except Exception:  # cryptography raises assorted errors on garbage inside a valid frame
        raise PrivateKeyError(
            "This is not a valid private key in OpenSSH or PEM format (it may be truncated)."
        ) from None
