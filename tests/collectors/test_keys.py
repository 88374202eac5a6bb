"""inspect_private_key on real keys, made by the real ssh-keygen, compared with what it prints."""

import base64
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from collectors.keys import PrivateKeyError, inspect_private_key
from tests.conftest import require_real_tool

PASSPHRASE = "pässwört with spaces 🔑"

ASK_FOR_PASSPHRASE = "This key is encrypted: enter its passphrase."
WRONG_PASSPHRASE = "The passphrase does not unlock this key."
NOT_A_KEY = "This is not a private key in OpenSSH or PEM format."
BROKEN_KEY = "This is not a valid private key in OpenSSH or PEM format (it may be truncated)."
PUBLIC_KEY = "This is a public key. Paste the private key (the file without .pub)."
PUTTY_KEY = (
    "PuTTY keys are not supported: export it in OpenSSH format "
    "(puttygen key.ppk -O private-openssh -o key)."
)


@dataclass(frozen=True)
class Key:
    text: str  # the private key file as ssh-keygen wrote it
    public_text: str
    fingerprint: str  # as `ssh-keygen -lf key.pub` prints it
    bits: int
    passphrase: str


class KeyMaker:
    """Runs ssh-keygen once per kind of key and remembers the result for the session."""

    def __init__(self, directory: Path, ssh_keygen: str):
        self.directory = directory
        self.ssh_keygen = ssh_keygen
        self.made: dict[tuple, Key] = {}

    def __call__(self, *options: str, passphrase: str = "") -> Key:
        wanted = (options, passphrase)
        if wanted not in self.made:
            path = self.directory / f"key{len(self.made)}"
            subprocess.run(
                [
                    self.ssh_keygen,
                    "-q",
                    *options,
                    "-N",
                    passphrase,
                    "-C",
                    "perfcase@test",
                    "-f",
                    str(path),
                ],
                check=True,
                capture_output=True,
                timeout=60,
            )
            listed = subprocess.run(
                [self.ssh_keygen, "-lf", f"{path}.pub"],
                check=True,
                capture_output=True,
                text=True,
                timeout=60,
            ).stdout.split()
            # "256 SHA256:abc... perfcase@test (ED25519)"
            self.made[wanted] = Key(
                text=path.read_text(),
                public_text=Path(f"{path}.pub").read_text(),
                fingerprint=listed[1],
                bits=int(listed[0]),
                passphrase=passphrase,
            )
        return self.made[wanted]


@pytest.fixture(scope="session")
def make_key(tmp_path_factory) -> KeyMaker:
    ssh_keygen = shutil.which("ssh-keygen")
    if ssh_keygen is None:
        require_real_tool("ssh-keygen is not installed")
    return KeyMaker(tmp_path_factory.mktemp("ssh-keys"), ssh_keygen)


# (id, ssh-keygen options, key_type, the first line the format must have)
KINDS = [
    ("ed25519", ["-t", "ed25519"], "ssh-ed25519", "-----BEGIN OPENSSH PRIVATE KEY-----"),
    (
        "ecdsa-256",
        ["-t", "ecdsa", "-b", "256"],
        "ecdsa-sha2-nistp256",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
    ),
    (
        "ecdsa-384",
        ["-t", "ecdsa", "-b", "384"],
        "ecdsa-sha2-nistp384",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
    ),
    (
        "ecdsa-521",
        ["-t", "ecdsa", "-b", "521"],
        "ecdsa-sha2-nistp521",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
    ),
    (
        "rsa-3072-openssh",
        ["-t", "rsa", "-b", "3072"],
        "ssh-rsa",
        "-----BEGIN OPENSSH PRIVATE KEY-----",
    ),
    (
        "rsa-2048-pem",
        ["-t", "rsa", "-b", "2048", "-m", "PEM"],
        "ssh-rsa",
        "-----BEGIN RSA PRIVATE KEY-----",
    ),
    (
        "rsa-2048-pkcs8",
        ["-t", "rsa", "-b", "2048", "-m", "PKCS8"],
        "ssh-rsa",
        "-----BEGIN PRIVATE KEY-----",
    ),
    (
        "ecdsa-pem",
        ["-t", "ecdsa", "-m", "PEM"],
        "ecdsa-sha2-nistp256",
        "-----BEGIN EC PRIVATE KEY-----",
    ),
    (
        "ecdsa-pkcs8",
        ["-t", "ecdsa", "-b", "384", "-m", "PKCS8"],
        "ecdsa-sha2-nistp384",
        "-----BEGIN PRIVATE KEY-----",
    ),
]
ENCRYPTED_HEADERS = {
    "-----BEGIN PRIVATE KEY-----": "-----BEGIN ENCRYPTED PRIVATE KEY-----",
}
KIND_IDS = [kind[0] for kind in KINDS]

# One of each file format, for the passphrase errors.
FORMATS = {
    "openssh": ["-t", "ed25519"],
    "pem": ["-t", "rsa", "-b", "2048", "-m", "PEM"],
    "pkcs8": ["-t", "rsa", "-b", "2048", "-m", "PKCS8"],
}


