"""Reads of teams, their members and their users."""

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Max, QuerySet, Sum
from django.utils import timezone

from investigations.models import Membership, Team


def team_users(*, team_id: int) -> QuerySet:
    """The users of a team, by name: who may lead an investigation or own a checklist item."""
    return get_user_model().objects.filter(memberships__team_id=team_id).order_by("username")


def users_of_teams(*, teams: QuerySet[Team]) -> QuerySet:
    """The users of any of these teams, each once, by name (the rows only)."""
    return (
        get_user_model().objects.filter(memberships__team__in=teams).distinct().order_by("username")
    )


def team_member_named(*, team_id: int, username: str) -> AbstractBaseUser | None:
    """The member of the team with this user name, or None (one query)."""
    return get_user_model().objects.filter(username=username, memberships__team_id=team_id).first()


def of_member(
    rows: QuerySet, user: AbstractBaseUser, *, path: str = "team", roles: Iterable[str] = ()
) -> QuerySet:
    """The rows that belong to a team of the user's (where the user holds one of `roles`, if
    given): the one membership filter of every read. `path` leads from a row to its team
    ("investigation__team"; "" for teams themselves). A user has one membership a team, so
    no row comes twice."""
    memberships = f"{path}__memberships" if path else "memberships"
    conditions = {f"{memberships}__user": user}
    if roles:
        # In the same filter() call, so that user and role are one membership row's.
        conditions[f"{memberships}__role__in"] = list(roles)
    return rows.filter(**conditions)


def teams_for_user(*, user: AbstractBaseUser) -> QuerySet[Team]:
    """The user's teams, by name (the rows only)."""
    return of_member(Team.objects.all(), user, path="").order_by("name")


def teams_with_role(*, user: AbstractBaseUser, roles: Iterable[str]) -> QuerySet[Team]:
    """The teams where the user holds one of these roles, by name (the rows only)."""
    return of_member(Team.objects.all(), user, path="", roles=roles).order_by("name")


def memberships_for_user(*, user: AbstractBaseUser) -> QuerySet[Membership]:
    """The user's memberships with their team loaded, by team name."""
    return Membership.objects.filter(user=user).select_related("team").order_by("team__name")


def team_members(*, team: Team) -> QuerySet[Membership]:
    """The team's memberships with their user loaded, by user name."""
    return team.memberships.select_related("user").order_by("user__username")


def membership_get(*, team: Team, membership_id: int) -> Membership | None:
    """The team's membership with this id, with team and user loaded, or None."""
    return team.memberships.select_related("team", "user").filter(pk=membership_id).first()


@dataclass(frozen=True)
class SignInLock:
    """A user name refused at one address: too many failed sign-ins from there."""

    username: str
    ip_address: str
    failures: int
    since: datetime  # the failure that reached the limit (refused tries are not counted)
    until: datetime


def sign_in_locks(*, usernames: Iterable[str]) -> dict[str, list[SignInLock]]:
    """The locks of these user names now, by name: each address a name is locked at, since
    when and after how many failures (django-axes' records, counted as it counts them)."""
    rows = (
        AccessAttempt.objects.filter(
            username__in=list(usernames),
            attempt_time__gte=timezone.now() - settings.AXES_COOLOFF_TIME,
        )
        .values("username", "ip_address")
        .annotate(failures=Sum("failures_since_start"), since=Max("attempt_time"))
        .filter(failures__gte=settings.AXES_FAILURE_LIMIT)
        .order_by("username", "-since")
    )
    locks: dict[str, list[SignInLock]] = {}
    for row in rows:
        locks.setdefault(row["username"], []).append(
            SignInLock(
                username=row["username"],
                ip_address=row["ip_address"] or "",
                failures=row["failures"],
                since=row["since"],
                until=row["since"] + settings.AXES_COOLOFF_TIME,
            )
        )
    return locks
