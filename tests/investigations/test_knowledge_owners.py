"""Who owns a knowledge-base entry, who reads and who edits it: the installation's entries
(the shipped ones) are read by everyone and edited by operators holding the permission; a
team's are read by its members and written and edited by its leads. Every edit is kept."""

from html import unescape

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.db.models import ProtectedError
from django.utils import timezone
from django.utils.html import escape

from investigations.choices import Status
from investigations.models import CaseRootCause, RootCause, Team
from investigations.services.investigations import investigation_create, investigation_set_status
from tests.conftest import ApiClient, loaded_page, make_user

# The shipped entries, put back if a transactional test of this process emptied them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shipped_knowledge")]

SHIPPED = "cpu-governor-powersave"


def operator(name: str = "sam", perms=("change_rootcause",)):
    user = get_user_model().objects.create_user(username=name, is_staff=True)
    user.user_permissions.add(*Permission.objects.filter(codename__in=perms))
    return user


def team_entry(personas, **fields) -> dict:
    """An entry of the personas' team, written by its lead through the API."""
    body = {"title": "Connection pool of eight on the checkout service", "category": "application"}
    response = ApiClient(personas.lead).post("/api/root-causes", body | fields)
    assert response.status_code == 201, response.body
    return response.body


# --- the attack: a viewer makes a team, becomes its lead, rewrites the shipped entries ------


def test_a_viewer_who_makes_a_team_may_not_rewrite_or_add_to_what_every_team_reads(personas):
    shipped = RootCause.objects.get(slug=SHIPPED)
    api = ApiClient(personas.viewer)
    body = {"title": "Disable the governor check", "category": "cpu"}

    before_team = api.post("/api/root-causes", body)
    made = api.post("/api/teams", {"name": "Viewer's own team"})
    patched = api.patch(f"/api/root-causes/{shipped.pk}", {"fix": "Nothing to do, ignore it."})
    as_installation = api.post("/api/root-causes", body | {"owner": "installation"})
    into_viewed_team = api.post("/api/root-causes", body | {"team": personas.team.pk})
    into_foreign_team = api.post(
        "/api/root-causes", body | {"team": personas.outsider.memberships.get().team_id}
    )

    assert made.status_code == 201 and made.body["role"] == "lead"
    assert before_team.status_code == 403
    assert patched.status_code == 403
    assert as_installation.status_code == 403
    assert into_viewed_team.status_code == 403
    assert into_foreign_team.status_code == 404
    shipped.refresh_from_db()
    assert shipped.fix != "Nothing to do, ignore it."
    assert not RootCause.objects.filter(title=body["title"]).exists()
    assert not shipped.revisions.exists()


def test_what_a_new_lead_writes_is_read_only_in_their_own_team(personas):
    api = ApiClient(personas.viewer)
    team = api.post("/api/teams", {"name": "Viewer's own team"}).body

    written = api.post("/api/root-causes", {"title": "Our own finding", "category": "cpu"})

    assert written.status_code == 201
    assert written.body["team"] == team["id"] and written.body["owner"] == "team"
    for reader in [personas.lead, personas.member, personas.outsider]:
        assert ApiClient(reader).get(f"/api/root-causes/{written.body['id']}").status_code == 404


# --- a team's leads edit its entries; every edit is kept ------------------------------------


def test_a_lead_edits_their_teams_entry_and_the_revision_keeps_author_and_replaced_text(
    personas,
):
    entry = team_entry(personas, fix="Raise the pool to 64.")
    api = ApiClient(personas.lead)

    first = api.patch(
        f"/api/root-causes/{entry['id']}",
        {"fix": "Raise the pool to 128.", "title_zh": "连接池太小", "category": "application"},
    )
    unchanged = api.patch(f"/api/root-causes/{entry['id']}", {"fix": "Raise the pool to 128."})
    second = api.patch(f"/api/root-causes/{entry['id']}", {"references": ["RFC 896"]})
    history = ApiClient(personas.viewer).get(f"/api/root-causes/{entry['id']}/history")

    assert first.status_code == unchanged.status_code == second.status_code == 200
    newest, oldest = RootCause.objects.get(pk=entry["id"]).revisions.all()
    assert oldest.author == personas.lead and oldest.author_name == personas.lead.username
    # Only what changed (the category was sent as it was), with the text it replaced.
    assert oldest.previous == {"fix": "Raise the pool to 64.", "title_zh": ""}
    assert oldest.current == {"fix": "Raise the pool to 128.", "title_zh": "连接池太小"}
    assert newest.previous == {"references": []} and newest.current == {"references": ["RFC 896"]}
    assert history.status_code == 200
    assert [item["id"] for item in history.body["items"]] == [newest.pk, oldest.pk]
    item = history.body["items"][1]
    assert item["author"] == personas.lead.username
    assert item["fields"] == ["fix", "title_zh"]
    assert item["previous"] == {"fix": "Raise the pool to 64.", "title_zh": ""}
    assert item["current"] == {"fix": "Raise the pool to 128.", "title_zh": "连接池太小"}