def _openssh_cipher(text: str) -> str:
    """The cipher named in an openssh-key-v1 file ("none" when it is not encrypted)."""
    body = base64.b64decode("".join(text.strip().splitlines()[1:-1]))
    magic = b"openssh-key-v1\0"
    assert body.startswith(magic)
    length = int.from_bytes(body[len(magic) : len(magic) + 4], "big")
    return body[len(magic) + 4 : len(magic) + 4 + length].decode()


def refusal(text: str, passphrase: str = "") -> str:
    with pytest.raises(PrivateKeyError) as caught:
        inspect_private_key(text, passphrase)
    return str(caught.value)


@pytest.mark.parametrize("kind_id, options, key_type, header", KINDS, ids=KIND_IDS)
def test_it_names_an_unencrypted_key_as_ssh_keygen_does(
    make_key, kind_id, options, key_type, header
):
    key = make_key(*options)
    assert key.text.startswith(header)

    info = inspect_private_key(key.text)

    assert info.fingerprint == key.fingerprint
    assert info.key_type == key_type
    assert info.bits == key.bits
    assert info.encrypted is False


@pytest.mark.parametrize("kind_id, options, key_type, header", KINDS, ids=KIND_IDS)
def test_it_opens_an_encrypted_key_with_its_passphrase(
    make_key, kind_id, options, key_type, header
):
    key = make_key(*options, passphrase=PASSPHRASE)
    # ssh-keygen really encrypted it, in the format asked for.
    assert key.text.startswith(ENCRYPTED_HEADERS.get(header, header))
    if header == "-----BEGIN OPENSSH PRIVATE KEY-----":
        assert _openssh_cipher(key.text) != "none"
    elif "RSA" in header or "EC" in header:
        assert "Proc-Type: 4,ENCRYPTED" in key.text

    info = inspect_private_key(key.text, PASSPHRASE)

    assert info.fingerprint == key.fingerprint
    assert info.key_type == key_type
    assert info.bits == key.bits
    assert info.encrypted is True


def test_it_reports_rsa_3072_with_its_bits(make_key):
    info = inspect_private_key(make_key("-t", "rsa", "-b", "3072").text)

    assert (info.key_type, info.bits) == ("ssh-rsa", 3072)


def test_an_unencrypted_openssh_key_names_no_cipher(make_key):
    assert _openssh_cipher(make_key("-t", "ed25519").text) == "none"


def test_it_ignores_a_passphrase_given_for_an_unencrypted_key(make_key):
    for options in FORMATS.values():
        key = make_key(*options)

        info = inspect_private_key(key.text, "not needed")

        assert info.fingerprint == key.fingerprint
        assert info.encrypted is False


def test_it_accepts_windows_line_endings_and_blank_lines_around_the_key(make_key):
    for options in FORMATS.values():
        key = make_key(*options, passphrase=PASSPHRASE)
        pasted = "\r\n\r\n  " + key.text.replace("\n", "\r\n") + "\r\n   \n"

        assert inspect_private_key(pasted, PASSPHRASE).fingerprint == key.fingerprint


@pytest.mark.parametrize("format_name", FORMATS)
def test_it_asks_for_the_passphrase_of_an_encrypted_key(make_key, format_name):
    key = make_key(*FORMATS[format_name], passphrase=PASSPHRASE)

    assert refusal(key.text) == ASK_FOR_PASSPHRASE


@pytest.mark.parametrize("format_name", FORMATS)
def test_it_says_a_wrong_passphrase_does_not_unlock_the_key(make_key, format_name):
    key = make_key(*FORMATS[format_name], passphrase=PASSPHRASE)

    for wrong in ["wrong", PASSPHRASE[:-1], PASSPHRASE + " ", PASSPHRASE.upper()]:
        assert refusal(key.text, wrong) == WRONG_PASSPHRASE


@pytest.mark.parametrize("text", ["", "   ", "\n\n\t\r\n"], ids=["empty", "spaces", "blank-lines"])
def test_it_asks_for_a_key_when_the_text_is_empty(text):
    assert refusal(text) == "Paste a private key."


@pytest.mark.parametrize(
    "options",
    [["-t", "ed25519"], ["-t", "ecdsa"], ["-t", "rsa", "-b", "3072"]],
    ids=["ed25519", "ecdsa", "rsa"],
)
def test_it_recognises_a_pasted_public_key(make_key, options):
    key = make_key(*options)

    assert refusal(key.public_text) == PUBLIC_KEY
    assert refusal("  \n" + key.public_text.strip()) == PUBLIC_KEY


def test_it_recognises_putty_text_and_says_how_to_convert_it():
    # The layout puttygen writes (version 3 format).
    putty = (
        "PuTTY-User-Key-File-3: ssh-ed25519\n"
        "Encryption: none\n"
        "Comment: eddsa-key-20240101\n"
        "Public-Lines: 2\n"
        "AAAAC3NzaC1lZDI1NTE5AAAAIDlh5mWUCH0eM8MlK5cKvlUHMMGkKOwTu6bTZJuTHg1B\n"
        "\n"
        "Private-Lines: 1\n"
        "AAAAIBAk6VQmZ3EFSpw4UJs+Ia2wXWLMbRbaNgXc/BE2KUy+\n"
        "Private-MAC: 1b9bd2b8f4a2a1f1d3bbd26fdd8e18e4bd4c5c3f48eba1b0ab3a1f7f2b4cf0a1\n"
    )

    assert refusal(putty) == PUTTY_KEY
    assert refusal(putty.replace("File-3", "File-2")) == PUTTY_KEY


