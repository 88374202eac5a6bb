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
    return f"ranked {outcome.ranked}; stages {stages}; compared {outcome.compared}"


@pytest.mark.parametrize(
    "name", [name for name, case in CASES.items() if case.expected is not None]
)
def test_the_injected_difference_is_named_first(
    name, personas, celery_worker, test_hosts, shipped_knowledge
):
    case = CASES[name]
    for tool in LOAD_TOOLS if case.load else ():
        require(tool)

    outcome = run_case(case, Calls(personas.member), test_hosts)

    assert outcome.diagnosis["status"] == "completed", explain(outcome)
    stages = {s["name"]: s for s in outcome.diagnosis["stages"]}
    for name in case.stages:
        if name == "at_knee":
            # What this cause needs of the knee is the capture of both sides (the profile
            # may fail alone: see the README text on the slow receiver).
            captures = [
                body
                for collection in stages[name]["collections"]
                if (body := Calls(personas.member).get(f"/api/collections/{collection}")[1])["kind"]
                == "capture"
            ]
            assert [c["status"] for c in captures] == ["completed"] * 2, explain(outcome)
        else:
            assert stages[name]["status"] == "succeeded", explain(outcome)
    assert outcome.first == case.expected, explain(outcome)
    assert outcome.difference_found, explain(outcome)
    assert outcome.ranked[0][1] > outcome.low_score, explain(outcome)
    if case.load:
        assert wait_for(lambda: all(none_left(tool) for tool in LOAD_TOOLS), timeout=15)


def test_two_sides_that_are_the_same_rank_nothing_above_the_low_score_and_say_what_was_compared(
    personas, celery_worker, test_hosts, shipped_knowledge
):
    outcome = run_case(CASES["same-sides"], Calls(personas.member), test_hosts)

    assert outcome.diagnosis["status"] == "completed", explain(outcome)
    assert not outcome.difference_found, explain(outcome)
    assert all(score <= outcome.low_score for _, score in outcome.ranked), explain(outcome)
    assert outcome.compared == ["Host facts of 1 host pair"], explain(outcome)
