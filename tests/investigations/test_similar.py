"""Similar past cases: ranked by evidence first (root causes, findings, differing facts, path
shape), by words second; only the resolved and closed cases of the reader's teams; in the
panel and the API, with an outsider kept out of both."""

from html import unescape

import pytest
from django.test import Client
from django.utils import timezone, translation
from django.utils.html import escape

from collectors.phrase import Phrase
from investigations.choices import FindingSeverity, FindingStatus, Status
from investigations.models import Finding, RootCause
from investigations.phrases import with_phrases
from investigations.selectors.similar import path_shape, shape_text, similar_cases
from investigations.services.investigations import investigation_create, investigation_set_status
from investigations.services.knowledge import case_root_cause_confirm
from investigations.services.path import path_from_text
from investigations.services.teams import team_create
from tests.conftest import ApiClient

# The shipped entries, put back if a transactional test of this process emptied them.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("shipped_knowledge")]

HX = {"HTTP_HX_REQUEST": "true"}


@pytest.fixture
def governor():
    """The knowledge base's entry for the CPU governor (shipped by migration 0013)."""
    return RootCause.objects.get(slug="cpu-governor-powersave")


@pytest.fixture
def vcpus():
    return RootCause.objects.get(slug="too-many-vcpus")


def a_case(personas, title: str, *, team=None, user=None, **fields):
    return investigation_create(
        team=team or personas.team, user=user or personas.lead, title=title, **fields
    )


def closed(personas, title: str, *, root_cause=None, status=Status.CLOSED, user=None, **fields):
    """A case of the personas' team (or `team`), its root cause confirmed, then closed (or
    resolved)."""
    user = user or personas.lead
    case = a_case(personas, title, user=user, **fields)
    if root_cause is not None:
        case_root_cause_confirm(investigation=case, user=user, root_cause=root_cause)
    return investigation_set_status(
        investigation=case,
        user=user,
        status=status,
        reason="" if root_cause is not None or status != Status.CLOSED else "no time left",
    )


def finding(investigation, rule: str, *, subject="", root_cause=None, status=None, title=None):
    """A finding as the rules record it: English text, and the phrase it was made from."""
    now = timezone.now()
    title = title or Phrase("%(rule)s differs on %(subject)s", rule=rule, subject=subject or "-")
    return Finding.objects.create(
        investigation=investigation,
        rule=rule,
        subject=subject,
        pair_key="a:b",
        severity=FindingSeverity.HIGH,
        explanation="",
        root_cause=root_cause,
        status=status or FindingStatus.OPEN,
        first_seen_at=now,
        last_seen_at=now,
        **with_phrases({"title": title}),
    )


def ranked(personas, investigation=None, user=None) -> list:
    return similar_cases(
        investigation=investigation or personas.investigation, user=user or personas.lead
    )


def titles(found) -> list[str]:
    return [item.case.title for item in found]


# --- ranking ----------------------------------------------------------------------------------


def test_a_governor_finding_finds_the_closed_governor_case_above_a_case_of_like_words(
    personas, governor, vcpus
):
    current = personas.investigation  # "Checkout p99 doubled on the new cloud"
    finding(
        current,
        "cpu_governor",
        root_cause=governor,
        title=Phrase(
            "CPU frequency governor is '%(governor)s' on side %(side)s",
            governor="powersave",
            side="A",
        ),
    )
    distractor = closed(
        personas,
        "Checkout p99 doubled on the new cloud after the move",
        root_cause=vcpus,
        symptom_metric="checkout p99",
    )
    governor_case = closed(personas, "Batch jobs slower in rack seven", root_cause=governor)

    found = ranked(personas)

    assert titles(found) == [governor_case.title, distractor.title]
    first, second = found
    assert first.reasons[0] == (f"same root cause as this case's evidence: {governor.title}")
    assert first.score > second.score
    assert "symptom and title alike" in second.reasons
    assert not any("root cause" in reason for reason in second.reasons)
    # Its confirmed root cause comes along, to show.
    assert [c.root_cause for c in first.case.case_root_causes.all()] == [governor]


