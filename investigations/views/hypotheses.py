"""The case page's "Likely causes" panel: the ranking of selectors/hypotheses.py, each cause
with its evidence, the signals that moved its score, what would settle it (a button that
starts that collection with its form's defaults; a form that cannot start shows itself with
its errors in its own panel) and the existing confirm flow."""

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from investigations.analysis.hypotheses import LOW_SCORE
from investigations.analysis.signals import signal_label
from investigations.choices import EvidenceKind, Role
from investigations.forms import start_ids
from investigations.runs import plan_for
from investigations.selectors.hypotheses import case_hypotheses, missing_text, next_step
from investigations.views.panels import panel

# The evidence kinds the confirm form takes (a baseline row or a facts pair is not one: their
# findings are).
CONFIRMABLE = {
    EvidenceKind.FINDING,
    EvidenceKind.PROFILE,
    EvidenceKind.CAPTURE,
    EvidenceKind.LADDER,
}
# Where a kind without a collection form of its own is started.
PANEL_OF = {"ladder": "ladders"}


def _collect_form(kind: str):
    """The kind's start form, unbound: its fields' defaults go as hidden values."""
    try:
        plan = plan_for(kind)
    except LookupError:
        return None
    return plan.parameters_form(auto_id=start_ids(f"settle-{kind}"))


def _shown(hypothesis, forms: dict) -> dict:
    missing = []
    for found in hypothesis.missing:
        kind = found["kind"]
        if kind not in forms:
            forms[kind] = _collect_form(kind)
        missing.append(
            {
                "kind": kind,
                "text": missing_text(kind, found["signal"]),
                "form": forms[kind],
                "panel": PANEL_OF.get(kind, kind),
            }
        )
    return {
        "hypothesis": hypothesis,
        "percent": round(hypothesis.score * 100),
        "explanation": [
            {
                "label": signal_label(c.signal),
                "points": round(c.delta * 100),
                "weight": c.signal.get("weight"),
                "direction": c.signal.get("direction", ""),
                "items": c.items,
            }
            for c in hypothesis.contributions
        ],
        "missing": missing,
        "next_step": next_step(hypothesis),
        "evidence_keys": [
            f"{item.kind}:{item.id}"
            for item in hypothesis.supporting
            if item.kind in CONFIRMABLE and item.id is not None
        ],
    }


@panel(
    name="likely_causes",
    title=_("Likely causes"),
    template="investigations/_panel_likely_causes.html",
    order=73,
)
def likely_causes_context(request: HttpRequest, investigation) -> dict:
    found = case_hypotheses(investigation=investigation)
    forms: dict = {}
    shown = [_shown(h, forms) for h in found["hypotheses"]]
    return {
        "likely_causes": shown,
        "compared": found["compared"],
        "difference_found": found["difference_found"],
        "low_percent": round(LOW_SCORE * 100),
        "can_confirm": Role.rank(investigation.user_role) >= Role.rank(Role.RESPONDER),
        "heading_note": shown[0]["hypothesis"].entry.title
        if shown and found["difference_found"]
        else "",
    }
