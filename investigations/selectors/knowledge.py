"""Reads of the knowledge base: the entries a reader may read (the installation's and their
teams' own), where an entry was confirmed and which findings point to it (only in the reader's
teams), its history, and the search over entries and over the reader's own investigations."""

from django.contrib.auth.models import AbstractBaseUser
from django.db.models import Q, QuerySet
from django.utils import translation

from investigations.analysis.search_terms import is_latin, query_terms
from investigations.choices import RootCauseCategory
from investigations.models import (
    CaseRootCause,
    Finding,
    Investigation,
    Membership,
    RootCause,
    RootCauseRevision,
)
from investigations.selectors.search import search_scores
from investigations.selectors.teams import of_member
from investigations.services.search import INVESTIGATION, ROOT_CAUSE

# The knowledge base holds tens to a few hundred entries: rank them all.
MAX_ENTRIES = 500
MAX_INVESTIGATIONS = 50
# Words that name a category besides its own name and labels (English and Chinese). A query
# that names a category ("网络延迟", "network latency") wants that category's entries first:
# an entry about logging may say "network" or "延迟" more often than one about packet loss.
CATEGORY_WORDS = {
    RootCauseCategory.CPU: ["处理器", "cpu"],
    RootCauseCategory.MEMORY: ["memory", "内存", "numa"],
    RootCauseCategory.KERNEL: ["kernel", "内核", "sysctl"],
    RootCauseCategory.STORAGE: ["disk", "disks", "io", "磁盘", "硬盘", "存储", "raid"],
    RootCauseCategory.NETWORK: [
        "network",
        "networking",
        "tcp",
        "网络",
        "网卡",
        "链路",
        "丢包",
        "带宽",
    ],
    RootCauseCategory.VIRTUALISATION: ["virtualization", "hypervisor", "vm", "虚拟机", "虚拟化"],
    RootCauseCategory.APPLICATION: ["application", "app", "应用", "代码"],
    RootCauseCategory.CONFIGURATION: ["configuration", "config", "配置"],
}


def _category_words() -> dict[str, list[str]]:
    """{category: the words that name it}: its value, its label in each language and its
    other words, lowercased."""
    named: dict[str, list[str]] = {}
    for category, words in CATEGORY_WORDS.items():
        texts = [category.value, *words]
        for language in ("en", "zh-hans"):
            with translation.override(language):
                texts.append(str(category.label))
        named[category.value] = [text.lower() for text in texts]
    return named


def categories_named(query: str) -> set[str]:
    """The categories a query names: by a Latin word of its own, or by a Chinese word it
    holds (whole: the character pairs the search also matches by would find "处理" in
    any query about processing)."""
    text = query.lower()
    wanted = set(query_terms(text))
    return {
        category
        for category, words in _category_words().items()
        if any((word in text) if not is_latin(word) else (word in wanted) for word in words)
    }


def root_causes_readable(*, user: AbstractBaseUser) -> QuerySet[RootCause]:
    """The entries the user may read: the installation's, and those of the user's teams."""
    if not user.is_authenticated:
        return RootCause.objects.none()
    return RootCause.objects.filter(
        Q(team__isnull=True) | Q(team__in=Membership.objects.filter(user=user).values("team_id"))
    )


def root_causes_for_team(*, team_id: int) -> QuerySet[RootCause]:
    """The entries a case of this team may name: the installation's and the team's own (so
    that every member of the case's team reads each root cause confirmed on it)."""
    return RootCause.objects.filter(Q(team__isnull=True) | Q(team_id=team_id))


def root_causes_list(
    *, user: AbstractBaseUser, q: str | None = None, category: str | None = None
) -> list | QuerySet:
    """The entries the user may read, with their team, best match first with `.score` set
    when searched (`q`), else by category and title (a queryset). `category` narrows either."""
    entries = root_causes_readable(user=user).select_related("team")
    if category:
        entries = entries.filter(category=category)
    if not (q or "").strip():
        return entries.order_by("category", "title", "pk")
    among = entries.values_list("pk", flat=True)
    ranked = dict(search_scores(kind=ROOT_CAUSE, query=q, among=among, limit=MAX_ENTRIES))
    named = categories_named(q)
    if named:
        # The entries of a category the query names come first, whatever their words: each
        # scores above the best of the others.
        lead = max(ranked.values(), default=0.0) + 1.0
        for pk in entries.filter(category__in=named).values_list("pk", flat=True):
            ranked[pk] = ranked.get(pk, 0.0) + lead
    rows = entries.in_bulk(list(ranked))
    found = []
    for pk, score in sorted(ranked.items(), key=lambda item: (-item[1], item[0])):
        if pk in rows:
            rows[pk].score = score
            found.append(rows[pk])
    return found


def root_cause_history(*, root_cause: RootCause) -> QuerySet[RootCauseRevision]:
    """The entry's revisions, newest first, with their author."""
    return root_cause.revisions.select_related("author").order_by("-created_at", "-pk")


def root_cause_cases(*, root_cause: RootCause, user: AbstractBaseUser) -> QuerySet[CaseRootCause]:
    """Where the entry was confirmed, among the investigations of the user's teams only (a
    foreign case is not even counted), newest first, with the investigation loaded."""
    return (
        of_member(
            CaseRootCause.objects.filter(root_cause=root_cause), user, path="investigation__team"
        )
        .select_related("investigation")
        .order_by("-confirmed_at", "-pk")
    )


def root_cause_findings(*, root_cause: RootCause, user: AbstractBaseUser) -> QuerySet[Finding]:
    """The findings whose rule points to the entry, in the user's teams' investigations only,
    with their investigation loaded."""
    return (
        of_member(Finding.objects.filter(root_cause=root_cause), user, path="investigation__team")
        .select_related("investigation")
        .order_by("investigation_id", "status", "-last_seen_at")
    )


def search_investigations(
    *, user: AbstractBaseUser, q: str, limit: int = MAX_INVESTIGATIONS
) -> list[Investigation]:
    """The user's teams' investigations that match `q`, best first, each with `.score`."""
    if not (q or "").strip():
        return []
    mine = of_member(Investigation.objects.all(), user).values_list("pk", flat=True)
    ranked = search_scores(kind=INVESTIGATION, query=q, among=mine, limit=limit)
    rows = Investigation.objects.select_related("team").in_bulk([pk for pk, _ in ranked])
    found = []
    for pk, score in ranked:
        if pk in rows:
            rows[pk].score = score
            found.append(rows[pk])
    return found
