"""The demo's data and a token of its lead, for the tests that send every operation of the
API requests on real objects."""

import pytest
from django.core.management import call_command

from investigations.demo import DEMO_TITLE
from investigations.models import (
    ActionItem,
    Capture,
    ChecklistItem,
    Collection,
    Credential,
    Finding,
    Host,
    Investigation,
    Ladder,
    Membership,
    PathEdge,
    PathNode,
    Profile,
    RootCause,
    TimelineEvent,
)
from investigations.services.inventory import credential_create
from investigations.services.tokens import api_token_create


def first_pk(queryset):
    return queryset.order_by("pk").values_list("pk", flat=True).first()


@pytest.fixture
def real_ids(db, settings, make_key):
    """The demo's data, and the ids of one object of each kind the paths name."""
    settings.DEBUG = True  # load_demo runs in DEBUG only (its password is published)
    call_command("load_demo", verbosity=0)
    settings.DEBUG = False
    case = Investigation.objects.get(title=DEMO_TITLE)
    user = case.lead
    credential_create(team=case.team, user=user, name="fuzz", private_key=make_key().text)
    ids = {
        "investigation_id": case.pk,
        "team_id": case.team_id,
        "host_id": first_pk(Host.objects.filter(team=case.team)),
        "credential_id": first_pk(Credential.objects.filter(team=case.team)),
        "collection_id": first_pk(Collection.objects.filter(investigation=case)),
        "event_id": first_pk(TimelineEvent.objects.filter(investigation=case)),
        "finding_id": first_pk(Finding.objects.filter(investigation=case)),
        "ladder_id": first_pk(Ladder.objects.filter(investigation=case)),
        "node_id": first_pk(PathNode.objects.filter(investigation=case)),
        "edge_id": first_pk(PathEdge.objects.filter(investigation=case)),
        "profile_id": first_pk(Profile.objects.filter(investigation__team=case.team)),
        "capture_id": first_pk(Capture.objects.filter(investigation__team=case.team)),
        "action_id": first_pk(ActionItem.objects.filter(investigation=case)),
        "root_cause_id": first_pk(RootCause.objects.all()),
        "membership_id": first_pk(Membership.objects.filter(team=case.team)),
        "member_id": user.pk,
        "checklist_key": ChecklistItem.objects.filter(investigation=case)
        .order_by("pk")
        .values_list("key", flat=True)
        .first(),
    }
    _, raw = api_token_create(user=user, name="schemathesis")
    return {
        "token": raw,
        "user": user,
        "ids": {name: pk for name, pk in ids.items() if pk is not None},
    }
