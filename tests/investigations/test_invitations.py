"""Team membership needs consent and says nothing about who exists: a lead's add is an
invitation the person accepts (an operator may add at once), and the answer to a lead is
the same whether or not the name has an account."""

import re
from datetime import timedelta
from html import unescape

import pytest
from django.contrib.auth.models import Permission
from django.utils import timezone

from investigations.choices import InvitationStatus, Role
from investigations.models import Invitation, Membership
from tests.conftest import HOSTILE_STRINGS, ApiClient, make_user

pytestmark = pytest.mark.django_db


def members_url(personas) -> str:
    return f"/api/teams/{personas.team.pk}/members"


def invite(personas, username: str, role: str = Role.VIEWER):
    return ApiClient(personas.lead).post(
        members_url(personas), {"username": username, "role": role}
    )


def is_member(personas, username: str) -> bool:
    return Membership.objects.filter(team=personas.team, user__username=username).exists()


# --- the answer says nothing about who exists --------------------------------------------------


def test_a_leads_add_answers_alike_for_a_name_with_and_without_an_account(personas):
    make_user("nina")

    real = invite(personas, "nina")
    ghost = invite(personas, "ghost")

    assert real.status_code == ghost.status_code == 202
    assert real["Content-Type"] == ghost["Content-Type"]
    # Identical but for the name, the row's id and the moment it expires.
    varying = {"id", "username", "expires_at"}
    assert {k: v for k, v in real.body.items() if k not in varying} == {
        k: v for k, v in ghost.body.items() if k not in varying
    }
    assert set(real.body) == set(ghost.body)
    assert (real.body["username"], ghost.body["username"]) == ("nina", "ghost")
    assert real.body["status"] == "invited"
    assert "no user" not in real.content.decode() + ghost.content.decode()
    assert not is_member(personas, "nina")


def test_the_team_page_answers_alike_for_a_name_with_and_without_an_account(personas):
    make_user("nina")
    lead = personas.client(personas.lead)
    url = f"/teams/{personas.team.pk}/"

    real = lead.post(url, {"username": "nina", "role": Role.VIEWER}, follow=True)
    ghost = lead.post(url, {"username": "ghost", "role": Role.VIEWER}, follow=True)

    def message(response) -> str:
        found = re.search(r"<ul class=\"messages\">.*?</ul>", response.content.decode(), re.S)
        return unescape(found.group(0)) if found else response.content.decode()

    assert real.redirect_chain == ghost.redirect_chain == [(url, 302)]
    assert message(real).replace("nina", "NAME") == message(ghost).replace("ghost", "NAME")
    assert "is invited" in message(real)
    assert not is_member(personas, "nina")


# --- consent -----------------------------------------------------------------------------------


def test_no_membership_exists_until_the_invitee_accepts_with_the_invited_role(personas):
    nina = make_user("nina")
    invited = invite(personas, "nina", Role.RESPONDER)
    invitee = ApiClient(nina)

    mine = invitee.get("/api/invitations")
    assert not is_member(personas, "nina")
    assert invitee.get(f"/api/teams/{personas.team.pk}/members").status_code == 404
    assert [(i["id"], i["team_name"], i["role"], i["invited_by"]) for i in mine.body] == [
        (invited.body["id"], "Payments SRE", Role.RESPONDER, "lena")
    ]

    accepted = invitee.post(f"/api/invitations/{invited.body['id']}/accept")

    assert accepted.status_code == 200
    assert accepted.body == {"id": personas.team.pk, "name": "Payments SRE", "role": "responder"}
    assert Membership.objects.get(team=personas.team, user=nina).role == Role.RESPONDER
    assert invitee.get("/api/invitations").body == []
    assert ApiClient(personas.lead).get(f"/api/teams/{personas.team.pk}/invitations").body == []
    again = invitee.post(f"/api/invitations/{invited.body['id']}/accept")
    assert again.status_code == 400