def test_a_dismissed_or_resolved_finding_points_to_no_root_cause(personas, governor):
    finding(
        personas.investigation, "cpu_governor", root_cause=governor, status=FindingStatus.DISMISSED
    )
    finding(
        personas.investigation,
        "cpu_clock_at_minimum",
        root_cause=governor,
        status=FindingStatus.RESOLVED,
    )
    closed(personas, "Batch jobs slower in rack seven", root_cause=governor)

    assert ranked(personas) == []


def test_the_cases_own_confirmed_root_cause_counts_too(personas, governor):
    case_root_cause_confirm(
        investigation=personas.investigation, user=personas.lead, root_cause=governor
    )
    past = closed(personas, "Batch jobs slower in rack seven", root_cause=governor)

    [found] = ranked(personas)

    assert found.case == past
    assert found.reasons == [f"same root cause as this case: {governor.title}"]


def test_same_findings_differing_facts_and_path_shape_give_their_reasons(personas):
    current = personas.investigation
    tls = Phrase("TLS and cryptography take %(a)s of the CPU on side A", a="61 %")
    finding(current, "profile_tls_crypto", title=tls)
    finding(current, "fact_differs", subject="kernel.release")
    finding(current, "fact_differs", subject="net.core.somaxconn")
    path_from_text(
        investigation=current, user=personas.lead, text="loadgen -> lb -> app -> db:mysql"
    )
    alike = closed(personas, "Uploads slow", status=Status.RESOLVED)
    finding(alike, "profile_tls_crypto", title=Phrase("TLS and cryptography: %(a)s", a="40 %"))
    finding(alike, "fact_differs", subject="kernel.release")
    path_from_text(investigation=alike, user=personas.lead, text="wrk -> slb -> api -> mysql")
    # Its findings were dismissed, and its path has a hop more.
    dismissed = closed(personas, "Reports slow")
    finding(dismissed, "profile_tls_crypto", status=FindingStatus.DISMISSED)
    finding(dismissed, "fact_differs", subject="kernel.release", status=FindingStatus.DISMISSED)
    path_from_text(
        investigation=dismissed,
        user=personas.lead,
        text="loadgen -> lb -> app -> db:pg -> cache:redis",
    )

    found = ranked(personas)

    assert titles(found) == [alike.title, dismissed.title]
    assert found[0].reasons == [
        f"same finding: {tls}",
        "the same facts differ: kernel.release",
        "same path shape: client -> LB -> service -> database",
    ]
    assert found[1].reasons == ["similar path shape: client -> LB -> service -> database -> cache"]


def test_without_evidence_the_cases_rank_by_their_words(personas):
    current = a_case(
        personas,
        "Order API latency doubled in containers",
        symptom_metric="p99 latency of the order API",
        symptom_load="300 users",
    )
    near = closed(
        personas,
        "Order API latency doubled in containers on the new nodes",
        symptom_metric="p99 latency of the order API",
    )
    farther = closed(
        personas, "Order API slower after the upgrade", symptom_metric="order API latency"
    )
    closed(personas, "Disk writes slow on the database hosts")

    found = ranked(personas, current)

    assert titles(found) == [near.title, farther.title]
    assert found[0].reasons == ["symptom and title alike"]
    assert found[0].score > found[1].score
    # The second-best's words are a weaker match, shown as such: below the best's.
    assert 0 < found[1].score < 2.0


