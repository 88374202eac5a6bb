"""The services: every write and the rules it keeps, called directly with real models."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied, ValidationError
from django.utils import timezone

from investigations import selectors
from investigations.choices import (
    STATUS_ORDER,
    ActionKind,
    EventKind,
    HostRole,
    Role,
    Severity,
    SideKind,
    Status,
    allowed_status_moves,
)
from investigations.models import (
    Credential,
    EnvironmentMember,
    Host,
    Investigation,
    Membership,
    Tag,
    Team,
    TimelineEvent,
)
from investigations.services.inventory import (
    credential_create,
    credential_delete,
    host_create,
    host_delete,
    host_update,
    member_add,
    member_remove,
)
from investigations.services.investigations import (
    investigation_create,
    investigation_set_status,
    investigation_update,
    side_update,
)
from investigations.services.teams import (
    membership_add,
    membership_remove,
    membership_set_role,
    team_create,
    team_set_webhook,
)
from investigations.services.timeline import timeline_entry_add
from investigations.vault import unseal
from tests.conftest import fresh, make_user

pytestmark = pytest.mark.django_db


def errors_of(excinfo) -> dict:
    return excinfo.value.message_dict


def events(investigation, kind=None):
    found = TimelineEvent.objects.filter(investigation=investigation)
    return list(found.filter(kind=kind) if kind else found)


def ago(**delta):
    return timezone.now() - timedelta(**delta)


def set_status_directly(investigation, status):
    Investigation.objects.filter(pk=investigation.pk).update(status=status)


def a_host(team, name="web-1", **fields):
    values = {"address": "10.0.0.1", "port": 22, "username": "perf"}
    values.update(fields)
    return host_create(team=team, name=name, **values)


# --- investigation_create ------------------------------------------------------------------


def test_creating_an_investigation_makes_both_sides(personas):
    investigation = investigation_create(
        team=personas.team,
        user=personas.member,
        title="TPS halves in containers",
        side_a_label="containers",
        side_a_kind=SideKind.CONTAINER,
        side_b_label="VMs",
        side_b_kind=SideKind.VM,
    )

    sides = list(investigation.sides.order_by("key").values_list("key", "label", "kind"))
    assert sides == [("a", "containers", SideKind.CONTAINER), ("b", "VMs", SideKind.VM)]


def test_both_sides_exist_even_when_no_label_is_given(personas):
    investigation = investigation_create(team=personas.team, user=personas.member, title="t")

    assert list(investigation.sides.values_list("key", "label")) == [("a", "A"), ("b", "B")]


def test_the_creator_becomes_the_lead_by_default(personas):
    investigation = investigation_create(team=personas.team, user=personas.member, title="t")

    assert fresh(investigation).lead == personas.member
    assert fresh(investigation).created_by == personas.member


def test_a_chosen_lead_is_kept(personas):
    investigation = investigation_create(
        team=personas.team, user=personas.member, title="t", lead=personas.viewer
    )

    assert fresh(investigation).lead == personas.viewer


def test_an_explicit_no_lead_is_kept(personas):
    investigation = investigation_create(
        team=personas.team, user=personas.member, title="t", lead=None
    )

    assert fresh(investigation).lead is None


def test_the_lead_must_be_a_member_of_the_team(personas):
    with pytest.raises(ValidationError) as excinfo:
        investigation_create(
            team=personas.team, user=personas.member, title="t", lead=personas.outsider
        )

    assert "lead" in errors_of(excinfo)
    assert not Investigation.objects.filter(title="t").exists()


def test_tags_are_normalised_to_lower_case_and_unique(personas):
    investigation = investigation_create(
        team=personas.team,
        user=personas.member,
        title="t",
        tags=" CPU, kernel ,cpu,,TLS ,  Cpu  ,Page   Cache",
    )

    assert sorted(investigation.tags.values_list("name", flat=True)) == [
        "cpu",
        "kernel",
        "page cache",
        "tls",
    ]
    assert Tag.objects.filter(name__iexact="cpu").count() == 1


def test_tags_may_be_given_as_a_list_and_are_shared_between_investigations(personas):
    first = investigation_create(team=personas.team, user=personas.member, title="1", tags=["Net"])
    second = investigation_create(
        team=personas.team, user=personas.member, title="2", tags=["NET", "net"]
    )

    assert list(first.tags.all()) == list(second.tags.all())
    assert Tag.objects.filter(name="net").count() == 1


def test_a_tag_of_more_than_64_characters_is_refused(personas):
    with pytest.raises(ValidationError) as excinfo:
        investigation_create(team=personas.team, user=personas.member, title="t", tags=["x" * 65])

    assert "tags" in errors_of(excinfo)


def test_more_than_20_tags_are_refused(personas):
    with pytest.raises(ValidationError) as excinfo:
        investigation_create(
            team=personas.team, user=personas.member, title="t", tags=[f"t{i}" for i in range(21)]
        )

    assert "tags" in errors_of(excinfo)


def test_opening_an_investigation_logs_a_status_event(personas):
    investigation = investigation_create(
        team=personas.team, user=personas.member, title="Disk latency on B"
    )

    [event] = events(investigation)
    assert event.kind == EventKind.STATUS
    assert event.summary == "Investigation opened: Disk latency on B"
    assert event.details == {"old": None, "new": Status.OPEN}
    assert event.author == personas.member
    assert fresh(investigation).status == Status.OPEN


def test_an_investigation_needs_a_title(personas):
    with pytest.raises(ValidationError) as excinfo:
        investigation_create(team=personas.team, user=personas.member, title="   ")

    assert "title" in errors_of(excinfo)


def test_an_empty_side_label_is_reported_on_that_side(personas):
    with pytest.raises(ValidationError) as excinfo:
        investigation_create(team=personas.team, user=personas.member, title="t", side_b_label=" ")

    assert list(errors_of(excinfo)) == ["side_b_label"]
    assert not Investigation.objects.filter(title="t").exists()


def test_symptom_values_must_be_finite(personas):
    with pytest.raises(ValidationError) as excinfo:
        investigation_create(
            team=personas.team,
            user=personas.member,
            title="t",
            symptom_value_a=float("nan"),
            symptom_value_b=float("inf"),
        )

    assert {"symptom_value_a", "symptom_value_b"} <= set(errors_of(excinfo))


def test_unknown_fields_are_a_programming_error(personas):
    with pytest.raises(TypeError):
        investigation_create(team=personas.team, user=personas.member, title="t", status="closed")


# --- investigation_update ------------------------------------------------------------------


def test_an_update_logs_one_change_event_with_every_old_and_new_value(personas):
    investigation = personas.investigation
    started = ago(hours=3).replace(microsecond=0)

    investigation_update(
        investigation=investigation,
        user=personas.member,
        title="Checkout p99 tripled",
        severity=Severity.SEV1,
        started_at=started,
        lead=personas.member,
        symptom_value_a=1445.0,
        tags=["latency"],
    )

    [event] = events(investigation, EventKind.CHANGE)
    assert event.author == personas.member
    assert event.details["changes"] == {
        "title": ["Checkout p99 doubled on the new cloud", "Checkout p99 tripled"],
        "severity": [Severity.SEV3, Severity.SEV1],
        "started_at": [None, started.isoformat()],
        "lead": ["lena", "max"],
        "symptom_value_a": [None, 1445.0],
        "tags": [[], ["latency"]],
    }
    saved = fresh(investigation)
    assert (saved.title, saved.severity, saved.started_at, saved.lead) == (
        "Checkout p99 tripled",
        Severity.SEV1,
        started,
        personas.member,
    )


def test_an_update_names_only_the_fields_that_changed(personas):
    investigation = personas.investigation

    investigation_update(
        investigation=investigation,
        user=personas.member,
        title=investigation.title,
        severity=Severity.SEV2,
        notes="",
    )

    [event] = events(investigation, EventKind.CHANGE)
    assert list(event.details["changes"]) == ["severity"]


def test_an_update_that_changes_nothing_logs_nothing(personas):
    investigation = personas.investigation
    before = fresh(investigation).updated_at

    investigation_update(
        investigation=investigation,
        user=personas.member,
        title=investigation.title,
        severity=investigation.severity,
        lead=investigation.lead,
        tags=[],
    )

    assert events(investigation, EventKind.CHANGE) == []
    assert fresh(investigation).updated_at == before


def test_a_refused_update_changes_nothing(personas):
    investigation = personas.investigation

    with pytest.raises(ValidationError):
        investigation_update(
            investigation=investigation, user=personas.member, title="", severity=Severity.SEV1
        )

    assert fresh(investigation).severity == Severity.SEV3
    assert events(investigation, EventKind.CHANGE) == []


def test_status_is_not_editable_through_update(personas):
    with pytest.raises(TypeError):
        investigation_update(
            investigation=personas.investigation, user=personas.member, status=Status.CLOSED
        )


# --- the order of the four times -----------------------------------------------------------

TIME_PAIRS = [
    ("started_at", "detected_at", "Detected cannot be before started"),
    ("detected_at", "mitigated_at", "Mitigated cannot be before detected"),
    ("mitigated_at", "resolved_at", "Resolved cannot be before mitigated"),
]


@pytest.mark.parametrize("earlier, later, message", TIME_PAIRS)
def test_a_time_before_the_one_it_follows_is_refused_on_the_later_field(
    personas, earlier, later, message
):
    with pytest.raises(ValidationError) as excinfo:
        investigation_update(
            investigation=personas.investigation,
            user=personas.member,
            **{earlier: ago(hours=1), later: ago(hours=2)},
        )

    errors = errors_of(excinfo)
    assert list(errors) == [later]
    assert errors[later][0].startswith(message)


@pytest.mark.parametrize("earlier, later, message", TIME_PAIRS)
def test_the_same_time_for_two_steps_is_allowed(personas, earlier, later, message):
    moment = ago(hours=1)

    investigation = investigation_update(
        investigation=personas.investigation,
        user=personas.member,
        **{earlier: moment, later: moment},
    )

    assert getattr(investigation, later) == getattr(investigation, earlier) == moment


def test_gaps_in_the_times_are_allowed(personas):
    investigation = investigation_update(
        investigation=personas.investigation,
        user=personas.member,
        started_at=ago(days=2),
        resolved_at=ago(days=1),
    )

    assert investigation.detected_at is None and investigation.mitigated_at is None


def test_across_a_gap_a_time_is_compared_with_the_nearest_earlier_one_set(personas):
    with pytest.raises(ValidationError) as excinfo:
        investigation_update(
            investigation=personas.investigation,
            user=personas.member,
            started_at=ago(days=1),
            resolved_at=ago(days=2),
        )

    errors = errors_of(excinfo)
    assert list(errors) == ["resolved_at"]
    assert "Resolved cannot be before started" in errors["resolved_at"][0]


def test_the_time_order_is_checked_when_an_investigation_is_opened(personas):
    with pytest.raises(ValidationError) as excinfo:
        investigation_create(
            team=personas.team,
            user=personas.member,
            title="t",
            detected_at=ago(hours=5),
            mitigated_at=ago(hours=6),
        )

    assert list(errors_of(excinfo)) == ["mitigated_at"]


@pytest.mark.parametrize("field", ["started_at", "detected_at", "mitigated_at", "resolved_at"])
def test_a_time_in_the_future_is_refused(personas, field):
    with pytest.raises(ValidationError) as excinfo:
        investigation_update(
            investigation=personas.investigation,
            user=personas.member,
            **{field: timezone.now() + timedelta(hours=1)},
        )

    assert "lies in the future" in errors_of(excinfo)[field][0]


# --- investigation_set_status --------------------------------------------------------------

ALL_MOVES = [(old, new) for old in STATUS_ORDER for new in STATUS_ORDER]


@pytest.mark.parametrize("old, new", ALL_MOVES)
def test_only_the_moves_allowed_by_the_lifecycle_are_made(personas, old, new):
    set_status_directly(personas.investigation, old)

    if new == old:
        with pytest.raises(ValidationError) as excinfo:
            investigation_set_status(
                investigation=personas.investigation, user=personas.lead, status=new
            )
        assert "already" in errors_of(excinfo)["status"][0]
        assert fresh(personas.investigation).status == old
    elif new in allowed_status_moves(old):
        investigation_set_status(
            investigation=personas.investigation,
            user=personas.lead,
            status=new,
            reason="A drill." if new == Status.CLOSED else "",
        )
        assert fresh(personas.investigation).status == new
    else:
        with pytest.raises(ValidationError) as excinfo:
            investigation_set_status(
                investigation=personas.investigation, user=personas.lead, status=new
            )
        assert errors_of(excinfo)["status"][0].startswith("Cannot move from")
        assert fresh(personas.investigation).status == old


def test_the_lifecycle_goes_forward_or_back_to_open():
    assert allowed_status_moves(Status.OPEN) == [Status.MITIGATED, Status.RESOLVED, Status.CLOSED]
    assert allowed_status_moves(Status.RESOLVED) == [Status.OPEN, Status.CLOSED]
    assert allowed_status_moves(Status.CLOSED) == [Status.OPEN]


def test_a_closed_investigation_can_be_reopened(personas):
    investigation_set_status(
        investigation=personas.investigation,
        user=personas.lead,
        status=Status.CLOSED,
        reason="A drill.",
    )

    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.OPEN
    )

    assert fresh(personas.investigation).status == Status.OPEN


def test_an_unknown_status_is_refused(personas):
    with pytest.raises(ValidationError) as excinfo:
        investigation_set_status(
            investigation=personas.investigation, user=personas.lead, status="on fire"
        )

    assert "Unknown status" in errors_of(excinfo)["status"][0]


@pytest.mark.parametrize("who", ["member", "viewer", "outsider"])
def test_only_a_lead_can_close(personas, who):
    with pytest.raises(PermissionDenied):
        investigation_set_status(
            investigation=personas.investigation,
            user=getattr(personas, who),
            status=Status.CLOSED,
        )

    assert fresh(personas.investigation).status == Status.OPEN
    assert events(personas.investigation, EventKind.STATUS)[-1].details["new"] == Status.OPEN


def test_a_lead_closes(personas):
    investigation_set_status(
        investigation=personas.investigation,
        user=personas.lead,
        status=Status.CLOSED,
        reason="The other side was retired.",
    )

    assert fresh(personas.investigation).status == Status.CLOSED
    assert events(personas.investigation, EventKind.STATUS)[-1].details["reason"] == (
        "The other side was retired."
    )


def test_mitigating_stamps_the_mitigated_time_when_none_was_recorded(personas):
    before = timezone.now()

    investigation = investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.MITIGATED
    )

    assert before <= fresh(investigation).mitigated_at <= timezone.now()
    assert fresh(investigation).resolved_at is None


def test_mitigating_keeps_a_recorded_mitigated_time(personas):
    recorded = ago(hours=4)
    investigation_update(
        investigation=personas.investigation, user=personas.member, mitigated_at=recorded
    )

    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.MITIGATED
    )

    assert fresh(personas.investigation).mitigated_at == recorded


@pytest.mark.parametrize("status", [Status.RESOLVED, Status.CLOSED])
def test_resolving_or_closing_stamps_the_resolved_time_when_none_was_recorded(personas, status):
    before = timezone.now()

    investigation_set_status(
        investigation=personas.investigation, user=personas.lead, status=status, reason="A drill."
    )

    saved = fresh(personas.investigation)
    assert before <= saved.resolved_at <= timezone.now()
    assert saved.mitigated_at is None


def test_resolving_keeps_a_recorded_resolved_time(personas):
    recorded = ago(hours=2)
    investigation_update(
        investigation=personas.investigation, user=personas.member, resolved_at=recorded
    )

    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.RESOLVED
    )

    assert fresh(personas.investigation).resolved_at == recorded


def test_a_status_change_logs_the_old_and_new_status(personas):
    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.MITIGATED
    )

    event = events(personas.investigation, EventKind.STATUS)[-1]
    assert event.details == {"old": Status.OPEN, "new": Status.MITIGATED}
    assert event.summary == "Status: Open → Mitigated"
    assert event.author == personas.member


def test_a_refused_status_change_logs_nothing(personas):
    with pytest.raises(ValidationError):
        investigation_set_status(
            investigation=personas.investigation, user=personas.lead, status=Status.OPEN
        )

    assert len(events(personas.investigation)) == 1


# --- side_update ---------------------------------------------------------------------------


def test_a_side_update_logs_the_changes(personas):
    side = personas.investigation.sides.get(key="a")

    side_update(side=side, user=personas.member, label="EKS", kind=SideKind.CONTAINER)

    assert (fresh(side).label, fresh(side).kind) == ("EKS", SideKind.CONTAINER)
    [event] = events(personas.investigation, EventKind.CHANGE)
    assert event.details == {
        "side": "a",
        "changes": {"label": ["new cloud", "EKS"], "kind": [SideKind.OTHER, SideKind.CONTAINER]},
    }
    assert event.summary == "Side A is now EKS (Container)"


def test_a_side_update_that_changes_nothing_logs_nothing(personas):
    side = personas.investigation.sides.get(key="b")

    side_update(side=side, user=personas.member, label="old cloud", kind=SideKind.OTHER)

    assert events(personas.investigation, EventKind.CHANGE) == []


@pytest.mark.parametrize(
    "label, kind, field", [("  ", SideKind.VM, "label"), ("VM", "mainframe", "kind")]
)
def test_a_side_needs_a_label_and_a_known_kind(personas, label, kind, field):
    side = personas.investigation.sides.get(key="a")

    with pytest.raises(ValidationError) as excinfo:
        side_update(side=side, user=personas.member, label=label, kind=kind)

    assert list(errors_of(excinfo)) == [field]
    assert fresh(side).label == "new cloud"


# --- timeline_entry_add --------------------------------------------------------------------


def test_a_note_is_added_now_by_its_author(personas):
    before = timezone.now()

    event = timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.NOTE,
        summary="perf shows 40% in memcpy",
    )

    event = fresh(event)
    assert (event.kind, event.action, event.author) == (EventKind.NOTE, "", personas.member)
    assert before <= event.occurred_at <= timezone.now()


def test_an_action_is_added_with_its_type(personas):
    event = timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.ACTION,
        action=ActionKind.SCALE_OUT,
        summary="Added two nodes",
    )

    assert fresh(event).action == ActionKind.SCALE_OUT


def test_an_action_needs_a_type(personas):
    with pytest.raises(ValidationError) as excinfo:
        timeline_entry_add(
            investigation=personas.investigation,
            user=personas.member,
            kind=EventKind.ACTION,
            summary="Did something",
        )

    assert "action" in errors_of(excinfo)


def test_a_note_has_no_action_type(personas):
    with pytest.raises(ValidationError) as excinfo:
        timeline_entry_add(
            investigation=personas.investigation,
            user=personas.member,
            kind=EventKind.NOTE,
            action=ActionKind.RESTART,
            summary="n",
        )

    assert "action" in errors_of(excinfo)


@pytest.mark.parametrize("kind", [EventKind.STATUS, EventKind.CHANGE, EventKind.ENVIRONMENT])
def test_people_write_only_notes_and_actions(personas, kind):
    with pytest.raises(ValidationError) as excinfo:
        timeline_entry_add(
            investigation=personas.investigation, user=personas.member, kind=kind, summary="s"
        )

    assert "kind" in errors_of(excinfo)


@pytest.mark.parametrize("summary", ["", "   \n  "])
def test_an_entry_needs_a_summary(personas, summary):
    with pytest.raises(ValidationError) as excinfo:
        timeline_entry_add(
            investigation=personas.investigation,
            user=personas.member,
            kind=EventKind.NOTE,
            summary=summary,
        )

    assert "summary" in errors_of(excinfo)
    assert len(events(personas.investigation)) == 1


def test_a_back_dated_entry_takes_its_place_in_time_order(personas):
    later = timeline_entry_add(
        investigation=personas.investigation, user=personas.member, kind=EventKind.NOTE, summary="2"
    )
    earlier = timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.NOTE,
        summary="1",
        occurred_at=ago(days=3),
    )

    timeline = list(selectors.timeline_events(investigation=personas.investigation))
    assert timeline.index(earlier) < timeline.index(later)
    assert timeline[0] == earlier


def test_a_naive_time_is_taken_in_the_current_time_zone(personas):
    naive = timezone.make_naive(ago(hours=1)).replace(microsecond=0)

    event = timeline_entry_add(
        investigation=personas.investigation,
        user=personas.member,
        kind=EventKind.NOTE,
        summary="n",
        occurred_at=naive,
    )

    assert fresh(event).occurred_at == timezone.make_aware(naive)


def test_an_entry_in_the_future_is_refused(personas):
    with pytest.raises(ValidationError) as excinfo:
        timeline_entry_add(
            investigation=personas.investigation,
            user=personas.member,
            kind=EventKind.NOTE,
            summary="n",
            occurred_at=timezone.now() + timedelta(hours=1),
        )

    assert "occurred_at" in errors_of(excinfo)


def test_the_timeline_version_changes_when_an_event_is_added(personas):
    before = selectors.timeline_version(investigation=personas.investigation)

    timeline_entry_add(
        investigation=personas.investigation, user=personas.member, kind=EventKind.NOTE, summary="n"
    )

    assert selectors.timeline_version(investigation=personas.investigation) != before


# --- teams and memberships -----------------------------------------------------------------


def test_a_new_team_has_its_creator_as_lead(db):
    user = make_user("creator")

    team = team_create(user=user, name="  Storage   team ")

    assert team.name == "Storage team"
    assert Membership.objects.get(team=team).role == Role.LEAD
    assert Membership.objects.get(team=team).user == user


@pytest.mark.parametrize("name", ["Payments SRE", "payments sre", " PAYMENTS  SRE "])
def test_team_names_are_unique_ignoring_case(personas, name):
    with pytest.raises(ValidationError) as excinfo:
        team_create(user=personas.member, name=name)

    assert "name" in errors_of(excinfo)
    assert Team.objects.filter(name__iexact="payments sre").count() == 1


@pytest.mark.parametrize("name", ["", "   ", "t" * 201])
def test_a_team_name_is_between_1_and_200_characters(db, name):
    with pytest.raises(ValidationError) as excinfo:
        team_create(user=make_user("u"), name=name)

    assert "name" in errors_of(excinfo)
    assert not Team.objects.exists()


def test_a_member_is_added_by_user_name(personas):
    newcomer = make_user("nina")

    membership = membership_add(team=personas.team, username=" nina ", role=Role.VIEWER)

    assert (membership.user, membership.role) == (newcomer, Role.VIEWER)


def test_adding_an_unknown_user_is_refused(personas):
    with pytest.raises(ValidationError) as excinfo:
        membership_add(team=personas.team, username="ghost", role=Role.VIEWER)

    assert errors_of(excinfo)["username"] == ["There is no user named 'ghost'."]


def test_adding_a_member_twice_is_refused(personas):
    with pytest.raises(ValidationError) as excinfo:
        membership_add(team=personas.team, username="max", role=Role.LEAD)

    assert "username" in errors_of(excinfo)
    assert Membership.objects.get(team=personas.team, user=personas.member).role == Role.RESPONDER


def test_an_unknown_role_is_refused(personas):
    make_user("nina")

    with pytest.raises(ValidationError) as excinfo:
        membership_add(team=personas.team, username="nina", role="owner")

    assert "role" in errors_of(excinfo)


def lead_membership(personas):
    return Membership.objects.get(team=personas.team, user=personas.lead)


@pytest.mark.parametrize("role", [Role.RESPONDER, Role.VIEWER])
def test_the_last_lead_cannot_be_demoted(personas, role):
    with pytest.raises(ValidationError) as excinfo:
        membership_set_role(membership=lead_membership(personas), role=role)

    assert "at least one lead" in errors_of(excinfo)["role"][0]
    assert lead_membership(personas).role == Role.LEAD


def test_the_last_lead_cannot_be_removed(personas):
    with pytest.raises(ValidationError):
        membership_remove(membership=lead_membership(personas))

    assert lead_membership(personas).role == Role.LEAD


def test_a_lead_can_step_down_once_another_lead_exists(personas):
    other = Membership.objects.get(team=personas.team, user=personas.member)
    membership_set_role(membership=other, role=Role.LEAD)

    membership_set_role(membership=lead_membership(personas), role=Role.VIEWER)

    assert lead_membership(personas).role == Role.VIEWER


def test_a_lead_can_leave_once_another_lead_exists(personas):
    membership_set_role(
        membership=Membership.objects.get(team=personas.team, user=personas.member), role=Role.LEAD
    )

    membership_remove(membership=lead_membership(personas))

    assert not Membership.objects.filter(team=personas.team, user=personas.lead).exists()


def test_a_member_who_is_not_a_lead_can_be_removed(personas):
    membership_remove(membership=Membership.objects.get(team=personas.team, user=personas.viewer))

    assert not Membership.objects.filter(team=personas.team, user=personas.viewer).exists()


def test_a_webhook_url_is_saved_and_can_be_cleared(personas):
    team_set_webhook(team=personas.team, webhook_url=" https://hooks.example.com/T1/B2 ")
    assert fresh(personas.team).webhook_url == "https://hooks.example.com/T1/B2"

    team_set_webhook(team=personas.team, webhook_url="")
    assert fresh(personas.team).webhook_url == ""


@pytest.mark.parametrize(
    "url", ["ftp://hooks.example.com/x", "https://", "hooks.example.com/x", "javascript:alert(1)"]
)
def test_a_webhook_url_must_be_http_or_https_with_a_host(personas, url):
    with pytest.raises(ValidationError) as excinfo:
        team_set_webhook(team=personas.team, webhook_url=url)

    assert "webhook_url" in errors_of(excinfo)
    assert fresh(personas.team).webhook_url == ""


# --- hosts ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "typed, stored",
    [
        (" Web-1.Example.COM. ", "web-1.example.com"),
        ("10.0.0.7", "10.0.0.7"),
        ("[2001:DB8:0:0::1]", "2001:db8::1"),
        ("2001:db8::1", "2001:db8::1"),
        ("localhost", "localhost"),
    ],
)
def test_a_host_address_is_normalised(personas, typed, stored):
    host = a_host(personas.team, address=typed)

    assert fresh(host).address == stored


@pytest.mark.parametrize(
    "address",
    ["", "web 1", "web-1;reboot", "$(reboot)", "-web", "10.0.0.256", "1.2.3", "a" * 64 + ".com"],
)
def test_an_address_that_is_not_a_host_name_or_ip_is_refused(personas, address):
    with pytest.raises(ValidationError) as excinfo:
        a_host(personas.team, address=address)

    assert "address" in errors_of(excinfo)
    assert not Host.objects.exists()


@pytest.mark.parametrize("username", ["", "root;reboot", "1root", "a b", "x" * 33])
def test_a_host_user_name_must_be_a_unix_user_name(personas, username):
    with pytest.raises(ValidationError) as excinfo:
        a_host(personas.team, username=username)

    assert "username" in errors_of(excinfo)


@pytest.mark.parametrize("port", [0, 65536, -22])
def test_a_host_port_must_be_a_tcp_port(personas, port):
    with pytest.raises(ValidationError) as excinfo:
        a_host(personas.team, port=port)

    assert "port" in errors_of(excinfo)


def test_host_names_are_unique_within_a_team_only(personas):
    a_host(personas.team, name="db-1")
    other_team = Team.objects.get(name="Another team")

    with pytest.raises(ValidationError) as excinfo:
        a_host(personas.team, name="  db-1 ")

    assert "name" in errors_of(excinfo)
    assert a_host(other_team, name="db-1").team == other_team


def test_renaming_a_host_to_a_taken_name_is_refused(personas):
    a_host(personas.team, name="db-1")
    second = a_host(personas.team, name="db-2")

    with pytest.raises(ValidationError) as excinfo:
        host_update(host=second, name="db-1")

    assert "name" in errors_of(excinfo)
    assert fresh(second).name == "db-2"


def test_a_host_keeps_its_own_name_when_updated(personas):
    host = a_host(personas.team, name="db-1")

    host_update(host=host, name="db-1", address="DB-1.internal", port=2222)

    assert (fresh(host).address, fresh(host).port) == ("db-1.internal", 2222)


def test_a_host_cannot_be_its_own_jump_host(personas):
    host = a_host(personas.team)

    with pytest.raises(ValidationError) as excinfo:
        host_update(host=host, jump_host=host)

    assert "loop" in errors_of(excinfo)["jump_host"][0]
    assert fresh(host).jump_host is None


def test_jump_hosts_may_not_form_a_loop(personas):
    bastion = a_host(personas.team, name="bastion")
    inner = a_host(personas.team, name="inner", jump_host=bastion)
    deepest = a_host(personas.team, name="deepest", jump_host=inner)

    with pytest.raises(ValidationError) as excinfo:
        host_update(host=bastion, jump_host=deepest)

    assert "loop" in errors_of(excinfo)["jump_host"][0]
    assert fresh(bastion).jump_host is None


def test_a_chain_of_jump_hosts_without_a_loop_is_allowed(personas):
    bastion = a_host(personas.team, name="bastion")
    inner = a_host(personas.team, name="inner", jump_host=bastion)

    deepest = a_host(personas.team, name="deepest", jump_host=inner)

    assert fresh(deepest).jump_host == inner


def test_a_jump_host_of_another_team_is_refused(personas):
    foreign = a_host(Team.objects.get(name="Another team"), name="their-bastion")

    with pytest.raises(ValidationError) as excinfo:
        a_host(personas.team, jump_host=foreign)

    assert "jump_host" in errors_of(excinfo)


def test_a_credential_of_another_team_is_refused(personas, make_key):
    other_team = Team.objects.get(name="Another team")
    foreign = credential_create(
        team=other_team, user=personas.outsider, name="theirs", private_key=make_key().text
    )

    with pytest.raises(ValidationError) as excinfo:
        a_host(personas.team, credential=foreign)

    assert "credential" in errors_of(excinfo)
    assert not Host.objects.filter(team=personas.team).exists()


def test_a_host_placed_in_an_investigation_cannot_be_deleted(personas):
    host = a_host(personas.team)
    member = member_add(
        investigation=personas.investigation,
        user=personas.member,
        host=host,
        side_key="a",
        role=HostRole.SERVICE,
    )

    with pytest.raises(ValidationError) as excinfo:
        host_delete(host=host)

    assert "Checkout p99 doubled" in excinfo.value.messages[0]
    assert Host.objects.filter(pk=host.pk).exists()

    member_remove(member=member, user=personas.member)
    host_delete(host=host)
    assert not Host.objects.filter(pk=host.pk).exists()


def test_a_jump_host_in_use_cannot_be_deleted(personas):
    bastion = a_host(personas.team, name="bastion")
    a_host(personas.team, name="inner", jump_host=bastion)

    with pytest.raises(ValidationError):
        host_delete(host=bastion)

    assert Host.objects.filter(pk=bastion.pk).exists()


# --- credentials ---------------------------------------------------------------------------


def test_a_credential_is_stored_encrypted(personas, make_key):
    key = make_key()

    credential = credential_create(
        team=personas.team, user=personas.member, name="perf key", private_key=key.text
    )

    stored = fresh(credential)
    assert stored.key_type == "ssh-ed25519"
    assert stored.fingerprint == key.fingerprint
    assert stored.created_by == personas.member
    assert "PRIVATE KEY" not in stored.encrypted_private_key
    for line in key.body_lines:
        assert line not in stored.encrypted_private_key
    assert unseal(stored.encrypted_private_key).strip() == key.text.strip()
    assert stored.encrypted_passphrase == ""


def test_a_credential_with_a_passphrase_keeps_it_encrypted(personas, make_key):
    key = make_key(passphrase="open sesame 42")

    credential = credential_create(
        team=personas.team,
        user=personas.member,
        name="locked",
        private_key=key.text,
        passphrase="open sesame 42",
    )

    stored = fresh(credential)
    assert stored.fingerprint == key.fingerprint
    assert "open sesame" not in stored.encrypted_passphrase
    assert unseal(stored.encrypted_passphrase) == "open sesame 42"
    assert unseal(stored.encrypted_private_key).strip() == key.text.strip()


def test_a_wrong_passphrase_is_reported_on_the_passphrase(personas, make_key):
    key = make_key(passphrase="right")

    with pytest.raises(ValidationError) as excinfo:
        credential_create(
            team=personas.team,
            user=personas.member,
            name="k",
            private_key=key.text,
            passphrase="wrong",
        )

    assert list(errors_of(excinfo)) == ["passphrase"]
    assert not Credential.objects.exists()


def test_an_encrypted_key_without_its_passphrase_is_refused(personas, make_key):
    key = make_key(passphrase="right")

    with pytest.raises(ValidationError) as excinfo:
        credential_create(team=personas.team, user=personas.member, name="k", private_key=key.text)

    assert "passphrase" in errors_of(excinfo)["passphrase"][0]


def test_a_public_key_is_refused(personas, make_key):
    key = make_key()

    with pytest.raises(ValidationError) as excinfo:
        credential_create(
            team=personas.team, user=personas.member, name="k", private_key=key.public
        )

    assert "public key" in errors_of(excinfo)["private_key"][0]


def test_a_truncated_key_is_refused(personas, make_key):
    key = make_key()
    lines = key.text.splitlines()

    with pytest.raises(ValidationError) as excinfo:
        credential_create(
            team=personas.team,
            user=personas.member,
            name="k",
            private_key="\n".join(lines[:2] + lines[-1:]),
        )

    assert "private_key" in errors_of(excinfo)


def test_credential_names_are_unique_within_a_team(personas, make_key):
    credential_create(
        team=personas.team, user=personas.member, name="k", private_key=make_key().text
    )

    with pytest.raises(ValidationError) as excinfo:
        credential_create(
            team=personas.team, user=personas.member, name=" k ", private_key=make_key().text
        )

    assert "name" in errors_of(excinfo)
    assert Credential.objects.count() == 1


def test_a_credential_used_by_a_host_cannot_be_deleted(personas, make_key):
    credential = credential_create(
        team=personas.team, user=personas.member, name="k", private_key=make_key().text
    )
    host = a_host(personas.team, name="web-9", credential=credential)

    with pytest.raises(ValidationError) as excinfo:
        credential_delete(credential=credential)

    assert "web-9" in excinfo.value.messages[0]
    assert Credential.objects.filter(pk=credential.pk).exists()

    host_update(host=host, credential=None)
    credential_delete(credential=credential)
    assert not Credential.objects.filter(pk=credential.pk).exists()


# --- hosts in investigations ---------------------------------------------------------------


def test_placing_a_host_logs_an_environment_event(personas):
    host = a_host(personas.team, name="pg-1")

    member = member_add(
        investigation=personas.investigation,
        user=personas.member,
        host=host,
        side_key="b",
        role=HostRole.DATABASE,
    )

    assert (member.side.key, member.role, member.host) == ("b", HostRole.DATABASE, host)
    [event] = events(personas.investigation, EventKind.ENVIRONMENT)
    assert event.summary == "Placed pg-1 on side B (old cloud) as database"
    assert event.details == {"host": host.pk, "side": "b", "role": "database", "added": True}
    assert event.author == personas.member


def test_removing_a_host_logs_an_environment_event(personas):
    host = a_host(personas.team, name="pg-1")
    member = member_add(
        investigation=personas.investigation,
        user=personas.member,
        host=host,
        side_key="a",
        role=HostRole.DATABASE,
    )

    member_remove(member=member, user=personas.lead)

    assert not EnvironmentMember.objects.exists()
    removal = events(personas.investigation, EventKind.ENVIRONMENT)[-1]
    assert removal.summary == "Removed pg-1 (database) from side A (new cloud)"
    assert removal.details == {"host": host.pk, "side": "a", "role": "database", "added": False}
    assert removal.author == personas.lead


def test_a_host_of_another_team_cannot_be_placed(personas):
    foreign = a_host(Team.objects.get(name="Another team"), name="theirs")

    with pytest.raises(ValidationError) as excinfo:
        member_add(
            investigation=personas.investigation,
            user=personas.member,
            host=foreign,
            side_key="a",
            role=HostRole.SERVICE,
        )

    assert "host" in errors_of(excinfo)
    assert events(personas.investigation, EventKind.ENVIRONMENT) == []


def test_a_host_is_placed_once_per_side_and_role(personas):
    host = a_host(personas.team)
    place = dict(investigation=personas.investigation, user=personas.member, host=host)
    member_add(**place, side_key="a", role=HostRole.SERVICE)

    with pytest.raises(ValidationError) as excinfo:
        member_add(**place, side_key="a", role=HostRole.SERVICE)

    assert "host" in errors_of(excinfo)
    member_add(**place, side_key="a", role=HostRole.CACHE)
    member_add(**place, side_key="b", role=HostRole.SERVICE)
    assert EnvironmentMember.objects.count() == 3


@pytest.mark.parametrize(
    "side_key, role, field", [("c", HostRole.SERVICE, "side"), ("a", "boss", "role")]
)
def test_a_placement_needs_a_real_side_and_role(personas, side_key, role, field):
    with pytest.raises(ValidationError) as excinfo:
        member_add(
            investigation=personas.investigation,
            user=personas.member,
            host=a_host(personas.team),
            side_key=side_key,
            role=role,
        )

    assert field in errors_of(excinfo)


def test_host_pairs_match_hosts_by_role_in_name_order(personas):
    def place(name, side, role):
        member_add(
            investigation=personas.investigation,
            user=personas.member,
            host=Host.objects.get_or_create(
                team=personas.team,
                name=name,
                defaults={"address": "10.0.0.1", "username": "perf"},
            )[0],
            side_key=side,
            role=role,
        )

    place("web-b", "a", HostRole.SERVICE)
    place("web-a", "a", HostRole.SERVICE)
    place("web-z", "b", HostRole.SERVICE)
    place("pg-1", "a", HostRole.DATABASE)
    place("k6", "b", HostRole.LOAD_GENERATOR)

    pairs = selectors.host_pairs(investigation=personas.investigation)

    def name(member):
        return member.host.name if member else None

    assert [(p.role, name(p.a), name(p.b)) for p in pairs] == [
        (HostRole.LOAD_GENERATOR, None, "k6"),
        (HostRole.SERVICE, "web-a", "web-z"),
        (HostRole.SERVICE, "web-b", None),
        (HostRole.DATABASE, "pg-1", None),
    ]
    assert pairs[0].role_label == "Load generator"
    assert pairs[1].members[0].side.key == "a" and pairs[1].members[1].side.key == "b"


def test_an_investigation_without_hosts_has_no_pairs(personas):
    assert selectors.host_pairs(investigation=personas.investigation) == []


def test_a_reopened_resolved_investigation_can_be_marked_mitigated(personas):
    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.RESOLVED
    )
    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.OPEN
    )

    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.MITIGATED
    )

    saved = fresh(personas.investigation)
    assert saved.status == Status.MITIGATED
    # The times still keep their order: nothing resolved before it was mitigated.
    assert saved.resolved_at is None or saved.mitigated_at <= saved.resolved_at


def test_the_status_can_change_after_the_lead_has_left_the_team(personas):
    membership_set_role(
        membership=Membership.objects.get(team=personas.team, user=personas.member), role=Role.LEAD
    )
    membership_remove(membership=lead_membership(personas))

    investigation_set_status(
        investigation=personas.investigation, user=personas.member, status=Status.MITIGATED
    )

    assert fresh(personas.investigation).status == Status.MITIGATED
