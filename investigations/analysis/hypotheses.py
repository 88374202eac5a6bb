"""Ranked hypotheses: which knowledge-base entries the case's evidence points to, and why.

Pure: the case's evidence (CaseEvidence, gathered by selectors/hypotheses.py) and the entries
with their signals (analysis/signals.py) in, the ranking out, each score explained signal by
signal. No database.

A score is 0..1. The signals for an entry that the evidence shows combine like independent
witnesses (1 - the product of each one's 1 - weight); each signal against it that the
evidence shows then takes its weight's share off. An entry whose signals name decisive
evidence and none of it is there scores at most DECISIVE_CAP, and ranks below every entry
whose decisive evidence is there, whatever the scores. Only entries with some evidence for
them are ranked: no evidence, no hypothesis; a case whose sides show no difference gets an
empty ranking and the list of what was compared.
"""

from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from investigations.analysis.signals import (
    CAPTURE_MEASURES,
    PROFILE_MEASURES,
    signal_source_kind,
)

DECISIVE_CAP = 0.3
# Below this a hypothesis is a weak lead, not an answer ("no difference found" around it).
LOW_SCORE = 0.3


@dataclass(frozen=True)
class Item:
    """A piece of evidence as a hypothesis names it (the API's {kind, id, summary, url})."""

    kind: str
    id: int | None
    summary: str
    url: str

    def as_dict(self) -> dict:
        return {"kind": self.kind, "id": self.id, "summary": self.summary, "url": self.url}


@dataclass(frozen=True)
class FindingFact:
    rule: str
    subject: str
    item: Item


@dataclass
class CaseEvidence:
    """Everything the ranking reads of one case. `compared` holds, for each kind of evidence
    compared on both sides (facts, baseline, capture, profile, ladder), an Item that says what
    was compared; a kind not in it was not collected."""

    findings: list[FindingFact] = field(default_factory=list)
    # {"benchmark.metric": ("worse" | "about_equal", Item)}
    baseline: dict[str, tuple[str, Item]] = field(default_factory=dict)
    # The newest ladder's verdict: "differs" or "same", with its Item; None: no ladder.
    ladder: tuple[str, Item] | None = None
    # The side the newest ladder found slower where the sides part ("a" or "b"), if it did.
    slower: str | None = None
    compared: dict[str, Item] = field(default_factory=dict)


@dataclass(frozen=True)
class Entry:
    id: int
    slug: str
    title: str
    signals: list[dict]


@dataclass(frozen=True)
class Contribution:
    signal: dict
    delta: float  # how much it moved the score, -1..1
    items: tuple[Item, ...]


@dataclass
class Hypothesis:
    entry: Entry
    score: float
    decisive_met: bool
    contributions: list[Contribution]
    supporting: list[Item]
    against: list[Item]
    missing: list[dict]  # {"kind": evidence kind, "signal": the signal}
    rank: int = 0


def _finding_matches(signal: dict, evidence: CaseEvidence) -> list[Item]:
    rule, subject = signal["rule"], signal.get("subject")
    return [
        found.item
        for found in evidence.findings
        if found.rule == rule and (subject is None or fnmatchcase(found.subject, subject))
    ]


def _measure_matches(signal: dict, evidence: CaseEvidence, rules: dict) -> list[Item]:
    kind = signal["source"]
    found = _finding_matches({"rule": rules[signal["measure"]]}, evidence)
    if signal["verdict"] == "differs":
        return found
    compared = evidence.compared.get(kind)
    return [compared] if compared is not None and not found else []


def signal_matches(signal: dict, evidence: CaseEvidence) -> list[Item]:
    """The evidence that shows the signal ([] if none does)."""
    source = signal["source"]
    if source == "finding":
        return _finding_matches(signal, evidence)
    if source == "capture":
        return _measure_matches(signal, evidence, CAPTURE_MEASURES)
    if source == "profile":
        return _measure_matches(signal, evidence, PROFILE_MEASURES)
    if source == "baseline":
        row = evidence.baseline.get(signal["metric"])
        return [row[1]] if row and row[0] == signal["verdict"] else []
    if source == "ladder":
        ladder = evidence.ladder
        return [ladder[1]] if ladder and ladder[0] == signal["verdict"] else []
    return []


