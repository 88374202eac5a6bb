"""Reads of a case's likely causes: the evidence the case holds, however it came (collected,
imported, recorded by hand), summarised for the scoring engine (analysis/hypotheses.py), and
the knowledge-base entries the case may name with their signals.

A fixed number of queries whatever the case holds: the findings, the newest fact snapshots,
the baseline results, which sides have captures and profiles, the newest analysed ladder,
and the entries.
"""

from django.db.models import Q
from django.urls import reverse
from django.utils.translation import gettext, gettext_noop, ngettext

from investigations.analysis.hypotheses import (
    CaseEvidence,
    Entry,
    FindingFact,
    Hypothesis,
    Item,
    found_difference,
    rank,
)
from investigations.analysis.signals import signal_label
from investigations.choices import (
    ACTIVE_FINDING_STATUSES,
    BaselineVerdict,
    CaptureStatus,
    EvidenceKind,
    LadderStatus,
    SideKey,
)
from investigations.models import Investigation, Ladder
from investigations.phrases import stored_text
from investigations.selectors.baselines import baseline_table
from investigations.selectors.captures import COMPARABLE
from investigations.selectors.facts import fact_pairs
from investigations.selectors.knowledge import root_causes_for_team

# The ladder statuses whose analysis says where the sides part.
ANALYSED_LADDERS = [
    LadderStatus.COMPLETED,
    LadderStatus.FAILED,
    LadderStatus.CANCELLED,
    LadderStatus.IMPORTED,
]


def _case_url(investigation: Investigation, anchor: str) -> str:
    return reverse("investigation_detail", args=[investigation.pk]) + f"#{anchor}"


def _findings(investigation: Investigation) -> list[FindingFact]:
    rows = investigation.findings.filter(status__in=ACTIVE_FINDING_STATUSES).only(
        "id", "investigation_id", "rule", "subject", "title", "phrases", "side_a", "side_b"
    )
    found = []
    for finding in rows:
        summary = stored_text(finding, "title")
        if finding.side_a or finding.side_b:
            summary = f"{summary} (A: {finding.side_a or '—'}, B: {finding.side_b or '—'})"
        found.append(
            FindingFact(
                rule=finding.rule,
                subject=finding.subject,
                item=Item(
                    EvidenceKind.FINDING,
                    finding.pk,
                    summary,
                    _case_url(investigation, f"finding-{finding.pk}"),
                ),
            )
        )
    return found


def _baseline(investigation: Investigation, findings: list[FindingFact], evidence: CaseEvidence):
    rows = [row for row in baseline_table(investigation=investigation) if row.verdict]
    if not rows:
        return
    url = reverse("baseline_page", args=[investigation.pk])
    by_rule = {(f.rule, f.subject): f.item for f in findings if f.rule.startswith("baseline.")}
    for row in rows:
        metric = f"{row.benchmark}.{row.metric}"
        verdict, faster_is_worse = _baseline_verdict(row.verdict, evidence.slower)
        if evidence.baseline.get(metric, ("",))[0] == "worse":
            continue
        item = by_rule.get((f"baseline.{metric}", row.role)) or Item(
            "baseline",
            None,
            gettext("Baseline %(metric)s: %(a)s on A, %(b)s on B")
            % {"metric": metric, "a": f"{row.a:g}", "b": f"{row.b:g}"}
            if row.a is not None and row.b is not None
            else metric,
            url,
        )
        if faster_is_worse:
            item = Item(
                item.kind,
                item.id,
                gettext(
                    "%(summary)s: worse on the faster side, so it does not explain why side "
                    "%(slower)s is slower"
                )
                % {"summary": item.summary, "slower": evidence.slower.upper()},
                item.url,
            )
        evidence.baseline[metric] = (verdict, item)
    evidence.compared["baseline"] = Item(
        "baseline",
        None,
        ngettext(
            "Baseline pack: %(count)s row compared",
            "Baseline pack: %(count)s rows compared",
            len(rows),
        )
        % {"count": len(rows)},
        url,
    )


def _baseline_verdict(row_verdict: str, slower: str | None) -> tuple[str, bool]:
    """(a baseline row as the signals read it: "worse" where it shows the slower side worse,
    "about_equal" where it shows no difference; whether the row shows the faster side worse).
    A row that shows the side the ladder found faster worse explains nothing of the gap: it
    counts as no difference. Without a slower side, any difference counts."""
    if row_verdict == BaselineVerdict.ABOUT_EQUAL:
        return "about_equal", False
    worse = "a" if row_verdict == BaselineVerdict.WORSE else "b"
    if slower is not None and worse != slower:
        return "about_equal", True
    return "worse", False


def _both_sides(rows) -> bool:
    return {SideKey.A, SideKey.B} <= set(rows.values_list("side__key", flat=True).distinct())