def test_a_declined_invitation_makes_no_member_and_cannot_be_accepted_after(personas):
    nina = make_user("nina")
    invitation = invite(personas, "nina").body["id"]
    invitee = ApiClient(nina)

    declined = invitee.post(f"/api/invitations/{invitation}/decline")
    late = invitee.post(f"/api/invitations/{invitation}/accept")

    assert declined.status_code == 204
    assert late.status_code == 400
    assert late.body["detail"] == "This invitation was already answered."
    assert not is_member(personas, "nina")
    assert Invitation.objects.get(pk=invitation).status == InvitationStatus.DECLINED


def test_an_expired_invitation_cannot_be_accepted_and_is_no_longer_shown(personas, settings):
    nina = make_user("nina")
    answer = invite(personas, "nina")
    expected = timezone.now() + timedelta(days=settings.INVITATION_DAYS)
    assert abs((Invitation.objects.get().expires_at - expected).total_seconds()) < 60
    assert answer.body["expires_at"].startswith(expected.date().isoformat())
    Invitation.objects.update(expires_at=timezone.now() - timedelta(seconds=1))
    invitee = ApiClient(nina)

    late = invitee.post(f"/api/invitations/{answer.body['id']}/accept")

    assert late.status_code == 400
    assert "expired" in late.body["detail"]
    assert not is_member(personas, "nina")
    assert invitee.get("/api/invitations").body == []
    assert ApiClient(personas.lead).get(f"/api/teams/{personas.team.pk}/invitations").body == []
    # The name may be invited again.
    assert invite(personas, "nina").status_code == 202


def test_a_lead_sees_and_withdraws_pending_invitations(personas):
    nina = make_user("nina")
    invitation = invite(personas, "nina").body["id"]
    invite(personas, "ghost")
    lead = ApiClient(personas.lead)
    listing = f"/api/teams/{personas.team.pk}/invitations"

    pending = [i["username"] for i in lead.get(listing).body]
    not_for_members = ApiClient(personas.member).get(listing).status_code
    withdrawn = lead.delete(f"{listing}/{invitation}")
    late = ApiClient(nina).post(f"/api/invitations/{invitation}/accept")

    assert pending == ["ghost", "nina"]
    assert not_for_members == 403
    assert withdrawn.status_code == 204
    assert [i["username"] for i in lead.get(listing).body] == ["ghost"]
    assert late.status_code == 400 and "withdrawn" in late.body["detail"]
    assert not is_member(personas, "nina")


def test_an_outsider_cannot_accept_or_decline_someone_elses_invitation(personas):
    make_user("nina")
    invitation = invite(personas, "nina").body["id"]
    ghost_invitation = invite(personas, "otto-imposter").body["id"]
    outsider = ApiClient(personas.outsider)

    for number in (invitation, ghost_invitation):
        assert outsider.post(f"/api/invitations/{number}/accept").status_code == 404
        assert outsider.post(f"/api/invitations/{number}/decline").status_code == 404
    on_page = personas.client(personas.outsider).post(
        f"/invitations/{invitation}/", {"answer": "accept"}
    )

    assert on_page.status_code == 404
    assert not is_member(personas, "otto")
    assert Invitation.objects.get(pk=invitation).status == InvitationStatus.PENDING


def test_inviting_a_name_again_renews_its_invitation_and_a_member_is_not_invited(personas):
    make_user("nina")
    first = invite(personas, "nina", Role.VIEWER)
    second = invite(personas, "nina", Role.LEAD)
    member = invite(personas, "max")

    assert second.status_code == 202 and second.body["id"] == first.body["id"]
    assert Invitation.objects.get().role == Role.LEAD
    assert member.status_code == 400
    assert member.body["errors"][0]["field"] == "username"


