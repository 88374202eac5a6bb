from datetime import datetime

from django.core.exceptions import ValidationError
from django.utils.translation import gettext as _
from ninja import Field, Router, Schema, Status

from investigations.access import credential_for_user, host_for_user, team_for_user
from investigations.api.schemas import (
    CredentialIn,
    CredentialOut,
    ErrorOut,
    HostIn,
    HostOut,
    HostPatch,
    Id,
    Text,
    one_of,
    reject_nulls,
)
from investigations.choices import Role, ScanStatus
from investigations.selectors import (
    credential_in_team,
    credentials_for_user,
    host_in_team,
    hosts_for_user,
)
from investigations.selectors.inventory import host_key_scan_state
from investigations.services.hostkeys import host_key_scan_request, host_key_trust
from investigations.services.inventory import (
    credential_create,
    credential_delete,
    host_create,
    host_delete,
    host_update,
)

router = Router(tags=["inventory"])
ERRORS = {400: ErrorOut, 401: ErrorOut, 403: ErrorOut, 404: ErrorOut, 422: ErrorOut}


@router.get("/credentials", response=list[CredentialOut])
def credentials_list(request, team: Id | None = None):
    return credentials_for_user(user=request.user, team_id=team or None)


@router.post("/credentials", response={201: CredentialOut, **ERRORS})
def credentials_create(request, payload: CredentialIn):
    """Store an SSH private key, encrypted. The response names its fingerprint, never the key."""
    team = team_for_user(request.user, payload.team, Role.RESPONDER)
    credential = credential_create(
        team=team,
        user=request.user,
        name=payload.name,
        private_key=payload.private_key,
        passphrase=payload.passphrase,
    )
    return Status(201, credential)


@router.delete("/credentials/{credential_id}", response={204: None, **ERRORS})
def credentials_delete(request, credential_id: Id):
    credential_delete(credential=credential_for_user(request.user, credential_id, Role.RESPONDER))
    return Status(204, None)


def _related(field: str, pk: int | None, team_id: int):
    """A credential or jump host of the same team by id, or None for none."""
    if pk is None:
        return None
    if field == "credential":
        obj = credential_in_team(team_id=team_id, credential_id=pk)
    else:
        obj = host_in_team(team_id=team_id, host_id=pk)
    if obj is None:
        missing = {
            "credential": _("No such credential in this team."),
            "jump_host": _("No such jump host in this team."),
        }
        raise ValidationError({field: missing[field]})
    return obj


@router.get("/hosts", response=list[HostOut])
def hosts_list(request, team: Id | None = None):
    return hosts_for_user(user=request.user, team_id=team or None)


@router.post("/hosts", response={201: HostOut, **ERRORS})
def hosts_create(request, payload: HostIn):
    team = team_for_user(request.user, payload.team, Role.RESPONDER)
    host = host_create(
        team=team,
        name=payload.name,
        address=payload.address,
        port=payload.port,
        username=payload.username,
        credential=_related("credential", payload.credential, team.pk),
        jump_host=_related("jump_host", payload.jump_host, team.pk),
        transport=payload.transport,
    )
    return Status(201, host)


@router.get("/hosts/{host_id}", response={200: HostOut, **ERRORS})
def hosts_get(request, host_id: Id):
    return host_for_user(request.user, host_id)


@router.patch("/hosts/{host_id}", response={200: HostOut, **ERRORS})
def hosts_patch(request, host_id: Id, payload: HostPatch):
    host = host_for_user(request.user, host_id, Role.RESPONDER)
    fields = payload.dict(exclude_unset=True)
    if "credential" in fields:
        fields["credential"] = _related("credential", fields["credential"], host.team_id)
    if "jump_host" in fields:
        fields["jump_host"] = _related("jump_host", fields["jump_host"], host.team_id)
    reject_nulls(fields, ["name", "address", "port", "username", "transport"])
    return host_update(host=host, **fields)


@router.delete("/hosts/{host_id}", response={204: None, **ERRORS})
def hosts_delete(request, host_id: Id):
    host_delete(host=host_for_user(request.user, host_id, Role.RESPONDER))
    return Status(204, None)


class HostKeyTrustIn(Schema):
    fingerprint: Text


class HostKeyTrustedOut(Schema):
    key_type: str = Field(alias="host_key_type")
    fingerprint: str = Field(alias="host_key_fingerprint")
    trusted_at: datetime = Field(alias="host_key_trusted_at")


class HostKeyScanOut(Schema):
    status: one_of(ScanStatus) = Field(description="scanning, done or failed ('' before any scan)")
    key_type: str | None = Field(description="what the host presented, once done")
    fingerprint: str | None
    scanned_at: datetime | None
    requested_at: datetime | None
    error: str = Field(description="why the scan failed, in words a person can act on")


@router.post("/hosts/{host_id}/host-key/scan", response={202: HostKeyScanOut, **ERRORS})
def hosts_key_scan(request, host_id: Id):
    """Scan the key the host presents, in a worker: poll `GET` on the same path until
    `status` is done (then trust it) or failed (`error` says why). 400: the host cannot be
    scanned (the local transport, a jump host without a credential)."""
    host = host_for_user(request.user, host_id, Role.RESPONDER)
    host = host_key_scan_request(host=host, user=request.user)
    return Status(202, host_key_scan_state(host=host))


@router.get("/hosts/{host_id}/host-key/scan", response={200: HostKeyScanOut, **ERRORS})
def hosts_key_scan_get(request, host_id: Id):
    """The last scan: its status, the key it saw, or why it failed."""
    host = host_for_user(request.user, host_id)
    return host_key_scan_state(host=host)


@router.post("/hosts/{host_id}/host-key/trust", response={200: HostKeyTrustedOut, **ERRORS})
def hosts_key_trust(request, host_id: Id, payload: HostKeyTrustIn):
    """Pin the scanned key: send the fingerprint you compared with the host's own."""
    host = host_for_user(request.user, host_id, Role.RESPONDER)
    return host_key_trust(host=host, user=request.user, fingerprint=payload.fingerprint)