def _ladder(investigation: Investigation, evidence: CaseEvidence) -> Item | None:
    """The newest analysed ladder's verdict and the side it found slower, into `evidence`;
    its Item, or None without one."""
    ladder = (
        Ladder.objects.filter(investigation=investigation, status__in=ANALYSED_LADDERS)
        .exclude(analysis={})
        .only("id", "investigation_id", "analysis", "status")
        .order_by("-created_at", "-id")
        .first()
    )
    divergence = (ladder.analysis or {}).get("divergence") if ladder else None
    if not divergence:
        return None
    reason = stored_text(divergence, "reason")
    item = Item(
        EvidenceKind.LADDER,
        ladder.pk,
        gettext("Ladder #%(id)s: %(reason)s") % {"id": ladder.pk, "reason": reason},
        reverse("ladder_detail", args=[ladder.pk]),
    )
    evidence.ladder = ("differs" if divergence.get("load") is not None else "same", item)
    evidence.slower = divergence.get("slower") if divergence.get("slower") in ("a", "b") else None
    evidence.compared["ladder"] = item
    return item


def case_evidence(*, investigation: Investigation) -> CaseEvidence:
    """Everything the ranking reads of the case, and what was compared on both sides."""
    evidence = CaseEvidence(findings=_findings(investigation))
    pairs = [p for p in fact_pairs(investigation=investigation, load_facts=False) if p.complete]
    if pairs:
        evidence.compared["facts"] = Item(
            "facts",
            None,
            ngettext(
                "Host facts of %(count)s host pair",
                "Host facts of %(count)s host pairs",
                len(pairs),
            )
            % {"count": len(pairs)},
            reverse("facts_diff", args=[investigation.pk]),
        )
    # The ladder first (its item still listed last): the side it found slower decides what a
    # baseline row shows.
    ladder = _ladder(investigation, evidence)
    _baseline(investigation, evidence.findings, evidence)
    captures = investigation.captures.filter(COMPARABLE, job__status=CaptureStatus.READY)
    if _both_sides(captures):
        evidence.compared["capture"] = Item(
            EvidenceKind.CAPTURE,
            None,
            gettext("Packet captures of both sides"),
            reverse("capture_compare", args=[investigation.pk]),
        )
    if _both_sides(investigation.profiles.all()):
        evidence.compared["profile"] = Item(
            EvidenceKind.PROFILE,
            None,
            gettext("CPU profiles of both sides"),
            reverse("profile_diff", args=[investigation.pk]),
        )
    if ladder is not None:  # listed last, as the method runs it
        evidence.compared["ladder"] = evidence.compared.pop("ladder")
    return evidence


def case_entries(*, investigation: Investigation) -> list[Entry]:
    """The entries the case may name (the installation's and its team's) that have signals."""
    rows = (
        root_causes_for_team(team_id=investigation.team_id)
        .exclude(Q(signals=[]) | Q(signals__isnull=True))
        .only("id", "slug", "title", "title_zh", "signals")
    )
    return [
        Entry(row.pk, row.slug, row.local_title, [s for s in row.signals if isinstance(s, dict)])
        for row in rows
    ]


def case_hypotheses(*, investigation: Investigation) -> dict:
    """The case's likely causes, most likely first, with the evidence for and against each,
    what would settle it and what was compared:
    {"hypotheses": [Hypothesis], "compared": [Item], "difference_found": bool}."""
    evidence = case_evidence(investigation=investigation)
    ranked = rank(case_entries(investigation=investigation), evidence)
    return {
        "hypotheses": ranked,
        "compared": list(evidence.compared.values()),
        "difference_found": found_difference(ranked),
    }


# What each kind of evidence settles, as the hypothesis's `missing` says it.
MISSING_TEXT = {
    "facts": gettext_noop("Host facts of both sides (the facts diff and its findings)"),
    "baseline": gettext_noop("The baseline pack on both sides"),
    "capture": gettext_noop("A packet capture of both sides at the knee"),
    "profile": gettext_noop("A CPU profile of both sides at the knee"),
    "ladder": gettext_noop("A ladder on both sides, to find the load where they part"),
}


def missing_text(kind: str, signal: dict) -> str:
    return gettext("%(what)s: would show %(signal)s") % {
        "what": gettext(MISSING_TEXT[kind]),
        "signal": signal_label(signal),
    }


def next_step(hypothesis: Hypothesis) -> str:
    """What to do next for this hypothesis: collect what would settle it, else confirm it."""
    if hypothesis.missing:
        return gettext("Collect: %(what)s.") % {
            "what": gettext(MISSING_TEXT[hypothesis.missing[0]["kind"]])
        }
    if not hypothesis.decisive_met:
        return gettext(
            "Its decisive evidence is not there: look at the hosts as its entry's detection says "
            "before believing it."
        )
    return gettext(
        "Check it on the hosts as its entry says, confirm it as the root cause, apply the fix "
        "and run the same ladder again."
    )