def test_an_operator_adds_directly_and_a_lead_cannot(personas):
    nina = make_user("nina")
    staff = make_user("olga")
    staff.is_staff = True
    staff.save()
    staff.user_permissions.add(Permission.objects.get(codename="add_membership"))
    admin = make_user("root")
    admin.is_superuser = True
    admin.save()
    make_user("pia")

    by_staff = ApiClient(staff).post(members_url(personas), {"username": "nina", "role": "viewer"})
    by_admin = ApiClient(admin).post(members_url(personas), {"username": "pia"})
    staff_without_permission = make_user("sam")
    staff_without_permission.is_staff = True
    staff_without_permission.save()
    by_plain_staff = ApiClient(staff_without_permission).post(
        members_url(personas), {"username": "nina"}
    )

    assert by_staff.status_code == 201
    assert by_staff.body["username"] == "nina" and by_staff.body["role"] == "viewer"
    assert Membership.objects.get(team=personas.team, user=nina).role == Role.VIEWER
    assert by_admin.status_code == 201 and is_member(personas, "pia")
    assert by_plain_staff.status_code == 404  # not in the team: no operator, no lead


# --- the pages ---------------------------------------------------------------------------------


def test_the_invitee_accepts_on_their_teams_page(personas):
    nina = make_user("nina")
    lead = personas.client(personas.lead)
    lead.post(f"/teams/{personas.team.pk}/", {"username": "nina", "role": Role.RESPONDER})
    lead_page = lead.get(f"/teams/{personas.team.pk}/").content.decode()
    invitee = personas.client(nina)

    teams_page = invitee.get("/teams/").content.decode()
    invitation = Invitation.objects.get()
    accepted = invitee.post(f"/invitations/{invitation.pk}/", {"answer": "accept"}, follow=True)

    assert "Pending invitations" in lead_page and "Withdraw" in lead_page
    assert "Payments SRE" in teams_page and "Accept" in teams_page and "Decline" in teams_page
    assert accepted.redirect_chain == [(f"/teams/{personas.team.pk}/", 302)]
    assert "You joined Payments SRE as Responder." in accepted.content.decode()
    assert Membership.objects.get(team=personas.team, user=nina).role == Role.RESPONDER


def test_the_invitee_declines_and_a_lead_withdraws_on_the_pages(personas):
    nina = make_user("nina")
    lead = personas.client(personas.lead)
    lead.post(f"/teams/{personas.team.pk}/", {"username": "nina", "role": Role.VIEWER})
    lead.post(f"/teams/{personas.team.pk}/", {"username": "ghost", "role": Role.VIEWER})
    ghost, declined = Invitation.objects.order_by("username")  # by name: ghost, nina

    personas.client(nina).post(f"/invitations/{ghost.pk}/", {"answer": "accept"})
    personas.client(nina).post(f"/invitations/{declined.pk}/", {"answer": "decline"})
    denied = personas.client(personas.member).post(
        f"/teams/{personas.team.pk}/invitations/{ghost.pk}/withdraw/"
    )
    lead.post(f"/teams/{personas.team.pk}/invitations/{ghost.pk}/withdraw/")

    assert Invitation.objects.get(pk=declined.pk).status == InvitationStatus.DECLINED
    assert denied.status_code == 403
    assert Invitation.objects.get(pk=ghost.pk).status == InvitationStatus.WITHDRAWN
    assert "Pending invitations" not in lead.get(f"/teams/{personas.team.pk}/").content.decode()
    assert not is_member(personas, "nina")


def test_the_invite_form_keeps_what_was_typed_and_shows_the_error_beside_the_field(personas):
    response = personas.client(personas.lead).post(
        f"/teams/{personas.team.pk}/", {"username": "vera", "role": Role.LEAD}
    )
    page = response.content.decode()

    assert response.status_code == 400
    field = re.search(r'<div class="field has-error">.*?</div>', page, re.S).group(0)
    assert 'name="username"' in field and 'value="vera"' in field
    assert "This user is already a member of the team." in field
    assert re.search(r'<option value="lead"\s+selected>', page)
    assert not Invitation.objects.exists()


def test_hostile_names_are_invited_as_text_and_too_long_ones_are_refused(personas):
    for name in HOSTILE_STRINGS:
        answer = invite(personas, name)
        if len(name.strip()) > 150:
            assert answer.status_code == 400
            assert answer.body["errors"][0]["field"] == "username"
        else:
            assert answer.status_code == 202, name
            assert answer.body["username"] == name.strip()

    page = personas.client(personas.lead).get(f"/teams/{personas.team.pk}/").content.decode()

    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    assert "容器性能不如虚拟机" in page
