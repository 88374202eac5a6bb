"""What every view module shares: partial-or-page and pagination."""

from django.core.paginator import Paginator
from django.http import HttpRequest

PAGE_SIZE = 25


def wants_partial(request: HttpRequest) -> bool:
    return bool(request.htmx) and not request.htmx.boosted


def paginate(request: HttpRequest, items, per_page: int = PAGE_SIZE):
    return Paginator(items, per_page).get_page(request.GET.get("page"))


def query_id(request: HttpRequest, name: str) -> int | None:
    """A database id from the query string, or None (never an error: ids like '²' or a
    hundred digits are not ids)."""
    value = request.GET.get(name, "")
    return int(value) if value.isascii() and value.isdigit() and len(value) <= 18 else None


def form_failed(request: HttpRequest, **forms) -> None:
    """Remember forms that failed, bound, so that the page drawn for this request shows
    each one in its own place with its errors beside its fields and the typed values kept
    (see `form_or`)."""
    request.failed_forms = {**getattr(request, "failed_forms", {}), **forms}


def form_or(request: HttpRequest, name: str, make):
    """The form `name` that failed in this request, or a fresh one from `make()`."""
    return getattr(request, "failed_forms", {}).get(name) or make()