def test_only_the_teams_leads_edit_its_entries(personas):
    entry = team_entry(personas)
    outsider = ApiClient(personas.outsider)

    for user, status in [(personas.member, 403), (personas.viewer, 403)]:
        response = ApiClient(user).patch(f"/api/root-causes/{entry['id']}", {"fix": "x"})
        assert response.status_code == status
    assert outsider.patch(f"/api/root-causes/{entry['id']}", {"fix": "x"}).status_code == 404
    # An operator of the installation's entries is no lead of the team's.
    assert (
        ApiClient(operator()).patch(f"/api/root-causes/{entry['id']}", {"fix": "x"}).status_code
        == 404
    )
    assert RootCause.objects.get(pk=entry["id"]).fix == ""


def test_a_staff_user_with_change_rootcause_edits_a_shipped_entry_and_it_is_kept(personas):
    shipped = RootCause.objects.get(slug=SHIPPED)
    old_fix = shipped.fix
    ops = operator()

    response = ApiClient(ops).patch(f"/api/root-causes/{shipped.pk}", {"fix": "Set `performance`."})

    assert response.status_code == 200, response.body
    [revision] = shipped.revisions.all()
    assert revision.author == ops
    assert revision.previous == {"fix": old_fix}
    assert revision.current == {"fix": "Set `performance`."}
    # A lead reads the history of an entry every team reads.
    history = ApiClient(personas.lead).get(f"/api/root-causes/{shipped.pk}/history").body
    assert history["items"][0]["author"] == "sam"


def test_the_entrys_page_shows_its_history(personas):
    entry = team_entry(personas, fix="<b>Old</b> fix")
    client = personas.client(personas.lead)
    form = client.get(f"/knowledge/{entry['id']}/edit/").context["form"]
    data = {name: form[name].value() or "" for name in form.fields}
    data["fix"] = "New fix"

    unedited = client.get(f"/knowledge/{entry['id']}/").content.decode()
    assert client.post(f"/knowledge/{entry['id']}/edit/", data).status_code == 302
    page = personas.client(personas.viewer).get(f"/knowledge/{entry['id']}/").content.decode()

    assert "Not edited since it was written." in unedited
    assert 'id="history"' in page
    assert f"{personas.lead.username} edited it," in page
    assert "<summary>Fix</summary>" in page
    assert escape("<b>Old</b> fix") in page and "<b>Old</b>" not in page
    assert "New fix" in page
    assert "Not edited since it was written." not in page


# --- another team's members do not see a team's entry ---------------------------------------


def test_another_teams_member_cannot_see_a_team_entry(personas):
    entry = team_entry(personas, symptoms="zebrafish latency quirk")
    outsider = ApiClient(personas.outsider)
    client = personas.client(personas.outsider)

    assert outsider.get(f"/api/root-causes/{entry['id']}").status_code == 404
    assert outsider.get(f"/api/root-causes/{entry['id']}/history").status_code == 404
    assert outsider.patch(f"/api/root-causes/{entry['id']}", {"fix": "x"}).status_code == 404
    listed = outsider.get("/api/root-causes").body["items"]
    searched = outsider.get("/api/root-causes", data={"q": "zebrafish"}).body["items"]
    found = outsider.get("/api/search", data={"q": "zebrafish"}).body["root_causes"]
    assert entry["id"] not in [item["id"] for item in listed]
    assert searched == found == []
    assert client.get(f"/knowledge/{entry['id']}/").status_code == 404
    assert client.get(f"/knowledge/{entry['id']}/edit/").status_code == 404
    for url in ["/knowledge/", "/knowledge/?q=zebrafish", "/search/?q=zebrafish"]:
        assert escape(entry["title"]) not in client.get(url).content.decode()
    # The team itself reads it everywhere.
    member = ApiClient(personas.viewer)
    assert member.get(f"/api/root-causes/{entry['id']}").status_code == 200
    assert [i["id"] for i in member.get("/api/search?q=zebrafish").body["root_causes"]] == [
        entry["id"]
    ]


def test_a_case_of_another_team_may_not_name_a_team_entry(personas):
    entry = team_entry(personas)
    case = investigation_create(
        team=personas.outsider.memberships.get().team, user=personas.outsider, title="Theirs"
    )
    client = personas.client(personas.outsider)

    patched = ApiClient(personas.outsider).patch(
        f"/api/investigations/{case.pk}", {"root_cause": entry["id"]}
    )
    typed = client.post(
        f"/investigations/{case.pk}/root-causes/", {"cause-root_cause": entry["id"]}
    )
    proposed = client.post(f"/investigations/{case.pk}/root-causes/{entry['id']}/propose/")
    panel = loaded_page(client, f"/investigations/{case.pk}/")

    assert patched.status_code == 400
    assert patched.body["errors"][0]["field"] == "root_causes"
    assert typed.status_code == 400
    assert proposed.status_code == 404
    assert not CaseRootCause.objects.filter(root_cause_id=entry["id"]).exists()
    assert escape(entry["title"]) not in panel
    # Its own team's case names it.
    own = ApiClient(personas.member).patch(
        f"/api/investigations/{personas.investigation.pk}", {"root_cause": entry["id"]}
    )
    assert own.status_code == 200, own.body


