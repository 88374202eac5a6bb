"""The investigation page, whole: its header and its panels' frames, or, after a failed
form, every panel drawn in place (the form in its own panel with its errors and values)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import render

from investigations.choices import Role, Status, allowed_status_moves
from investigations.selectors import checklist_counts
from investigations.views.panels import panel_menu, panels_html
from investigations.views.progress import progress_bar


def head_context(investigation) -> dict:
    return {
        "investigation": investigation,
        "can_write": Role.rank(investigation.user_role) >= Role.rank(Role.RESPONDER),
        "is_lead": investigation.user_role == Role.LEAD,
        "status_moves": [Status(s) for s in allowed_status_moves(investigation.status)],
        # Closing asks for the root cause: without one, the lead says why (a query the
        # template makes only for a lead who may close).
        "has_root_cause": investigation.case_root_causes.exists,
        # The progress bar; the checklist panel swaps it when the list changes.
        **progress_bar(*checklist_counts(investigation=investigation)),
    }


def investigation_page(request: HttpRequest, investigation, *, status: int = 200) -> HttpResponse:
    """The page, which costs the same few queries however long the case; after a failed
    form (see views/forms.py) with status 400, the header and every panel drawn in place,
    the form in its own panel with its errors and values."""
    drawn = status != 200
    context = {
        "investigation": investigation,
        "head_drawn": drawn,
        **(head_context(investigation) if drawn else {}),
        "panels": panels_html(request, investigation, drawn=drawn),
        # The section menu that stays in view: one link a panel, in the page's order.
        "panel_menu": panel_menu(),
    }
    return render(request, "investigations/investigation_detail.html", context, status=status)