def test_only_resolved_and_closed_cases_of_the_readers_teams_and_never_itself(personas, governor):
    current = personas.investigation
    finding(current, "cpu_governor", root_cause=governor)
    case_root_cause_confirm(investigation=current, user=personas.lead, root_cause=governor)
    investigation_set_status(investigation=current, user=personas.lead, status=Status.CLOSED)
    resolved = closed(
        personas, "Resolved governor case", root_cause=governor, status=Status.RESOLVED
    )
    still_open = a_case(personas, "Open governor case")
    case_root_cause_confirm(investigation=still_open, user=personas.lead, root_cause=governor)
    mitigated = a_case(personas, "Mitigated governor case")
    case_root_cause_confirm(investigation=mitigated, user=personas.lead, root_cause=governor)
    investigation_set_status(investigation=mitigated, user=personas.lead, status=Status.MITIGATED)
    other_team = personas.outsider.memberships.get().team
    elsewhere = closed(
        personas,
        "Another team's governor case",
        root_cause=governor,
        user=personas.outsider,
        team=other_team,
    )

    found = ranked(personas, current)

    assert titles(found) == [resolved.title]
    # The other team's case is the outsider's, and theirs alone.
    assert titles(ranked(personas, elsewhere, user=personas.outsider)) == []


def test_a_case_of_another_team_of_the_reader_is_shown(personas, governor):
    second = team_create(user=personas.lead, name="Second team")
    finding(personas.investigation, "cpu_governor", root_cause=governor)
    there = closed(personas, "Governor case of the second team", root_cause=governor, team=second)

    assert titles(ranked(personas)) == [there.title]
    assert titles(ranked(personas, user=personas.viewer)) == []


def test_the_reasons_read_in_the_readers_language(personas, governor):
    assert governor.title_zh
    finding(personas.investigation, "cpu_governor", root_cause=governor)
    closed(personas, "Batch jobs slower in rack seven", root_cause=governor)

    with translation.override("zh-hans"):
        [found] = ranked(personas)

    assert governor.title_zh in found.reasons[0]
    assert governor.title not in found.reasons[0]


def test_the_limit_keeps_the_best(personas, governor):
    finding(personas.investigation, "cpu_governor", root_cause=governor)
    best = closed(personas, "Governor case", root_cause=governor)
    for number in range(6):
        closed(personas, f"Checkout p99 doubled on the new cloud, again {number}")

    found = similar_cases(investigation=personas.investigation, user=personas.lead, limit=3)

    assert len(found) == 3
    assert found[0].case == best


def test_the_query_count_does_not_grow_with_the_past_cases(
    personas, governor, django_assert_max_num_queries
):
    finding(personas.investigation, "cpu_governor", root_cause=governor)
    path_from_text(
        investigation=personas.investigation, user=personas.lead, text="loadgen -> lb -> app"
    )
    for number in range(30):
        case = closed(personas, f"Checkout slow {number}", root_cause=governor)
        finding(case, "cpu_governor")
        path_from_text(investigation=case, user=personas.lead, text="loadgen -> lb -> app")

    with django_assert_max_num_queries(16):
        found = ranked(personas)

    assert len(found) == 5


# --- path shapes --------------------------------------------------------------------------------


def test_a_path_shape_follows_the_edges_not_the_ids():
    nodes = [(1, "database"), (2, "service"), (3, "load_generator"), (4, "load_balancer")]
    edges = [(3, 4), (4, 2), (2, 1)]

    shape = path_shape(nodes, edges)

    assert shape == ("load_generator", "load_balancer", "service", "database")
    assert shape_text(shape) == "client -> LB -> service -> database"


def test_a_path_shape_survives_a_loop_and_loose_hops():
    nodes = [(1, "service"), (2, "cache"), (3, "other")]

    assert path_shape(nodes, [(1, 2), (2, 1)]) == ("other", "service", "cache")


# --- the API ------------------------------------------------------------------------------------


@pytest.fixture
def governor_cases(personas, governor):
    finding(personas.investigation, "cpu_governor", root_cause=governor)
    return closed(personas, "Batch jobs slower in rack seven", root_cause=governor)


@pytest.mark.parametrize("who", ["lead", "member", "viewer"])
def test_the_api_lists_similar_cases_to_every_reader(personas, governor, governor_cases, who):
    response = ApiClient(getattr(personas, who)).get(
        f"/api/investigations/{personas.investigation.pk}/similar"
    )

    assert response.status_code == 200
    [item] = response.body["items"]
    assert item == {
        "investigation": governor_cases.pk,
        "title": governor_cases.title,
        "status": "closed",
        "score": item["score"],
        "reasons": [f"same root cause as this case's evidence: {governor.title}"],
        "root_causes": [
            {"id": governor.pk, "title": governor.title, "title_zh": governor.title_zh}
        ],
    }
    assert item["score"] >= 10


