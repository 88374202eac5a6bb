"""Similar past cases: the panel that shows the resolved and closed cases most like this one,
each with its root causes and why it is alike."""

from django.http import HttpRequest
from django.utils.translation import gettext_lazy as _

from investigations.choices import Status
from investigations.selectors.similar import PAST, similar_cases
from investigations.views.panels import panel


@panel(
    name="similar",
    title=_("Similar past cases"),
    template="investigations/_panel_similar.html",
    order=85,
)
def similar_context(request: HttpRequest, investigation) -> dict:
    return {
        "similar": similar_cases(investigation=investigation, user=request.user),
        "is_past": investigation.status in PAST,
        "status_label": Status(investigation.status).label.lower(),
    }