def test_similar_cases_never_show_an_entry_the_reader_may_not_read(personas):
    entry = team_entry(personas, title="Zebrafish pool starvation")
    team = personas.outsider.memberships.get().team
    past = investigation_create(team=team, user=personas.outsider, title="Checkout p99 doubled")
    # As an entry confirmed before entries had owners: a case of another team names it.
    CaseRootCause.objects.create(
        investigation=past, root_cause_id=entry["id"], confirmed_at=timezone.now()
    )
    investigation_set_status(
        investigation=past, user=personas.outsider, status=Status.CLOSED, reason="done"
    )
    case = investigation_create(team=team, user=personas.outsider, title="Checkout p99 doubled")

    similar = ApiClient(personas.outsider).get(f"/api/investigations/{case.pk}/similar").body
    panel = loaded_page(personas.client(personas.outsider), f"/investigations/{case.pk}/")

    [item] = similar["items"]
    assert item["investigation"] == past.pk
    assert item["root_causes"] == []
    assert "Zebrafish" not in unescape(panel)


# --- operators, and what carries the owner ----------------------------------------------------


def test_an_operator_may_write_only_with_add_rootcause(personas):
    client = personas.client(operator(perms=("add_rootcause",)))
    form = {"title": "Installation entry", "category": "cpu"}

    page = client.get("/knowledge/new/")
    written = client.post("/knowledge/new/", form)

    assert page.status_code == 200 and 'name="team"' not in page.content.decode()
    assert written.status_code == 302
    entry = RootCause.objects.get(title="Installation entry")
    assert entry.team is None
    outsider = personas.client(personas.outsider).get(f"/knowledge/{entry.pk}/").content.decode()
    assert "Of this installation, read by every team" in outsider
    assert personas.client(operator("sid")).get("/knowledge/new/").status_code == 403


def test_an_operator_who_leads_a_team_chooses_the_owner_in_the_form(personas):
    user = operator(perms=("add_rootcause",))
    ApiClient(user).post("/api/teams", {"name": "Ops team"})
    client = personas.client(user)

    page = client.get("/knowledge/new/").content.decode()
    client.post("/knowledge/new/", {"title": "For everyone", "category": "cpu", "team": ""})

    assert "The installation: every signed-in user reads it" in page
    assert RootCause.objects.get(title="For everyone").team is None


def test_a_team_that_owns_entries_cannot_be_deleted_from_under_them(personas):
    # A team with no case, so that nothing but its entry holds it.
    second = ApiClient(personas.lead).post("/api/teams", {"name": "Second team"}).body
    entry = team_entry(personas, team=second["id"])

    with pytest.raises(ProtectedError):
        Team.objects.get(pk=second["id"]).delete()
    assert RootCause.objects.get(pk=entry["id"]).team_id == second["id"]


def test_the_rules_findings_point_only_to_the_installations_entries(personas):
    from tests.investigations.test_root_causes import governor_finding

    shipped = RootCause.objects.get(slug=SHIPPED)
    RootCause.objects.filter(pk=shipped.pk).update(slug="shipped-governor")
    # A team's entry that took the slug a rule names (say after the shipped one was renamed).
    impostor = team_entry(personas, title="CPU governor powersave")
    RootCause.objects.filter(pk=impostor["id"]).update(slug=SHIPPED)

    finding = governor_finding(personas)

    assert finding.root_cause_id is None


# --- carrying existing entries over ------------------------------------------------------------


def test_the_migration_gives_existing_entries_an_owner(personas):
    from importlib import import_module

    from django.apps import apps

    own = import_module("investigations.migrations.0017_knowledge_owners").own
    outsider_team = personas.outsider.memberships.get().team
    shipped = RootCause.objects.get(slug=SHIPPED)
    by_member = RootCause.objects.create(slug="by-member", title="a", created_by=personas.member)
    by_loner = RootCause.objects.create(slug="by-loner", title="b", created_by=make_user("lone"))
    by_staff = RootCause.objects.create(slug="by-staff", title="c")
    kept = RootCause.objects.create(slug="kept", title="d", team=personas.team)
    shared = RootCause.objects.create(slug="shared", title="e", team=personas.team)
    foreign = investigation_create(team=outsider_team, user=personas.outsider, title="Theirs")
    CaseRootCause.objects.create(
        investigation=foreign, root_cause=shared, confirmed_at=timezone.now()
    )

    own(apps, None)

    owners = {
        rc.slug: rc.team_id
        for rc in RootCause.objects.filter(
            pk__in=[shipped.pk, by_member.pk, by_loner.pk, by_staff.pk, kept.pk, shared.pk]
        )
    }
    assert owners == {
        SHIPPED: None,
        "by-member": personas.team.pk,  # its writer's one team
        "by-loner": None,  # a writer of no team: the installation's
        "by-staff": None,
        "kept": personas.team.pk,
        "shared": None,  # another team's case names it: it stays readable to that team
    }
