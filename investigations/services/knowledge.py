"""The knowledge base of root causes, and the root causes confirmed on a case.

An entry belongs to one team or to the installation (investigations/access.py says who reads
and edits which). A lead writes entries for the teams they lead; an operator holding
`add_rootcause` writes the installation's. Every edit keeps a revision with its author and the
text it replaced, in the edit's transaction.

A case's root causes are confirmed by its responders and leads: entries of the installation or
of the case's team, each with the evidence that proves it (findings, profiles, captures,
ladders, timeline entries of the same case) and the fix applied; each lands on the timeline,
and the checklist's root-cause step completes itself from them.
"""

from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.db.models import Q
from django.utils import timezone
from django.utils.text import slugify
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.phrase import Phrase, joined
from investigations import limits
from investigations.access import (
    knowledge_operator,
    role_in_team,
    root_cause_can_edit,
    root_cause_edit_refusal,
)
from investigations.analysis.ladder_compare import CLOSED, VERDICT_WORDS
from investigations.analysis.signals import signals_clean
from investigations.choices import EventKind, Role, RootCauseCategory
from investigations.kinds import evidence_kinds
from investigations.models import (
    CaseRootCause,
    Investigation,
    Membership,
    Postmortem,
    RootCause,
    RootCauseRevision,
)
from investigations.models.knowledge import BILINGUAL
from investigations.selectors.ladder_compare import latest_rerun_comparison
from investigations.services.checklist import (
    Missing,
    checklist_evidence,
    checklist_refresh,
    placement_free,
)
from investigations.services.search import investigation_index, root_cause_index
from investigations.services.timeline import timeline_event_log

# Every text of an entry a person writes, with its limit.
TEXT_FIELDS = {
    **{name: limits.TITLE for name in ("title", "title_zh")},
    **{f"{name}{suffix}": limits.ENTRY for name in BILINGUAL[1:] for suffix in ("", "_zh")},
}
EDITABLE = [*TEXT_FIELDS, "category", "references", "signals"]
MAX_REFERENCES = 20
MAX_EVIDENCE = 50


def root_cause_can_write(user) -> bool:
    """A lead of some team (for that team), or an operator (for the installation)."""
    return bool(
        user.is_authenticated
        and (
            Membership.objects.filter(user=user, role=Role.LEAD).exists()
            or knowledge_operator(user, "add")
        )
    )


def _clean(fields: dict, *, creating: bool) -> dict:
    errors, cleaned = {}, {}
    unknown = set(fields) - set(EDITABLE)
    for name in sorted(unknown):
        errors[name] = _("Not a field of a root cause.")
    for name, limit in TEXT_FIELDS.items():
        if name not in fields:
            continue
        value = fields[name]
        if not isinstance(value, str):
            errors[name] = _("Write it as text.")
            continue
        value = value.strip()
        if problem := limits.too_long(value, limit):
            errors[name] = problem
        cleaned[name] = value
    if (creating or "title" in fields) and not cleaned.get("title"):
        errors["title"] = _("Give the root cause a title (in English; Chinese beside it).")
    if "category" in fields or creating:
        category = fields.get("category") or RootCauseCategory.OTHER
        if category not in RootCauseCategory.values:
            errors["category"] = _("Choose one of: %(choices)s.") % {
                "choices": ", ".join(RootCauseCategory.values)
            }
        cleaned["category"] = category
    if "references" in fields:
        references = fields["references"]
        if isinstance(references, str):
            references = references.splitlines()
        if not isinstance(references, list) or not all(isinstance(r, str) for r in references):
            errors["references"] = _("Give the references as a list of texts.")
        else:
            references = [r.strip() for r in references if r.strip()]
            if len(references) > MAX_REFERENCES:
                errors["references"] = _("At most %(count)s references.") % {
                    "count": MAX_REFERENCES
                }
            elif any(limits.too_long(r, limits.SPEC) for r in references):
                errors["references"] = limits.too_long(max(references, key=len), limits.SPEC)
            cleaned["references"] = references
    if "signals" in fields:
        signals, problems = signals_clean(fields["signals"])
        if problems:
            errors["signals"] = problems
        cleaned["signals"] = signals
    if errors:
        raise ValidationError(errors)
    return cleaned