def score_entry(entry: Entry, evidence: CaseEvidence) -> Hypothesis:
    """One entry's score, and which signals moved it by how much."""
    matched_for, matched_against, missing = [], [], []
    decisive = [s for s in entry.signals if s.get("decisive")]
    decisive_met = not decisive
    for signal in entry.signals:
        items = signal_matches(signal, evidence)
        if items:
            (matched_for if signal["direction"] == "for" else matched_against).append(
                (signal, items)
            )
            decisive_met = decisive_met or bool(signal.get("decisive"))
        elif signal_source_kind(signal) not in evidence.compared:
            missing.append({"kind": signal_source_kind(signal), "signal": signal})
    contributions, score = [], 0.0
    for signal, items in sorted(matched_for, key=lambda pair: -pair[0]["weight"]):
        after = 1 - (1 - score) * (1 - signal["weight"])
        contributions.append(Contribution(signal, after - score, tuple(items)))
        score = after
    for signal, items in sorted(matched_against, key=lambda pair: -pair[0]["weight"]):
        after = score * (1 - signal["weight"])
        contributions.append(Contribution(signal, after - score, tuple(items)))
        score = after
    if not decisive_met and score > DECISIVE_CAP + 1e-9:
        contributions.append(Contribution({"source": "cap"}, DECISIVE_CAP - score, ()))
        score = DECISIVE_CAP
    supporting = _unique(item for signal, items in matched_for for item in items)
    against = _unique(item for signal, items in matched_against for item in items)
    # The decisive evidence that was looked for and is not there speaks against it too.
    for signal in [] if decisive_met else decisive:
        kind = signal_source_kind(signal)
        if not signal_matches(signal, evidence) and kind in evidence.compared:
            against = _unique([*against, evidence.compared[kind]])
    return Hypothesis(
        entry=entry,
        score=round(min(max(score, 0.0), 1.0), 3),
        decisive_met=decisive_met,
        contributions=contributions,
        supporting=supporting,
        against=against,
        missing=_unique_missing(missing),
    )


def _unique(items) -> list[Item]:
    seen, kept = set(), []
    for item in items:
        if (item.kind, item.id, item.url, item.summary) not in seen:
            seen.add((item.kind, item.id, item.url, item.summary))
            kept.append(item)
    return kept


def _unique_missing(missing: list[dict]) -> list[dict]:
    """One per kind of evidence, the decisive signal's first."""
    by_kind: dict[str, dict] = {}
    for found in sorted(missing, key=lambda m: (not m["signal"].get("decisive"),)):
        by_kind.setdefault(found["kind"], found)
    return list(by_kind.values())


def rank(entries: list[Entry], evidence: CaseEvidence) -> list[Hypothesis]:
    """The entries with evidence for them, most likely first: those whose decisive evidence
    is there before those whose is not, then by score; at the same score the one less is
    missing for (its evidence more complete), then the one more evidence is for, then by
    title."""
    scored = [score_entry(entry, evidence) for entry in entries if entry.signals]
    ranked = sorted(
        (h for h in scored if h.supporting),
        key=lambda h: (
            not h.decisive_met,
            -h.score,
            len(h.missing),
            -len(h.supporting),
            h.entry.title.lower(),
            h.entry.id,
        ),
    )
    for number, hypothesis in enumerate(ranked, start=1):
        hypothesis.rank = number
    return ranked


def found_difference(ranked: list[Hypothesis]) -> bool:
    """Whether any hypothesis rises above a weak lead."""
    return any(h.score > LOW_SCORE for h in ranked)
