"""The scoring engine of a case's likely causes (analysis/hypotheses.py) and the signal
vocabulary (analysis/signals.py), without a database: the shipped entries' signals against
the findings the product's own rules raise for each seed cause."""

import json
from pathlib import Path

import pytest

from collectors.stacks.profile import FoldedProfile
from investigations.analysis.capture_rules import evaluate_captures
from investigations.analysis.hypotheses import (
    DECISIVE_CAP,
    LOW_SCORE,
    CaseEvidence,
    Entry,
    FindingFact,
    Item,
    found_difference,
    rank,
    score_entry,
)
from investigations.analysis.profile_rules import evaluate_profiles
from investigations.analysis.rules import evaluate
from investigations.analysis.signals import signal_label, signals_clean

SHIPPED = json.loads(
    (
        Path(__file__).resolve().parents[2] / "investigations/migrations/data/root_causes.json"
    ).read_text(encoding="utf-8")
)
ENTRIES = [
    Entry(number, entry["slug"], entry["title"], entry["signals"])
    for number, entry in enumerate(SHIPPED, start=1)
]
COMPARED = {
    kind: Item(kind, None, f"{kind} of both sides", f"/{kind}/")
    for kind in ("facts", "baseline", "capture", "profile", "ladder")
}


def evidence_of(verdicts, *, compared=COMPARED, baseline=None) -> CaseEvidence:
    return CaseEvidence(
        findings=[
            FindingFact(v.rule, v.subject, Item("finding", n, str(v.title), f"#finding-{n}"))
            for n, v in enumerate(verdicts, start=1)
        ],
        baseline=baseline or {},
        compared=dict(compared),
    )


def first(evidence: CaseEvidence) -> str:
    ranked = rank(ENTRIES, evidence)
    assert ranked, "nothing ranked"
    return ranked[0].entry.slug


BASE = {
    "cpu.governor": "performance",
    "mm.thp.enabled": "always",
    "clocksource.current": "tsc",
    "cpu.vulnerabilities.meltdown": "Not affected",
    "service.cgroup.cpu_quota": "max",
    "service.cgroup.cpuset": "0-7",
    "cpu.count": 8,
}


def facts_with(**changed) -> list:
    a = {**BASE, **{key.replace("__", "."): value for key, value in changed.items()}}
    return evaluate(a, dict(BASE))


def capture(**fields) -> dict:
    analysis = {
        "packets": 10000,
        "retransmissions": 0,
        "zero_windows": 0,
        "connections": 4,
        "connection": {"requests": 2000, "handshake": {"p90": 0.0002}},
        "tls": {"client_hellos": 4},
        "gaps": [],
    }
    for key, value in fields.items():
        analysis[key] = value
    return analysis


def profile(stacks: dict) -> FoldedProfile:
    return FoldedProfile(weights=stacks, samples={k: int(v) for k, v in stacks.items()})


CALM = {"main;work;compute": 900, "main;work;io": 100}