def _unique_slug(title: str) -> str:
    base = slugify(title)[:70] or "root-cause"
    slug, number = base, 2
    while RootCause.objects.filter(slug=slug).exists():
        slug, number = f"{base}-{number}", number + 1
    return slug


@transaction.atomic
def root_cause_create(*, user, team=None, **fields) -> RootCause:
    """A new entry: of `team`, which the user leads, or with no team of the installation,
    which only an operator holding `add_rootcause` may write."""
    if team is not None and role_in_team(user, team.pk) != Role.LEAD:
        raise PermissionDenied(_("Only the leads of a team may write its root causes."))
    if team is None and not knowledge_operator(user, "add"):
        raise PermissionDenied(
            _(
                "Only operators holding the permission to add root causes may write entries "
                "every team reads; a lead writes them for their team."
            )
        )
    cleaned = _clean(fields, creating=True)
    root_cause = RootCause.objects.create(
        slug=_unique_slug(cleaned["title"]), team=team, created_by=user, **cleaned
    )
    root_cause_index(root_cause=root_cause)
    return root_cause


@transaction.atomic
def root_cause_update(*, root_cause: RootCause, user, **fields) -> RootCause:
    """Change an entry (its team's leads, or for the installation's an operator holding
    `change_rootcause`), keeping a revision of what changed."""
    if not root_cause_can_edit(user, root_cause):
        raise PermissionDenied(root_cause_edit_refusal(root_cause))
    cleaned = _clean(fields, creating=False)
    # The row as it is now, locked: two edits at once each record what they replaced.
    current = RootCause.objects.select_for_update().get(pk=root_cause.pk)
    previous, changed = {}, {}
    for name, value in cleaned.items():
        if getattr(current, name) != value:
            previous[name], changed[name] = getattr(current, name), value
        setattr(current, name, value)
    if not changed:
        return current
    current.save()
    RootCauseRevision.objects.create(
        root_cause=current,
        author=user,
        author_name=user.get_username(),
        created_at=current.updated_at,
        previous=previous,
        current=changed,
    )
    root_cause_index(root_cause=current)
    for case in Investigation.objects.filter(case_root_causes__root_cause=current):
        investigation_index(investigation=case)
    return current


# --- a case's root causes ----------------------------------------------------------------------


def _evidence_models() -> dict:
    """{kind: model} of every kind a root cause may name as evidence."""
    return {kind.key: kind.evidence.model for kind in evidence_kinds()}


def _clean_evidence(investigation: Investigation, evidence) -> list[dict]:
    """[{"kind", "id"}], each of this case; a ValidationError names what is not."""
    if evidence in (None, ""):
        return []
    if not isinstance(evidence, list) or len(evidence) > MAX_EVIDENCE:
        raise ValidationError(
            {
                "evidence": _("Give at most %(count)s items of evidence, each {kind, id}.")
                % {"count": MAX_EVIDENCE}
            }  # fmt: skip
        )
    models, cleaned = _evidence_models(), []
    for item in evidence:
        kind = item.get("kind") if isinstance(item, dict) else None
        pk = item.get("id") if isinstance(item, dict) else None
        if kind not in models or not isinstance(pk, int) or isinstance(pk, bool):
            raise ValidationError(
                {
                    "evidence": _("Each item of evidence is {kind, id}; kind one of: %(kinds)s.")
                    % {"kinds": ", ".join(models)}
                }  # fmt: skip
            )
        if not models[kind].objects.filter(pk=pk, investigation=investigation).exists():
            raise ValidationError(
                {
                    "evidence": _("No %(kind)s %(id)s in this investigation.")
                    % {"kind": kind, "id": pk}
                }  # fmt: skip
            )
        if {"kind": kind, "id": pk} not in cleaned:
            cleaned.append({"kind": kind, "id": pk})
    return cleaned


