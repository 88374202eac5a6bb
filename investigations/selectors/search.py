"""Search over the index services/search.py writes: BM25 over weighted terms, in English and
Chinese alike. A Latin query word of three letters or more also finds the words it begins
("power" finds "powersave"), at half the weight."""

import math
from collections import defaultdict

from django.db.models import Avg, Count, Q

from investigations.analysis.search_terms import is_latin, query_terms
from investigations.models import SearchDocument, SearchTerm

K1, B = 1.2, 0.75
PREFIX_WEIGHT = 0.5
MIN_PREFIX = 3


def search_scores(*, kind: str, query: str, among=None, limit: int = 50) -> list[tuple[int, float]]:
    """[(object id, score)] of the `kind` documents that match the query, best first;
    `among`: only these object ids (a user's own investigations, say)."""
    wanted = query_terms(query)
    if not wanted:
        return []
    documents = SearchDocument.objects.filter(kind=kind)
    if among is not None:
        documents = documents.filter(object_id__in=among)
    stats = SearchDocument.objects.filter(kind=kind).aggregate(n=Count("id"), avg=Avg("length"))
    total, average = stats["n"] or 0, stats["avg"] or 1.0
    if not total:
        return []
    matches = Q(term__in=wanted)
    prefixes = [t for t in wanted if is_latin(t) and len(t) >= MIN_PREFIX]
    for prefix in prefixes:
        matches |= Q(term__startswith=prefix)
    postings = SearchTerm.objects.filter(matches, document__in=documents).values_list(
        "term", "weight", "document__object_id", "document__length"
    )
    # For each query term: the documents that hold it (exactly, or by its prefix).
    holding: dict[str, dict[int, tuple[float, int, float]]] = defaultdict(dict)
    for term, weight, object_id, length in postings:
        for asked in wanted:
            if term == asked:
                factor = 1.0
            elif asked in prefixes and term.startswith(asked):
                factor = PREFIX_WEIGHT
            else:
                continue
            best = holding[asked].get(object_id)
            if best is None or weight * factor > best[0] * best[2]:
                holding[asked][object_id] = (weight, length, factor)
    scores: dict[int, float] = defaultdict(float)
    for found in holding.values():
        idf = math.log(1 + (total - len(found) + 0.5) / (len(found) + 0.5))
        for object_id, (weight, length, factor) in found.items():
            saturated = weight * (K1 + 1) / (weight + K1 * (1 - B + B * length / average))
            scores[object_id] += factor * idf * saturated
    ranked = sorted(scores.items(), key=lambda item: (-item[1], item[0]))
    return ranked[:limit]
