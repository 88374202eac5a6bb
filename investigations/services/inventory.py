from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.keys import PrivateKeyError, inspect_private_key
from collectors.phrase import Phrase
from investigations.choices import ROLE_IN_TEXT, EventKind, HostRole, HostTransport
from investigations.models import Credential, EnvironmentMember, Host, Investigation, Team
from investigations.phrases import message_of
from investigations.services.checklist import checklist_refresh, placement_steps
from investigations.services.timeline import timeline_event_log
from investigations.validators import normalise_address, validate_username
from investigations.vault import seal

MAX_KEY_CHARS = 32_000

# What _clean_name says, per kind of thing named: whole sentences, for translation.
_NAME_MISSING = {
    "credential": _("Give the credential a name."),
    "host": _("Give the host a name."),
}
_NAME_TOO_LONG = {
    "credential": _("A credential name has at most 200 characters."),
    "host": _("A host name has at most 200 characters."),
}


def _clean_name(name: str, what: str) -> str:
    name = " ".join(name.split())
    if not name:
        raise ValidationError({"name": _NAME_MISSING[what]})
    if len(name) > 200:
        raise ValidationError({"name": _NAME_TOO_LONG[what]})
    return name


@transaction.atomic
def credential_create(
    *, team: Team, user, name: str, private_key: str, passphrase: str = ""
) -> Credential:
    name = _clean_name(name, "credential")
    if len(private_key) > MAX_KEY_CHARS:
        raise ValidationError({"private_key": _("This is far too long for an SSH private key.")})
    try:
        info = inspect_private_key(private_key, passphrase)
    except PrivateKeyError as error:
        field = "passphrase" if "passphrase" in str(error) else "private_key"
        raise ValidationError({field: message_of(error)}) from None
    if Credential.objects.filter(team=team, name=name).exists():
        raise ValidationError({"name": _("The team already has a credential with this name.")})
    return Credential.objects.create(
        team=team,
        name=name,
        key_type=info.key_type,
        fingerprint=info.fingerprint,
        encrypted_private_key=seal(private_key.strip() + "\n"),
        encrypted_passphrase=seal(passphrase) if info.encrypted else "",
        created_by=user,
    )


def credential_delete(*, credential: Credential) -> None:
    users = list(credential.hosts.values_list("name", flat=True)[:5])
    if users:
        raise ValidationError(
            _("Hosts still use this credential: %(hosts)s.") % {"hosts": ", ".join(users)}
        )
    credential.delete()


def _check_host(host: Host) -> None:
    errors = {}
    try:
        host.name = _clean_name(host.name, "host")
    except ValidationError as error:
        errors.update(error.message_dict)
    if host.transport == HostTransport.LOCAL:
        # This machine: no address, port or user to check, whatever was given.
        host.address = host.address.strip() or "localhost"
    else:
        try:
            host.address = normalise_address(host.address)
        except ValidationError as error:
            errors["address"] = error.messages
        try:
            validate_username(host.username)
        except ValidationError as error:
            errors["username"] = error.messages
    if not isinstance(host.port, int) or not 1 <= host.port <= 65535:
        errors["port"] = _("The SSH port must be between 1 and 65535.")
    if host.transport not in HostTransport.values:
        errors["transport"] = _("Choose SSH or the local transport.")
    elif host.transport == HostTransport.LOCAL and not settings.LOCAL_TRANSPORT:
        # A host that is local already may still be edited (and switched to SSH).
        was = Host.objects.filter(pk=host.pk).values_list("transport", flat=True).first()
        if was != HostTransport.LOCAL:
            errors["transport"] = _("The local transport is off here (PERFCASE_LOCAL_TRANSPORT).")
    if host.credential_id and host.credential.team_id != host.team_id:
        errors["credential"] = _("Choose a credential of the host's own team.")
    if host.jump_host_id:
        errors.update(_jump_host_errors(host))
    if (
        not errors
        and Host.objects.filter(team_id=host.team_id, name=host.name).exclude(pk=host.pk).exists()
    ):
        errors["name"] = _("The team already has a host with this name.")
    if errors:
        raise ValidationError(errors)


