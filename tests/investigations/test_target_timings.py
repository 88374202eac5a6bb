"""Where a target's time goes: a real facts collection on sshd test hosts records, per
target, the seconds of each phase (queue, connect, wait, probe, parse, store), and the API
gives them as the target's `timings`."""

import math

import pytest
from django.utils import timezone

from investigations.models import CollectionTarget
from investigations.runs.timings import PHASES
from tests.conftest import ApiClient
from tests.conftest import trust_host_key as trust
from tests.investigations.test_facts_end_to_end import collect, place, unreachable_host

pytestmark = pytest.mark.django_db(transaction=True)

# Each phase is rounded to the millisecond, so their sum may pass the exact one by this.
ROUNDING = 0.0005 * len(PHASES)


def test_a_facts_target_records_where_its_time_went(
    personas, celery_worker, credential, start_host
):
    test_host = start_host("timed", dump="x86_64-dell_e4310")
    api = ApiClient(personas.member)
    trust(api, place(personas, credential, test_host, "a"))

    collection = collect(api, personas)
    seen_done = timezone.now()

    (target,) = collection["targets"]
    assert target["status"] == "succeeded"
    timings = target["timings"]
    assert set(timings) == set(PHASES)
    assert all(
        isinstance(seconds, float | int) and math.isfinite(seconds) and seconds >= 0
        for seconds in timings.values()
    )
    # The stored times, to the microsecond (the API gives them to the millisecond).
    stored = CollectionTarget.objects.select_related("collection").get()
    assert stored.timings == timings
    requested = stored.collection.created_at
    # Every phase before the store ended before the target was marked succeeded; the store
    # ends before the collection is read back complete.
    before_store = sum(seconds for phase, seconds in timings.items() if phase != "store")
    assert before_store <= (stored.finished_at - requested).total_seconds() + ROUNDING
    assert sum(timings.values()) <= (seen_done - requested).total_seconds() + ROUNDING
    # The queue is the request to the claim, on the server's clock.
    claimed = (stored.started_at - requested).total_seconds()
    assert abs(timings["queue"] - claimed) <= 0.001  # its rounding to the millisecond


def test_a_host_never_reached_spends_its_time_connecting_and_nothing_after(
    personas, celery_worker, credential, start_host
):
    good = start_host("good", dump="x86_64-dell_e4310")
    api = ApiClient(personas.member)
    trust(api, place(personas, credential, good, "a"))
    unreachable_host(personas, credential, like=good, side="b", role="service")

    collection = collect(api, personas)

    targets = {t["host_name"]: t for t in collection["targets"]}
    assert targets["nobody-home"]["status"] == "failed"
    timings = targets["nobody-home"]["timings"]
    assert set(timings) == set(PHASES)
    assert all(seconds >= 0 for seconds in timings.values())
    assert (timings["wait"], timings["probe"], timings["parse"], timings["store"]) == (0, 0, 0, 0)
    assert targets["good"]["status"] == "succeeded"
    assert all(seconds >= 0 for seconds in targets["good"]["timings"].values())