@pytest.mark.parametrize(
    "text",
    [
        "hello",
        "password123",
        "ssh root@10.0.0.1",
        "<script>alert(1)</script>",
        "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQ",  # a PEM body without its frame
        "\x00\x01\x02binary",
    ],
)
def test_it_refuses_text_that_is_not_a_key(text):
    assert refusal(text) == NOT_A_KEY


@pytest.mark.parametrize(
    "text",
    [
        "-----BEGIN OPENSSH PRIVATE KEY-----\nnot base64 at all!\n"
        "-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN OPENSSH PRIVATE KEY-----\naGVsbG8gd29ybGQ=\n-----END OPENSSH PRIVATE KEY-----",
        "-----BEGIN RSA PRIVATE KEY-----\naGVsbG8gd29ybGQ=\n-----END RSA PRIVATE KEY-----",
        "-----BEGIN PRIVATE KEY-----\n\n-----END PRIVATE KEY-----",
        "-----BEGIN CERTIFICATE-----\naGVsbG8gd29ybGQ=\n-----END CERTIFICATE-----",
        "-----BEGIN garbage",
    ],
    ids=["bad-base64", "openssh-garbage", "pem-garbage", "empty-pkcs8", "certificate", "header"],
)
def test_it_refuses_garbage_inside_a_key_frame(text):
    assert refusal(text) == BROKEN_KEY


def _truncations(text: str) -> dict[str, str]:
    lines = text.strip().splitlines()
    cuts = {
        "first-half": text[: len(text) // 2],
        "no-footer": "\n".join(lines[:-1]),
        "header-only": lines[0],
        "middle-line-lost": "\n".join(lines[:2] + lines[3:]),
    }
    # Losing the last lines of the body while keeping the footer, as a bad copy does.
    for lost in range(1, 5):
        cuts[f"last-{lost}-body-lines-lost"] = "\n".join(lines[: -1 - lost] + lines[-1:])
    return cuts


@pytest.mark.parametrize("format_name", FORMATS)
def test_it_refuses_a_truncated_key(make_key, format_name):
    key = make_key(*FORMATS[format_name])

    for name, cut in _truncations(key.text).items():
        assert refusal(cut) == BROKEN_KEY, name


@pytest.mark.parametrize(
    "options",
    [
        ["-t", "ed25519"],
        ["-t", "ecdsa", "-b", "521"],
        ["-t", "rsa", "-b", "3072"],
        *FORMATS.values(),
    ],
    ids=["ed25519", "ecdsa-521", "rsa-3072", *[f"{name}-2" for name in FORMATS]],
)
def test_it_refuses_a_truncated_key_even_when_a_passphrase_is_given(make_key, options):
    # People fill in the passphrase field out of habit; the answer must still be a clear error.
    key = make_key(*options)

    for name, cut in _truncations(key.text).items():
        try:
            inspect_private_key(cut, "habit")
        except PrivateKeyError as error:
            assert str(error) in (BROKEN_KEY, WRONG_PASSPHRASE), name
        except Exception as error:  # noqa: BLE001 - anything else reaches the user as a 500
            pytest.fail(f"{name}: {type(error).__name__}: {error} instead of a PrivateKeyError")
        else:
            pytest.fail(f"{name}: a truncated key was accepted")


def test_it_refuses_a_truncated_encrypted_key(make_key):
    for options in FORMATS.values():
        key = make_key(*options, passphrase=PASSPHRASE)

        for name, cut in _truncations(key.text).items():
            assert refusal(cut, PASSPHRASE) in (BROKEN_KEY, WRONG_PASSPHRASE), name


@pytest.mark.parametrize(
    "options",
    [["-t", "rsa", "-b", "1024"], ["-t", "rsa", "-b", "1024", "-m", "PEM"]],
    ids=["openssh", "pem"],
)
def test_it_refuses_rsa_keys_below_2048_bits(make_key, options):
    key = make_key(*options)
    assert key.bits == 1024

    assert refusal(key.text) == "This RSA key has 1024 bits; at least 2048 are needed."


def test_it_refuses_a_small_rsa_key_even_with_its_passphrase(make_key):
    key = make_key("-t", "rsa", "-b", "1024", passphrase=PASSPHRASE)

    assert refusal(key.text, PASSPHRASE) == (
        "This RSA key has 1024 bits; at least 2048 are needed."
    )


@pytest.mark.filterwarnings("ignore:SSH DSA keys are deprecated")
@pytest.mark.filterwarnings("ignore::DeprecationWarning")
def test_it_refuses_dsa_keys(make_key):
    key = make_key("-t", "dsa")
    assert key.public_text.startswith("ssh-dss ")

    assert refusal(key.text) == "DSA keys are refused by current OpenSSH; use ed25519."
