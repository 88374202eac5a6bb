"""The knowledge base of root causes (the installation's entries and each team's own): the
list with its search, an entry in the reader's language with the other beside it and its
history, the form that writes both, and the search over the entries the reader reads and the
reader's own investigations."""

import json
from itertools import groupby

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.translation import get_language
from django.utils.translation import gettext_lazy as _
from django.views.decorators.http import require_http_methods, require_safe

from investigations import limits
from investigations.access import knowledge_operator, root_cause_for_user
from investigations.analysis.signals import signal_label
from investigations.choices import Role, RootCauseCategory
from investigations.forms.knowledge import LABELS, RootCauseForm, references_text, signals_text
from investigations.models.knowledge import BILINGUAL
from investigations.selectors.knowledge import (
    root_cause_cases,
    root_cause_findings,
    root_cause_history,
    root_causes_list,
    search_investigations,
)
from investigations.selectors.teams import teams_with_role
from investigations.services.knowledge import (
    EDITABLE,
    root_cause_can_edit,
    root_cause_can_write,
    root_cause_create,
    root_cause_update,
)
from investigations.views.forms import submit
from investigations.views.pages import paginate

SEARCH_ROOT_CAUSES = 10
SEARCH_INVESTIGATIONS = 20
FINDING_CASES = 20


def _query(request: HttpRequest) -> str:
    # A query longer than any title is cut, not refused: it is only ever a search.
    return request.GET.get("q", "").replace("\x00", "").strip()[: limits.SHORT]


def _category(request: HttpRequest) -> str:
    category = request.GET.get("category", "")
    return category if category in RootCauseCategory.values else ""


def _reads_chinese() -> bool:
    return (get_language() or "").startswith("zh")


@require_safe
@login_required
def root_cause_list(request: HttpRequest) -> HttpResponse:
    q, category = _query(request), _category(request)
    page = paginate(
        request, root_causes_list(user=request.user, q=q or None, category=category or None)
    )
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "investigations/root_cause_list.html",
        {
            "page": page,
            "q": q,
            "category": category,
            "categories": RootCauseCategory.choices,
            "query": query.urlencode(),
            "can_write": root_cause_can_write(request.user),
        },
    )


def _sections(root_cause, *, both: bool) -> list[dict]:
    """Each text in the reader's language (the English one where no Chinese is written), and
    the other language's where it says something else."""
    chinese = _reads_chinese()
    sections = []
    for name in BILINGUAL[1:]:
        english, zh = getattr(root_cause, name), getattr(root_cause, f"{name}_zh")
        if chinese and zh:
            text, lang, other, other_lang = zh, "zh-Hans", english, "en"
        else:
            text, lang, other, other_lang = english, "en", zh, "zh-Hans"
        sections.append(
            {
                "name": name,
                "label": LABELS[name],
                "english": english,
                "chinese": zh,
                "text": text,
                "lang": lang,
                "other": other if other.strip() and other != text else "",
                "other_lang": other_lang,
                "both": both,
            }
        )
    return sections


def _findings_by_case(root_cause, user) -> tuple[int, list]:
    """The findings that point to the entry in the user's cases: their count, and
    [(investigation, [findings])] for the first few cases."""
    findings = list(root_cause_findings(root_cause=root_cause, user=user))
    grouped = [
        (investigation, list(rows))
        for investigation, rows in groupby(findings, key=lambda f: f.investigation)
    ]
    return len(findings), grouped[:FINDING_CASES]


def _history(root_cause) -> list[dict]:
    """Each edit as the page shows it: who, when, and each changed field before and after."""
    labels = {
        **LABELS,
        "category": _("Category"),
        "references": _("References"),
        "signals": _("Signals"),
    }
    for name in BILINGUAL:
        labels[f"{name}_zh"] = _("%(label)s (Chinese)") % {"label": LABELS[name]}
    return [
        {
            "revision": revision,
            "changes": [
                {
                    "label": labels.get(name, name),
                    "before": _shown(revision.previous.get(name)),
                    "after": _shown(revision.current.get(name)),
                }
                for name in EDITABLE
                if name in revision.current
            ],
        }
        for revision in root_cause_history(root_cause=root_cause)
    ]


