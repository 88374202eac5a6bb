"""Reads of the inventory (hosts, credentials) and of hosts placed on an investigation's
sides."""

from dataclasses import dataclass
from itertools import zip_longest

from django.conf import settings
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet
from django.utils.translation import gettext_noop

from collectors.phrase import Phrase
from investigations.choices import HostRole, ScanStatus, SideKey
from investigations.jobs import JobKind, read_job, register
from investigations.models import Credential, EnvironmentMember, Host, Investigation, Team
from investigations.phrases import stored_text
from investigations.selectors.teams import of_member


def hosts_for_user(
    *, user: AbstractBaseUser, team: Team | None = None, team_id: int | None = None
) -> QuerySet[Host]:
    """The hosts of the user's teams (of one team, if given), with team, credential and jump
    host loaded."""
    hosts = of_member(Host.objects.all(), user).select_related(
        "team", "credential", "jump_host", "job"
    )
    if team is not None:
        hosts = hosts.filter(team=team)
    if team_id is not None:
        hosts = hosts.filter(team_id=team_id)
    return hosts


def credentials_for_user(
    *, user: AbstractBaseUser, team: Team | None = None, team_id: int | None = None
) -> QuerySet[Credential]:
    """The credentials of the user's teams (of one team, if given), with team and creator
    loaded."""
    credentials = of_member(Credential.objects.all(), user).select_related("team", "created_by")
    if team is not None:
        credentials = credentials.filter(team=team)
    if team_id is not None:
        credentials = credentials.filter(team_id=team_id)
    return credentials


def credentials_in_teams(
    *, teams: QuerySet[Team], team: Team | None = None
) -> QuerySet[Credential]:
    """The credentials of these teams (of one of them, if given), with team loaded: what a
    host form offers."""
    credentials = Credential.objects.filter(team__in=teams).select_related("team")
    return credentials.filter(team=team) if team is not None else credentials


def jump_hosts_in_teams(
    *, teams: QuerySet[Team], team: Team | None = None, excluding: Host | None = None
) -> QuerySet[Host]:
    """The hosts of these teams (of one of them, if given; never `excluding`, a host cannot
    jump through itself), with team loaded: what a host form offers as jump hosts."""
    hosts = Host.objects.filter(team__in=teams).select_related("team")
    if team is not None:
        hosts = hosts.filter(team=team)
    return hosts.exclude(pk=excluding.pk) if excluding is not None else hosts


def credential_in_team(*, team_id: int, credential_id: int) -> Credential | None:
    """The team's credential with this id, or None (the row only)."""
    return Credential.objects.filter(pk=credential_id, team_id=team_id).first()


def host_in_team(*, team_id: int, host_id: int) -> Host | None:
    """The team's host with this id, or None (the row only)."""
    return Host.objects.filter(pk=host_id, team_id=team_id).first()


def hosts_in_team(*, team_id: int, host_ids: list[int]) -> list[Host]:
    """The team's hosts among these ids (the rows only); ids of other teams' hosts are
    left out, so a shorter list means some were not the team's."""
    return list(Host.objects.filter(pk__in=host_ids, team_id=team_id))


def host_placements(*, host: Host) -> QuerySet[EnvironmentMember]:
    """Where the host is placed: its memberships of investigations' sides, with investigation
    and side loaded."""
    return host.placements.select_related("investigation", "side")


def environment_members(*, investigation: Investigation) -> QuerySet[EnvironmentMember]:
    """The hosts placed on the investigation's sides, with host and side loaded."""
    return investigation.members.select_related("host", "side")


def member_get(*, investigation: Investigation, member_id: int) -> EnvironmentMember | None:
    """The investigation's placed host with this id, with host and side loaded, or None."""
    return environment_members(investigation=investigation).filter(pk=member_id).first()


@dataclass
class HostPair:
    role: str
    role_label: str
    a: EnvironmentMember | None
    b: EnvironmentMember | None

    @property
    def members(self) -> list[EnvironmentMember | None]:
        return [self.a, self.b]


def host_pairs(*, investigation: Investigation) -> list[HostPair]:
    """Hosts of the same role on both sides, side by side (in name order within a role), with
    host and side loaded."""
    members = EnvironmentMember.objects.filter(investigation=investigation).select_related(
        "host", "side"
    )
    by_role: dict[str, dict[str, list[EnvironmentMember]]] = {}
    for member in members:
        by_role.setdefault(member.role, {SideKey.A: [], SideKey.B: []})[member.side.key].append(
            member
        )
    pairs = []
    for role, label in HostRole.choices:
        sides = by_role.get(role)
        if not sides:
            continue
        for a, b in zip_longest(sides[SideKey.A], sides[SideKey.B]):
            pairs.append(HostPair(role, label, a, b))
    return pairs


# A scan a worker never finished (none runs, or it was killed) reads as failed so.
SCAN_OVERDUE = Phrase(
    gettext_noop("Gave up: no worker finished the scan in time (are the workers running?).")
)


# A scan still "scanning" this long past its time limit reads as failed, and the sweep
# fails it so.
SCAN_GRACE_SECONDS = 30


SCAN_JOB = register(
    JobKind("host_key_scan", overdue={ScanStatus.SCANNING.value: SCAN_OVERDUE.template})
)


def scan_seconds() -> int:
    """How long a scan may take: connecting to a jump host, then to the host."""
    return 2 * settings.SSH_CONNECT_TIMEOUT + 10


def host_key_scan_state(*, host: Host) -> dict:
    """The host's last scan as a person reads it: its status (a scan still "scanning" past
    its deadline reads as failed: no worker finished it), the key it saw, its error."""
    job = read_job(host.job, SCAN_JOB)
    status = job.status if job is not None else ScanStatus.NONE
    error = stored_text(job, "error") if job is not None else ""
    done = status == ScanStatus.DONE or (not status and host.scanned_key_fingerprint)
    return {
        "status": ScanStatus.DONE.value if done else status,
        "key_type": host.scanned_key_type or None if done else None,
        "fingerprint": host.scanned_key_fingerprint or None if done else None,
        "scanned_at": host.scanned_at if done else None,
        "requested_at": job.created_at if job is not None else None,
        "error": error if status == ScanStatus.FAILED else "",
    }