@transaction.atomic
def case_root_cause_confirm(
    *,
    investigation: Investigation,
    user,
    root_cause: RootCause,
    evidence=None,
    fix: str = "",
) -> CaseRootCause:
    """Confirm (or update) a root cause of the case with its evidence and the fix applied: an
    entry of the installation or of the case's team, which every member of the case reads."""
    if root_cause.team_id not in (None, investigation.team_id):
        raise ValidationError(
            {
                "root_cause": _("No root cause %(ids)s in the knowledge base.")
                % {"ids": root_cause.pk}
            }  # fmt: skip
        )
    evidence = _clean_evidence(investigation, evidence)
    if not isinstance(fix, str) or (problem := limits.too_long(fix.strip(), limits.ENTRY)):
        raise ValidationError({"fix": problem if isinstance(fix, str) else _("Write it as text.")})
    found, created = CaseRootCause.objects.update_or_create(
        investigation=investigation,
        root_cause=root_cause,
        defaults={
            "evidence": evidence,
            "fix": fix.strip(),
            "confirmed_by": user,
            "confirmed_at": timezone.now(),
        },
    )
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.ROOT_CAUSE,
        summary=Phrase(
            gettext_noop("Root cause confirmed: %(title)s")
            if created
            else gettext_noop("Root cause updated: %(title)s"),
            title=root_cause.title,
        ),
        author=user,
        details={"root_cause": root_cause.pk, "evidence": evidence},
    )
    _refresh(investigation)
    return found


@transaction.atomic
def case_root_cause_remove(*, investigation: Investigation, user, root_cause: RootCause) -> None:
    deleted, _ = CaseRootCause.objects.filter(
        investigation=investigation, root_cause=root_cause
    ).delete()
    if not deleted:
        return
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.ROOT_CAUSE,
        summary=Phrase(gettext_noop("Root cause withdrawn: %(title)s"), title=root_cause.title),
        author=user,
        details={"root_cause": root_cause.pk},
    )
    _refresh(investigation)


@transaction.atomic
def case_root_causes_set(*, investigation: Investigation, user, root_cause_ids: list) -> list:
    """The case's root causes are exactly these entries (kept ones keep their evidence)."""
    if not isinstance(root_cause_ids, list) or not all(
        isinstance(pk, int) and not isinstance(pk, bool) for pk in root_cause_ids
    ):
        raise ValidationError({"root_causes": _("Give a list of root-cause ids.")})
    wanted = {
        rc.pk: rc
        for rc in RootCause.objects.filter(
            Q(team__isnull=True) | Q(team_id=investigation.team_id), pk__in=root_cause_ids
        )
    }
    missing = [pk for pk in root_cause_ids if pk not in wanted]
    if missing:
        raise ValidationError(
            {
                "root_causes": _("No root cause %(ids)s in the knowledge base.")
                % {"ids": ", ".join(map(str, missing))}
            }  # fmt: skip
        )
    held = {c.root_cause_id: c for c in investigation.case_root_causes.select_related("root_cause")}
    for pk, found in held.items():
        if pk not in wanted:
            case_root_cause_remove(
                investigation=investigation, user=user, root_cause=found.root_cause
            )
    for pk in dict.fromkeys(root_cause_ids):
        if pk not in held:
            case_root_cause_confirm(investigation=investigation, user=user, root_cause=wanted[pk])
    return list(investigation.case_root_causes.select_related("root_cause"))


def _refresh(investigation: Investigation) -> None:
    checklist_refresh(investigation=investigation, keys=["root_cause"])
    investigation_index(investigation=investigation)


@checklist_evidence("root_cause")
@placement_free
def _named(investigation: Investigation) -> Phrase | Missing | None:
    """The case has a confirmed root cause, and once a ladder was run again to verify the
    fix, the newest such rerun closed the gap: a rerun that did not reopens the step."""
    titles = list(investigation.case_root_causes.values_list("root_cause__title", flat=True))
    named = (
        Phrase(gettext_noop("root cause confirmed: %(titles)s"), titles="; ".join(titles))
        if titles
        else None
    )
    found = latest_rerun_comparison(investigation=investigation)
    if found is None:
        return named
    rerun, comparison = found
    verified = Phrase(
        gettext_noop(
            "ladder #%(after)s, run again after the fix, against #%(before)s: %(verdict)s"
        ),
        after=rerun.pk,
        before=rerun.rerun_of_id,
        verdict=Phrase(VERDICT_WORDS.get(comparison.verdict, gettext_noop("nothing to compare"))),
    )
    if comparison.verdict != CLOSED:
        return Missing(verified)
    return joined([named, verified], "; ") if named else verified


@checklist_evidence("write_up")
@placement_free
def _written(investigation: Investigation) -> Phrase | None:
    """The postmortem has its summary, and its lessons or fix."""
    postmortem = Postmortem.objects.filter(investigation=investigation).first()
    if postmortem is None or not postmortem.written:
        return None
    return Phrase(gettext_noop("the postmortem is written"))
