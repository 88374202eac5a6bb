"""Similar past cases: the resolved and closed investigations of the reader's teams most like
this one, ranked, each with why. Evidence first, text second.

The signals and their weights (a case's score is their sum):

- **Root cause** (10 for each in common): the root causes this case's evidence points to (its
  open and confirmed findings' `root_cause`) and its own confirmed ones, against each past
  case's confirmed root causes. Every other signal together stays below 10, so a past case
  with the same root cause as this case's evidence always ranks above one without.
- **Same finding** (1.5 each, at most 3 counted): the same rule on the same subject among both
  cases' findings, dismissed ones left out (profile and capture findings included).
- **Differing facts** (0.5 each, at most 3 counted): the same fact keys differ between the
  sides of both cases (the generic rule's `fact_differs` findings).
- **Path shape** (1.5 for the same shape, 1.5 × the likeness down to 0.6): the kinds of the
  traffic path's hops in order ("client -> LB -> service -> database"), compared as sequences.
- **Text** (at most 2): the past case's BM25 score for this case's title and symptom
  (selectors/search.py), as a share of this case's own score for them, so that a weak match
  stays weak however few cases there are.

A past case is shown only with a reason. About a dozen queries, however many past cases there
are: each signal is read for all of them at once.
"""

from collections import defaultdict
from difflib import SequenceMatcher
from typing import NamedTuple

from django.db.models import Prefetch, Q
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

from investigations.choices import ACTIVE_FINDING_STATUSES, FindingStatus, PathNodeKind, Status
from investigations.models import (
    CaseRootCause,
    Finding,
    Investigation,
    Membership,
    PathEdge,
    PathNode,
)
from investigations.phrases import stored_text
from investigations.selectors.knowledge import root_causes_readable
from investigations.selectors.search import search_scores
from investigations.services.search import INVESTIGATION

PAST = (Status.RESOLVED, Status.CLOSED)

ROOT_CAUSE_WEIGHT = 10.0
FINDING_WEIGHT, MAX_FINDINGS = 1.5, 3
FACT_WEIGHT, MAX_FACTS = 0.5, 3
PATH_WEIGHT, MIN_PATH_LIKENESS = 1.5, 0.6
TEXT_WEIGHT, MIN_TEXT_LIKENESS = 2.0, 0.15
FACT_RULE = "fact_differs"
# Reasons name at most this many findings or facts each.
NAMED = 3

# A hop's kind as a path's shape says it.
SHAPE_WORDS = {
    PathNodeKind.LOAD_GENERATOR: _("client"),
    PathNodeKind.DNS: "DNS",
    PathNodeKind.CDN: "CDN",
    PathNodeKind.LOAD_BALANCER: _("LB"),
    PathNodeKind.NAT: "NAT",
    PathNodeKind.GATEWAY: _("gateway"),
    PathNodeKind.SERVICE: _("service"),
    PathNodeKind.DATABASE: _("database"),
    PathNodeKind.CACHE: _("cache"),
    PathNodeKind.MESSAGE_QUEUE: _("queue"),
    PathNodeKind.OBJECT_STORAGE: _("object storage"),
    PathNodeKind.EXTERNAL_API: _("external API"),
    PathNodeKind.OTHER: _("other"),
}


class SimilarCase(NamedTuple):
    case: Investigation  # its confirmed root causes loaded
    score: float
    reasons: list[str]  # in the reader's language, strongest first


def similar_cases(*, investigation: Investigation, user, limit: int = 5) -> list[SimilarCase]:
    """The resolved and closed cases of the user's teams most like `investigation` (never
    itself), best first: see the module's docstring for how they are scored."""
    past = Investigation.objects.filter(
        team__in=Membership.objects.filter(user=user).values("team_id"), status__in=PAST
    ).exclude(pk=investigation.pk)
    past_ids = list(past.values_list("pk", flat=True))
    if not past_ids:
        return []
    scores: dict[int, float] = defaultdict(float)
    reasons: dict[int, list[str]] = defaultdict(list)

    # The root causes this case points to, and its findings (one query each).
    findings = list(
        Finding.objects.filter(investigation=investigation)
        .exclude(status=FindingStatus.DISMISSED)
        .values("rule", "subject", "status", "root_cause_id", "title", "phrases")
    )
    own = set(investigation.case_root_causes.values_list("root_cause_id", flat=True))
    pointed = {
        f["root_cause_id"]
        for f in findings
        if f["root_cause_id"] and f["status"] in ACTIVE_FINDING_STATUSES
    }
    if own | pointed:
        _root_causes(past_ids, own, pointed, scores, reasons, user)
    if findings:
        _findings(past_ids, findings, scores, reasons)
    _path(investigation, past_ids, scores, reasons)
    _text(investigation, past_ids, scores, reasons)

    ranked = sorted((pk for pk in reasons if reasons[pk]), key=lambda pk: (-scores[pk], -pk))
    ranked = ranked[:limit]
    # Only entries the reader reads: a past case of their team names the installation's or
    # that team's entries, and this keeps it so whatever the data holds.
    readable = CaseRootCause.objects.filter(
        root_cause__in=root_causes_readable(user=user)
    ).select_related("root_cause")
    cases = Investigation.objects.prefetch_related(
        Prefetch("case_root_causes", queryset=readable)
    ).in_bulk(ranked)
    return [SimilarCase(cases[pk], round(scores[pk], 2), reasons[pk]) for pk in ranked]