SEEDS = [
    ("cpu-governor-powersave", lambda: facts_with(cpu__governor="powersave")),
    ("transparent-huge-pages", lambda: facts_with(mm__thp__enabled="madvise")),
    ("slow-clocksource", lambda: facts_with(clocksource__current="hpet")),
    (
        "cpu-vulnerability-mitigations",
        lambda: facts_with(cpu__vulnerabilities__meltdown="Mitigation: PTI"),
    ),
    ("cgroup-cpu-throttling", lambda: facts_with(service__cgroup__cpu_quota="50000 100000")),
    ("fewer-cpus", lambda: facts_with(service__cgroup__cpuset="0-1")),
    (
        "short-lived-tls-connections",
        lambda: (
            evaluate_captures(
                capture(
                    connections=1000, connection={"requests": 2000}, tls={"client_hellos": 1000}
                ),
                capture(),
            )
            + evaluate_profiles(
                profile({"main;handle;SSL_do_handshake;ecdsa_sign": 600, **CALM}), profile(CALM)
            )
        ),
    ),
    (
        "synchronous-logging-lock",
        lambda: evaluate_profiles(
            profile({"main;log;pthread_mutex_lock;futex_wait": 700, **CALM}), profile(CALM)
        ),
    ),
    (
        "too-many-vcpus",
        lambda: (
            facts_with(cpu__count=32)
            + evaluate_profiles(
                profile({"main;work;pthread_mutex_lock;futex_wait": 700, **CALM}), profile(CALM)
            )
        ),
    ),
    ("fewer-cpus", lambda: facts_with(cpu__count=2)),
    (
        "client-waits-before-requests",
        lambda: evaluate_captures(
            capture(
                connection={"requests": 20},
                gaps=[
                    {"silent": "client", "before": "request", "seconds": 0.2, "stream": n}
                    for n in range(20)
                ],
            ),
            capture(connection={"requests": 20}),
        ),
    ),
    ("slow-receiver-zero-window", lambda: evaluate_captures(capture(zero_windows=40), capture())),
    (
        "packet-loss-retransmissions",
        lambda: evaluate_captures(capture(retransmissions=500), capture()),
    ),
    (
        "slow-tcp-handshakes",
        lambda: evaluate_captures(
            capture(connection={"requests": 2000, "handshake": {"p90": 0.05}}), capture()
        ),
    ),
]


@pytest.mark.parametrize("slug, verdicts", SEEDS, ids=[slug for slug, _ in SEEDS])
def test_each_seed_cause_is_ranked_first_from_the_evidence_its_rules_raise(slug, verdicts):
    found = verdicts()
    assert found, "the rules raised nothing"
    evidence = evidence_of(found)
    assert first(evidence) == slug
    top = rank(ENTRIES, evidence)[0]
    assert top.score > LOW_SCORE and top.decisive_met
    assert top.supporting and all(item.kind == "finding" for item in top.supporting)


def test_identical_sides_rank_nothing_above_a_low_score():
    evidence = evidence_of(
        evaluate(dict(BASE), dict(BASE))
        + evaluate_captures(capture(), capture())
        + evaluate_profiles(profile(CALM), profile(CALM)),
        baseline={"cpu_1.events_per_second": ("about_equal", COMPARED["baseline"])},
    )
    ranked = rank(ENTRIES, evidence)
    assert all(h.score <= LOW_SCORE for h in ranked)
    assert not found_difference(ranked)


def test_a_cause_without_its_decisive_evidence_is_not_ranked_above_one_with_it():
    # A strong signal that is not decisive against a weak decisive one.
    strong = Entry(
        1,
        "strong",
        "Strong",
        [
            {"source": "finding", "rule": "a", "weight": 0.9, "direction": "for"},
            {
                "source": "finding",
                "rule": "never",
                "weight": 0.5,
                "direction": "for",
                "decisive": True,
            },
        ],
    )
    weak = Entry(
        2,
        "weak",
        "Weak",
        [
            {"source": "finding", "rule": "b", "weight": 0.2, "direction": "for", "decisive": True},
        ],
    )
    evidence = evidence_of([])
    evidence.findings = [
        FindingFact("a", "", Item("finding", 1, "a", "#1")),
        FindingFact("b", "", Item("finding", 2, "b", "#2")),
    ]
    ranked = rank([strong, weak], evidence)
    assert [h.entry.slug for h in ranked] == ["weak", "strong"]
    assert ranked[1].score == DECISIVE_CAP
    assert ranked[1].contributions[-1].signal == {"source": "cap"}
    # What it would need was looked for (facts were compared) and is not there.
    assert COMPARED["facts"] in ranked[1].against


