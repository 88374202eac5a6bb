"""A step that one side began well after its planned moment says why, from what was
measured (issue 24 bug 13: at load 100 side B started 1,125 ms late and the page did not
say that its load generator was saturated)."""

from datetime import timedelta
from html import unescape

import pytest
from django.test import Client
from django.utils import timezone

from investigations.choices import HostRole
from investigations.services.ladder_results import ladder_claim, ladder_step_store
from tests.conftest import ApiClient, fresh
from tests.investigations.test_ladders import request, result, side_of

pytestmark = pytest.mark.django_db


def vmstat(idle: float) -> list[dict]:
    return [{"r": 4, "us": 100 - idle - 2, "sy": 2, "id": idle, "st": 0}] * 3


@pytest.fixture
def running(personas, ladder_hosts):
    ladder = request(personas, steps=[100])
    assert len(ladder_claim(ladder_id=ladder.pk, seconds=600)) == 2
    return fresh(ladder)


def store(ladder, ladder_hosts, key: str, late_ms: float, generator_idle: float | None):
    planned = timezone.now()
    generator = ladder_hosts[(key, HostRole.LOAD_GENERATOR)]
    service = ladder_hosts[(key, HostRole.SERVICE)]
    return ladder_step_store(
        ladder_side=side_of(ladder, key),
        index=0,
        result=result(100, 1000),
        planned_at=planned,
        started_at=planned + timedelta(milliseconds=late_ms),
        samples=[(service, "vmstat", vmstat(60))],
        generator_samples=[]
        if generator_idle is None
        else [(generator, "vmstat", vmstat(generator_idle))],
    )


def page(personas, ladder) -> str:
    client = Client()
    client.force_login(personas.member)
    answer = client.get(f"/ladders/{ladder.pk}/")
    assert answer.status_code == 200
    return unescape(answer.content.decode())


def test_a_side_late_on_a_saturated_load_generator_says_so(personas, running, ladder_hosts):
    store(running, ladder_hosts, "a", 61, generator_idle=70)
    step = store(running, ladder_hosts, "b", 1125, generator_idle=1.5)

    step = fresh(step)
    generator = ladder_hosts[("b", HostRole.LOAD_GENERATOR)]
    assert step.cpu["generator"] == {"host": generator.name, "busy": 98.5}
    assert step.cpu["us"] == 38  # the service host's alone
    assert sorted(step.samples.values_list("host__name", flat=True)) == sorted(
        [generator.name, ladder_hosts[("b", HostRole.SERVICE)].name]
    )
    assert (
        f"At load 100 side B began 1,125 ms late: its load generator {generator.name} was "
        "saturated (98 % busy during the step)" in page(personas, running)
    )
    results = ApiClient(personas.member).get(f"/api/ladders/{running.pk}").body["results"]
    assert {r["side"]: r["load_generator_busy"] for r in results} == {"a": 30.0, "b": 98.5}


def test_a_side_late_on_an_idle_load_generator_says_the_delay_came_before(
    personas, running, ladder_hosts
):
    store(running, ladder_hosts, "a", 900, generator_idle=55)
    store(running, ladder_hosts, "b", 20, generator_idle=1)
    generator = ladder_hosts[("a", HostRole.LOAD_GENERATOR)]
    assert (
        f"At load 100 side A began 900 ms late, though its load generator {generator.name} "
        "was not saturated (45 % busy during the step)" in page(personas, running)
    )


def test_a_late_side_without_generator_samples_says_nothing_is_known(
    personas, running, ladder_hosts
):
    store(running, ladder_hosts, "a", 10, generator_idle=None)
    store(running, ladder_hosts, "b", 2400, generator_idle=None)
    assert (
        "At load 100 side B began 2,400 ms late; no CPU samples of its load generator say "
        "whether it was saturated." in page(personas, running)
    )


def test_sides_that_began_on_time_get_no_sentence(personas, running, ladder_hosts):
    store(running, ladder_hosts, "a", 40, generator_idle=1)
    store(running, ladder_hosts, "b", 450, generator_idle=1)
    assert "ms late" not in page(personas, running)