def _root_causes(past_ids, own: set, pointed: set, scores, reasons, user) -> None:
    titles = {
        rc.pk: rc.text("title")
        for rc in root_causes_readable(user=user).filter(pk__in=own | pointed)
    }
    held = CaseRootCause.objects.filter(
        investigation_id__in=past_ids, root_cause_id__in=titles
    ).values_list("investigation_id", "root_cause_id")
    for case_id, root_cause_id in held:
        scores[case_id] += ROOT_CAUSE_WEIGHT
        if root_cause_id in pointed:
            text = gettext("same root cause as this case's evidence: %(title)s")
        else:
            text = gettext("same root cause as this case: %(title)s")
        reasons[case_id].append(text % {"title": titles[root_cause_id]})


def _findings(past_ids, findings: list[dict], scores, reasons) -> None:
    """Same findings (rule and subject), and the same facts differing."""
    mine = {(f["rule"], f["subject"]): f for f in findings}
    theirs = (
        Finding.objects.filter(
            investigation_id__in=past_ids, rule__in={f["rule"] for f in findings}
        )
        .exclude(status=FindingStatus.DISMISSED)
        .values_list("investigation_id", "rule", "subject")
        .distinct()
    )
    same: dict[int, list[dict]] = defaultdict(list)
    facts: dict[int, list[str]] = defaultdict(list)
    for case_id, rule, subject in theirs:
        found = mine.get((rule, subject))
        if found is None:
            continue
        if rule == FACT_RULE:
            facts[case_id].append(subject)
        else:
            same[case_id].append(found)
    for case_id, shared in same.items():
        scores[case_id] += FINDING_WEIGHT * min(len(shared), MAX_FINDINGS)
        for finding in sorted(shared, key=lambda f: (f["rule"], f["subject"]))[:NAMED]:
            reasons[case_id].append(
                gettext("same finding: %(title)s") % {"title": stored_text(finding, "title")}
            )
    for case_id, keys in facts.items():
        scores[case_id] += FACT_WEIGHT * min(len(keys), MAX_FACTS)
        keys = sorted(keys)
        shown = ", ".join(keys[:NAMED]) + (", …" if len(keys) > NAMED else "")
        reasons[case_id].append(gettext("the same facts differ: %(facts)s") % {"facts": shown})


def path_shape(nodes: list[tuple[int, str]], edges: list[tuple[int, int]]) -> tuple[str, ...]:
    """The kinds of a path's hops in the order traffic meets them: nodes as (id, kind),
    edges as (source id, target id). Hops reached by nothing come first, ties by id; a loop
    does not stop the walk (its hops follow by id)."""
    kinds = dict(nodes)
    incoming = {pk: 0 for pk in kinds}
    following = defaultdict(list)
    for source, target in edges:
        if source in kinds and target in kinds:
            following[source].append(target)
            incoming[target] += 1
    order, placed = [], set()
    ready = sorted(pk for pk, count in incoming.items() if count == 0)
    while len(placed) < len(kinds):
        if not ready:
            ready = [min(pk for pk in kinds if pk not in placed)]
        pk = ready.pop(0)
        if pk in placed:
            continue
        placed.add(pk)
        order.append(pk)
        for target in sorted(following[pk]):
            incoming[target] -= 1
            if incoming[target] <= 0 and target not in placed:
                ready.append(target)
        ready.sort()
    return tuple(kinds[pk] for pk in order)


def shape_text(shape: tuple[str, ...]) -> str:
    return " -> ".join(str(SHAPE_WORDS.get(kind, kind)) for kind in shape)


def _path(investigation, past_ids, scores, reasons) -> None:
    nodes: dict[int, list] = defaultdict(list)
    for case_id, pk, kind in PathNode.objects.filter(
        Q(investigation=investigation) | Q(investigation_id__in=past_ids)
    ).values_list("investigation_id", "pk", "kind"):
        nodes[case_id].append((pk, kind))
    if len(nodes.get(investigation.pk, ())) < 2:
        return
    edges: dict[int, list] = defaultdict(list)
    for case_id, source, target in PathEdge.objects.filter(
        investigation_id__in=list(nodes)
    ).values_list("investigation_id", "source_id", "target_id"):
        edges[case_id].append((source, target))
    mine = path_shape(nodes[investigation.pk], edges[investigation.pk])
    for case_id, hops in nodes.items():
        if case_id == investigation.pk or len(hops) < 2:
            continue
        theirs = path_shape(hops, edges[case_id])
        likeness = SequenceMatcher(None, mine, theirs, autojunk=False).ratio()
        if likeness < MIN_PATH_LIKENESS:
            continue
        scores[case_id] += PATH_WEIGHT * likeness
        if theirs == mine:
            text = gettext("same path shape: %(shape)s")
        else:
            text = gettext("similar path shape: %(shape)s")
        reasons[case_id].append(text % {"shape": shape_text(theirs)})


def _text(investigation, past_ids, scores, reasons) -> None:
    query = " ".join(
        part
        for part in (investigation.title, investigation.symptom_metric, investigation.symptom_load)
        if part
    )
    found = dict(
        search_scores(
            kind=INVESTIGATION,
            query=query,
            among=[investigation.pk, *past_ids],
            limit=len(past_ids) + 1,
        )
    )
    # This case's own score for its words is the most a case could match them; a case not
    # (yet) indexed is measured against the best past case instead.
    best = found.pop(investigation.pk, None) or max(found.values(), default=0.0)
    if not best:
        return
    for case_id, score in found.items():
        likeness = min(score / best, 1.0)
        if likeness < MIN_TEXT_LIKENESS:
            continue
        scores[case_id] += TEXT_WEIGHT * likeness
        reasons[case_id].append(gettext("symptom and title alike"))
