"""The library of rebuilt cases (tests/scenarios/cases.py): for each, two sshd test hosts, one
real difference injected on one side, a diagnosis through the API and the real worker, and
the expected knowledge-base entry ranked first; for the case where both sides are the same,
nothing ranked above the low score, and the answer says what was compared."""

import pytest

from tests.conftest import ApiClient, wait_for
from tests.ladders import none_left, require
from tests.scenarios.cases import CASES, run_case

pytestmark = pytest.mark.django_db(transaction=True)
# What a case with load runs on the hosts: the ladder's load tool, the knee's profile and
# capture, and what finds the service's connections.
LOAD_TOOLS = ("wrk", "perf", "tcpdump", "ss")


class Calls:
    """The Django test client's answers as (status, body), as run_case takes them."""

    def __init__(self, user):
        self.api = ApiClient(user)

    def get(self, path):
        answer = self.api.get(path)
        return answer.status_code, answer.body

    def post(self, path, body):
        answer = self.api.post(path, body)
        return answer.status_code, answer.body


def explain(outcome) -> str:
    stages = {s["name"]: (s["status"], s["reason"]) for s in outcome.diagnosis["stages"]}
    return (
        f"ranked {outcome.ranked}; stages {stages}; compared {outcome.compared}; "
        f"captures {outcome.captures}; knee {outcome.knee}"
    )


def named_first(case, personas, test_hosts):
    """Run the case; assert its stages ended as its cause needs and its entry ranks first."""
    calls = Calls(personas.member)
    outcome = run_case(case, calls, test_hosts)

    assert outcome.diagnosis["status"] == "completed", explain(outcome)
    stages = {s["name"]: s for s in outcome.diagnosis["stages"]}
    for stage in case.stages:
        if stage == "at_knee":
            # What this cause needs of the knee is the capture of both sides (the profile
            # may fail alone: see the README text on the slow receiver).
            kinds = [calls.get(f"/api/collections/{c}")[1] for c in stages[stage]["collections"]]
            captures = [c["status"] for c in kinds if c["kind"] == "capture"]
            assert captures == ["completed"] * 2, explain(outcome)
        else:
            assert stages[stage]["status"] == "succeeded", explain(outcome)
    assert outcome.first == case.expected, explain(outcome)
    assert outcome.difference_found, explain(outcome)
    assert outcome.ranked[0][1] > outcome.low_score, explain(outcome)
    return outcome


@pytest.mark.parametrize(
    "name",
    [name for name, case in CASES.items() if case.expected is not None and not case.load],
)
def test_the_injected_difference_is_named_first(
    name, personas, celery_worker, test_hosts, shipped_knowledge
):
    named_first(CASES[name], personas, test_hosts)


@pytest.mark.parametrize("name", [name for name, case in CASES.items() if case.load])
def test_a_cause_on_one_side_of_the_traffic_is_named_from_the_knee_capture(
    name, personas, celery_worker, test_hosts, shipped_knowledge
):
    for tool in LOAD_TOOLS:
        require(tool)

    named_first(CASES[name], personas, test_hosts)

    assert wait_for(lambda: all(none_left(tool) for tool in LOAD_TOOLS), timeout=15)


def test_two_sides_that_are_the_same_rank_nothing_above_the_low_score_and_say_what_was_compared(
    personas, celery_worker, test_hosts, shipped_knowledge
):
    outcome = run_case(CASES["same-sides"], Calls(personas.member), test_hosts)

    assert outcome.diagnosis["status"] == "completed", explain(outcome)
    assert not outcome.difference_found, explain(outcome)
    assert all(score <= outcome.low_score for _, score in outcome.ranked), explain(outcome)
    assert outcome.compared == ["Host facts of 1 host pair"], explain(outcome)
