"""Strict grammars for values that later reach a network connection or a remote shell."""

import ipaddress
import re

from django.core.exceptions import ValidationError
from django.utils.translation import gettext_lazy as _

_HOST_LABEL = re.compile(r"^(?!-)[A-Za-z0-9-]{1,63}(?<!-)$")
_USERNAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]{0,31}$")


def normalise_address(value: str) -> str:
    """A host name, IPv4 or IPv6 address (brackets allowed around IPv6), normalised."""
    text = value.strip()
    bracketed = text.startswith("[") and text.endswith("]")
    try:
        # Brackets are the URL form of an IPv6 address, and only of one.
        address = ipaddress.ip_address(text[1:-1] if bracketed else text)
        if not bracketed or address.version == 6:
            return str(address)
    except ValueError:
        pass
    if bracketed:
        raise ValidationError(_("Only an IPv6 address goes in brackets."), code="invalid_address")
    name = text.rstrip(".")
    labels = name.split(".")
    if (
        not name
        or len(name) > 253
        or not all(_HOST_LABEL.match(label) for label in labels)
        or labels[-1].isdigit()
    ):
        raise ValidationError(
            _("Enter a host name (letters, digits, hyphens and dots), an IPv4 or an IPv6 address."),
            code="invalid_address",
        )
    return name.lower()


def validate_username(value: str) -> None:
    if not _USERNAME.match(value):
        raise ValidationError(
            _(
                "Enter a Unix user name: a letter or _ then letters, digits, '.', '_' or '-' "
                "(at most 32)."
            ),
            code="invalid_username",
        )