def _jump_host_errors(host: Host) -> dict[str, str]:
    jump = host.jump_host
    if jump.team_id != host.team_id:
        return {"jump_host": _("Choose a jump host of the host's own team.")}
    seen = {host.pk}
    while jump is not None:
        if jump.pk in seen:
            return {"jump_host": _("These jump hosts would form a loop.")}
        seen.add(jump.pk)
        jump = jump.jump_host
    return {}


HOST_FIELDS = ["name", "address", "port", "username", "credential", "jump_host", "transport"]


@transaction.atomic
def host_create(*, team: Team, **fields) -> Host:
    host = Host(team=team, **fields)
    _check_host(host)
    host.save()
    return host


@transaction.atomic
def host_update(*, host: Host, **fields) -> Host:
    unknown = set(fields) - set(HOST_FIELDS)
    if unknown:
        raise TypeError(f"unknown fields: {sorted(unknown)}")
    for field, value in fields.items():
        setattr(host, field, value)
    _check_host(host)
    host.save()
    return host


def host_delete(*, host: Host) -> None:
    investigations = list(
        host.placements.values_list("investigation__title", flat=True).distinct()[:3]
    )
    if investigations:
        raise ValidationError(
            _("This host is placed in investigations: %(titles)s. Remove it from them first.")
            % {"titles": "; ".join(title[:60] for title in investigations)}
        )
    if host.jumped_hosts.exists():
        raise ValidationError(_("Other hosts use this host as their jump host."))
    # Evidence names the host it came from (a protected key): it outlives the inventory.
    if host.targets.exists():
        raise ValidationError(
            _("Evidence was collected from this host; it stays in the inventory with it.")
        )
    host.delete()


@transaction.atomic
def member_add(
    *, investigation: Investigation, user, host: Host, side_key: str, role: str
) -> EnvironmentMember:
    errors = {}
    if host.team_id != investigation.team_id:
        errors["host"] = _("Choose a host of the investigation's team.")
    side = investigation.sides.filter(key=side_key).first()
    if side is None:
        errors["side"] = _("Choose side a or b.")
    if role not in HostRole.values:
        errors["role"] = _("Choose one of: %(choices)s.") % {"choices": ", ".join(HostRole.values)}
    if not errors and EnvironmentMember.objects.filter(side=side, host=host, role=role).exists():
        errors["host"] = _("This host already has this role on this side.")
    if errors:
        raise ValidationError(errors)
    member = EnvironmentMember.objects.create(
        investigation=investigation, side=side, host=host, role=role
    )
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.ENVIRONMENT,
        summary=Phrase(
            gettext_noop("Placed %(host)s on side %(side)s (%(label)s) as %(role)s"),
            host=host.name,
            side=side.key.upper(),
            label=side.label,
            role=Phrase(ROLE_IN_TEXT[member.role]),
        ),
        author=user,
        details={"host": host.pk, "side": side.key, "role": role, "added": True},
    )
    checklist_refresh(investigation=investigation, keys=placement_steps())
    return member


@transaction.atomic
def member_remove(*, member: EnvironmentMember, user) -> None:
    side, host = member.side, member.host
    timeline_event_log(
        investigation=member.investigation,
        kind=EventKind.ENVIRONMENT,
        summary=Phrase(
            gettext_noop("Removed %(host)s (%(role)s) from side %(side)s (%(label)s)"),
            host=host.name,
            role=Phrase(ROLE_IN_TEXT[member.role]),
            side=side.key.upper(),
            label=side.label,
        ),
        author=user,
        details={"host": host.pk, "side": side.key, "role": member.role, "added": False},
    )
    investigation = member.investigation
    member.delete()
    checklist_refresh(investigation=investigation, keys=placement_steps())
