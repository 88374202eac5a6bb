"""selectors.of_member: the one membership filter every read of a team's rows goes through."""

from investigations.choices import Role
from investigations.models import ChecklistItem, Investigation, Team
from investigations.selectors import of_member
from investigations.services.investigations import investigation_create


def test_it_keeps_the_rows_of_the_users_teams_only(personas):
    investigation_create(
        team=Team.objects.get(name="Another team"),
        user=personas.outsider,
        title="Someone else's case",
        side_a_label="a",
        side_b_label="b",
    )

    mine = of_member(Investigation.objects.all(), personas.viewer)
    theirs = of_member(Investigation.objects.all(), personas.outsider)

    assert list(mine) == [personas.investigation]
    assert [i.title for i in theirs] == ["Someone else's case"]


def test_it_follows_a_path_to_the_team_and_a_team_itself(personas):
    path = "investigation__team"
    items = of_member(ChecklistItem.objects.all(), personas.member, path=path)
    outsiders = of_member(ChecklistItem.objects.all(), personas.outsider, path=path)
    teams = of_member(Team.objects.all(), personas.member, path="")

    assert items.count() == personas.investigation.checklist.count() > 0
    assert not outsiders.exists()
    assert list(teams) == [personas.team]


def test_roles_are_conditions_on_the_same_membership(personas):
    """The lead of one team who is a viewer of another leads only the first."""
    other = Team.objects.get(name="Another team")
    other.memberships.create(user=personas.lead, role=Role.VIEWER)

    led = of_member(Team.objects.all(), personas.lead, path="", roles=[Role.LEAD])
    viewed = of_member(Team.objects.all(), personas.lead, path="", roles=[Role.VIEWER])

    assert list(led) == [personas.team]
    assert list(viewed) == [other]