def _shown(value) -> str:
    # References are a list of texts, signals a list of objects; every other field is text.
    if isinstance(value, list):
        return "\n".join(
            v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value
        )
    return value or ""


@require_safe
@login_required
def root_cause_detail(request: HttpRequest, pk: int) -> HttpResponse:
    root_cause = root_cause_for_user(request.user, pk)
    both = request.GET.get("both") == "1"
    findings_count, findings_by_case = _findings_by_case(root_cause, request.user)
    chinese = _reads_chinese()
    return render(
        request,
        "investigations/root_cause_detail.html",
        {
            "root_cause": root_cause,
            "title": root_cause.text("title"),
            "other_title": root_cause.title if chinese else root_cause.title_zh,
            "both": both,
            "sections": _sections(root_cause, both=both),
            "cases": list(root_cause_cases(root_cause=root_cause, user=request.user)),
            "findings_count": findings_count,
            "findings_by_case": findings_by_case,
            "can_edit": root_cause_can_edit(request.user, root_cause),
            "history": _history(root_cause),
            "signals": [
                {**signal, "label": signal_label(signal)}
                for signal in root_cause.signals
                if isinstance(signal, dict)
            ],
        },
    )


def _form_page(request: HttpRequest, form, root_cause=None) -> HttpResponse:
    return render(
        request, "investigations/root_cause_form.html", {"form": form, "root_cause": root_cause}
    )


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def root_cause_new(request: HttpRequest) -> HttpResponse:
    """A lead writes an entry for a team they lead (asked which when they lead several); an
    operator holding `add_rootcause` may write one of the installation."""
    if not root_cause_can_write(request.user):
        raise PermissionDenied(_("Only the leads of a team may write root causes, for their team."))
    teams = teams_with_role(user=request.user, roles=[Role.LEAD])
    operator = knowledge_operator(request.user, "add")
    count = teams.count()
    ask = count > 1 or (operator and count > 0)
    form = RootCauseForm(request.POST or None, teams=teams if ask else None, installation=operator)
    if request.method != "POST":
        return _form_page(request, form)
    return submit(
        form,
        lambda data: root_cause_create(
            user=request.user,
            team=data["team"] if ask else teams.first(),
            **form.service_fields(),
        ),
        done=lambda root_cause: redirect("root_cause_detail", pk=root_cause.pk),
        failed=lambda form: _form_page(request, form),
    )


@require_http_methods(["GET", "HEAD", "POST"])
@login_required
def root_cause_edit(request: HttpRequest, pk: int) -> HttpResponse:
    root_cause = root_cause_for_user(request.user, pk, edit=True)
    initial = {
        name: getattr(root_cause, name)
        for name in [*BILINGUAL, *(f"{n}_zh" for n in BILINGUAL), "category"]
    }
    initial["references"] = references_text(root_cause.references)
    initial["signals"] = signals_text(root_cause.signals)
    form = RootCauseForm(request.POST or None, initial=initial)
    if request.method != "POST":
        return _form_page(request, form, root_cause)
    return submit(
        form,
        lambda data: root_cause_update(
            root_cause=root_cause, user=request.user, **form.service_fields()
        ),
        done=lambda saved: redirect("root_cause_detail", pk=root_cause.pk),
        failed=lambda form: _form_page(request, form, root_cause),
    )


@require_safe
@login_required
def search(request: HttpRequest) -> HttpResponse:
    """The entries the reader reads and the reader's own past investigations, for one query."""
    q = _query(request)
    root_causes = root_causes_list(user=request.user, q=q)[:SEARCH_ROOT_CAUSES] if q else []
    investigations = (
        search_investigations(user=request.user, q=q, limit=SEARCH_INVESTIGATIONS) if q else []
    )
    return render(
        request,
        "investigations/search.html",
        {"q": q, "root_causes": root_causes, "investigations": investigations},
    )
