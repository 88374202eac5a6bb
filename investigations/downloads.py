"""Files a person downloads, as responses: the same file from a page and from the API.

Here, not in the API's modules, so that a page can offer a download without importing the
API (whose schemas take a process a second or more to build: a Celery worker or a
management command never needs them)."""

from django.http import HttpResponse
from django.utils.translation import gettext as _

from investigations.analysis.baseline import as_csv, as_markdown
from investigations.selectors.baselines import baseline_table


def baseline_download(investigation, format: str, margin: float) -> HttpResponse:
    rows = baseline_table(investigation=investigation, margin=margin)
    if format == "csv":
        body, kind, extension = as_csv(rows), "text/csv", "csv"
    else:
        title = _("Baseline: %(title)s") % {"title": investigation.title}
        body, kind, extension = as_markdown(rows, title=title), "text/markdown", "md"
    response = HttpResponse(body, content_type=f"{kind}; charset=utf-8")
    response["Content-Disposition"] = (
        f'attachment; filename="baseline-{investigation.pk}.{extension}"'
    )
    return response