def test_at_the_same_score_the_cause_with_nothing_missing_comes_first_not_the_first_title():
    decisive = {"source": "finding", "weight": 0.6, "direction": "for", "decisive": True}
    alpha = Entry(
        1,
        "alpha",
        "Alpha",
        [
            {**decisive, "rule": "a"},
            {"source": "profile", "measure": "lock_contention", "verdict": "differs",
             "weight": 0.5, "direction": "for"},
        ],
    )  # fmt: skip
    beta = Entry(2, "beta", "Beta", [{**decisive, "rule": "b"}])
    evidence = evidence_of([], compared={k: v for k, v in COMPARED.items() if k != "profile"})
    evidence.findings = [
        FindingFact("a", "", Item("finding", 1, "a", "#1")),
        FindingFact("b", "", Item("finding", 2, "b", "#2")),
    ]

    ranked = rank([alpha, beta], evidence)

    assert [h.score for h in ranked] == [0.6, 0.6]
    assert [h.entry.slug for h in ranked] == ["beta", "alpha"]
    assert [m["kind"] for m in ranked[1].missing] == ["profile"]
    # With the profiles compared (and nothing found there), nothing is missing: the title
    # decides.
    evidence.compared = dict(COMPARED)
    assert [h.entry.slug for h in rank([alpha, beta], evidence)] == ["alpha", "beta"]


def test_missing_sources_are_named_and_contributions_add_up_to_the_score():
    entry = next(e for e in ENTRIES if e.slug == "short-lived-tls-connections")
    evidence = evidence_of(
        evaluate_captures(
            capture(connections=1000, connection={"requests": 2000}, tls={"client_hellos": 1000}),
            capture(),
        ),
        compared={"capture": COMPARED["capture"]},
    )
    hypothesis = score_entry(entry, evidence)
    assert [m["kind"] for m in hypothesis.missing] == ["profile"]
    assert hypothesis.score == pytest.approx(sum(c.delta for c in hypothesis.contributions), 1e-3)
    assert all(c.delta > 0 for c in hypothesis.contributions)


def test_evidence_against_lowers_the_score():
    entry = next(e for e in ENTRIES if e.slug == "cpu-governor-powersave")
    verdicts = facts_with(cpu__governor="powersave")
    alone = score_entry(entry, evidence_of(verdicts)).score
    equal = score_entry(
        entry,
        evidence_of(
            verdicts,
            baseline={"cpu_1.events_per_second": ("about_equal", COMPARED["baseline"])},
        ),
    )
    assert equal.score < alone
    assert equal.against == [COMPARED["baseline"]]
    assert equal.contributions[-1].delta < 0


def test_every_shipped_entry_has_valid_signals_and_a_decisive_one_where_evidence_exists():
    for entry in SHIPPED:
        cleaned, problems = signals_clean(entry["signals"])
        assert not problems, entry["slug"]
        assert cleaned == entry["signals"], entry["slug"]
        assert any(s["direction"] == "for" for s in cleaned), entry["slug"]
        for signal in cleaned:
            assert signal_label(signal)


@pytest.mark.parametrize(
    "signals, problem",
    [
        ({"source": "finding"}, "list"),
        ([{"source": "smoke", "weight": 0.5}], "source must be one of"),
        ([{"source": "finding", "weight": 0.5}], "rule is required"),
        ([{"source": "finding", "rule": "x", "weight": 1.5}], "weight must be"),
        ([{"source": "finding", "rule": "x", "weight": True}], "weight must be"),
        ([{"source": "finding", "rule": "x", "weight": 0.5, "direction": "up"}], "direction"),
        ([{"source": "finding", "rule": "x", "weight": 0.5, "colour": 1}], "unknown field"),
        ([{"source": "finding", "rule": "$(rm -rf)", "weight": 0.5}], "rule must be"),
        ([{"source": "capture", "measure": "x", "verdict": "differs", "weight": 0.5}], "measure"),
        ([{"source": "baseline", "metric": "cpu_1", "verdict": "worse", "weight": 0.5}], "metric"),
        (
            [
                {
                    "source": "ladder",
                    "verdict": "same",
                    "weight": 0.5,
                    "direction": "against",
                    "decisive": True,
                }
            ],
            "decisive",
        ),
        (["text"], "object"),
    ],
)
def test_signals_are_refused_with_a_reason_naming_the_signal(signals, problem):
    cleaned, problems = signals_clean(signals)
    assert problems and problem in problems[0]
    if isinstance(signals, list):
        assert problems[0].startswith("Signal 1")