def test_the_api_answers_in_the_asked_language(personas, governor, governor_cases):
    client = ApiClient(personas.viewer)

    response = client.get(
        f"/api/investigations/{personas.investigation.pk}/similar",
        headers={**client.headers, "Accept-Language": "zh-CN"},
    )

    assert governor.title_zh in response.body["items"][0]["reasons"][0]


def test_the_api_keeps_outsiders_and_strangers_out(personas, governor_cases):
    url = f"/api/investigations/{personas.investigation.pk}/similar"

    outsider = ApiClient(personas.outsider).get(url)
    stranger = ApiClient().get(url)

    assert outsider.status_code == 404
    assert governor_cases.title not in outsider.content.decode()
    assert stranger.status_code == 401
    assert ApiClient(personas.lead).get("/api/investigations/999999/similar").status_code == 404


def test_the_api_limit_is_checked(personas):
    url = f"/api/investigations/{personas.investigation.pk}/similar?limit=0"

    response = ApiClient(personas.lead).get(url)

    assert response.status_code == 422
    assert response.body["errors"][0]["field"] == "limit"


# --- the panel ----------------------------------------------------------------------------------


def panel(personas, who: str, investigation=None):
    investigation = investigation or personas.investigation
    return personas.client(getattr(personas, who)).get(
        f"/investigations/{investigation.pk}/panels/similar/", **HX
    )


def test_the_panel_shows_each_case_with_its_root_cause_and_reasons(
    personas, governor, governor_cases
):
    response = panel(personas, "viewer")

    text = response.content.decode()
    assert response.status_code == 200
    assert f'href="/investigations/{governor_cases.pk}/"' in text
    assert escape(governor_cases.title) in text
    assert escape(governor.title) in text
    assert escape(f"same root cause as this case's evidence: {governor.title}") in text
    assert "No past case like this one yet" not in text


def test_the_panel_reads_in_chinese(personas, governor, governor_cases):
    client = personas.client(personas.viewer)
    client.cookies["django_language"] = "zh-hans"

    text = client.get(
        f"/investigations/{personas.investigation.pk}/panels/similar/", **HX
    ).content.decode()

    assert escape(governor.title_zh) in text


def test_the_panel_says_so_when_there_is_none(personas):
    text = panel(personas, "member").content.decode()

    assert "No past case like this one yet" in text
    assert "compared with your teams' other resolved and closed cases" not in text


def test_on_a_closed_case_the_panel_says_it_compares_with_the_other_closed_ones(personas, governor):
    case = closed(personas, "Batch jobs slower in rack seven", root_cause=governor)

    text = unescape(panel(personas, "viewer", case).content.decode())

    assert (
        "This case is closed: it is compared with your teams' other resolved and closed cases."
        in text
    )


def test_the_panel_shows_a_hostile_title_escaped(personas, governor):
    finding(personas.investigation, "cpu_governor", root_cause=governor)
    closed(personas, '<script>alert("x")</script>', root_cause=governor)

    text = panel(personas, "viewer").content.decode()

    assert "<script>alert" not in text
    assert escape('<script>alert("x")</script>') in text


@pytest.mark.parametrize("extra", [{}, HX], ids=["page", "htmx"])
def test_an_outsider_gets_404_for_the_panel(personas, governor_cases, extra):
    response = personas.client(personas.outsider).get(
        f"/investigations/{personas.investigation.pk}/panels/similar/", **extra
    )

    assert response.status_code == 404
    assert governor_cases.title not in response.content.decode()


def test_someone_signed_out_is_sent_to_sign_in(personas):
    response = Client().get(f"/investigations/{personas.investigation.pk}/panels/similar/")

    assert response.status_code == 302
