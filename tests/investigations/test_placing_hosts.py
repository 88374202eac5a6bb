"""Placing hosts on a case's sides, the smaller problems of issue 24 (bug 13): the address a
failed placing leaves, and what the remove question names."""

import re
from html import unescape

import pytest
from django.urls import reverse

from investigations.choices import HostRole
from investigations.services.inventory import host_create, member_add

pytestmark = pytest.mark.django_db


def placed(personas, name: str, *roles: str):
    host = host_create(team=personas.team, name=name, address="10.0.0.5", port=22, username="perf")
    for role in roles:
        member_add(
            investigation=personas.investigation,
            user=personas.member,
            host=host,
            side_key="a",
            role=role,
        )
    return host


def test_the_place_forms_address_opened_again_leads_to_the_environment(personas):
    # A failed placing without JavaScript leaves the browser at this address: it answered 405.
    client = personas.client(personas.member)
    url = reverse("member_new", args=[personas.investigation.pk])

    response = client.get(url)

    assert response.status_code == 302
    assert response["Location"] == (
        reverse("investigation_detail", args=[personas.investigation.pk]) + "#environment"
    )
    assert personas.client(personas.outsider).get(url).status_code == 404


def test_the_remove_question_names_the_role_and_the_side_of_a_host_with_two(personas):
    placed(personas, "db-1", HostRole.DATABASE, HostRole.CACHE)
    client = personas.client(personas.member)

    response = client.get(
        reverse("investigation_panel", args=[personas.investigation.pk, "environment"])
    )

    questions = [
        unescape(q) for q in re.findall(r'data-confirm="([^"]*)"', response.content.decode())
    ]
    assert "Remove db-1 as cache from side A?" in questions
    assert "Remove db-1 as database from side A?" in questions
