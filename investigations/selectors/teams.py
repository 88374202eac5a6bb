"""Reads of teams, their members and their users."""

from collections.abc import Iterable

from axes.models import AccessAttempt
from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser
from django.db.models import QuerySet, Sum
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


def teams_for_user(*, user: AbstractBaseUser) -> QuerySet[Team]:
    """The user's teams, by name (the rows only)."""
    return Team.objects.filter(memberships__user=user).order_by("name")


def teams_with_role(*, user: AbstractBaseUser, roles: Iterable[str]) -> QuerySet[Team]:
    """The teams where the user holds one of these roles, by name (the rows only)."""
    # One filter() call, so that user and role are conditions on the same membership row.
    return Team.objects.filter(memberships__user=user, memberships__role__in=roles).order_by("name")


def memberships_for_user(*, user: AbstractBaseUser) -> QuerySet[Membership]:
    """The user's memberships with their team loaded, by team name."""
    return Membership.objects.filter(user=user).select_related("team").order_by("team__name")


def team_members(*, team: Team) -> QuerySet[Membership]:
    """The team's memberships with their user loaded, by user name."""
    return team.memberships.select_related("user").order_by("user__username")


def membership_get(*, team: Team, membership_id: int) -> Membership | None:
    """The team's membership with this id, with team and user loaded, or None."""
    return team.memberships.select_related("team", "user").filter(pk=membership_id).first()


def locked_out_usernames(*, usernames) -> set[str]:
    """Which of these users cannot sign in now: too many failed sign-ins (django-axes)."""
    # As django-axes counts them: a user's failures from every address, while they last.
    return set(
        AccessAttempt.objects.filter(
            username__in=list(usernames),
            attempt_time__gte=timezone.now() - settings.AXES_COOLOFF_TIME,
        )
        .values("username")
        .annotate(failures=Sum("failures_since_start"))
        .filter(failures__gte=settings.AXES_FAILURE_LIMIT)
        .values_list("username", flat=True)
    )
