"""What every view module shares: partial-or-page and pagination."""

from django.core.paginator import Paginator
from django.http import HttpRequest

PAGE_SIZE = 25


def wants_partial(request: HttpRequest) -> bool:
    return bool(request.htmx) and not request.htmx.boosted


def paginate(request: HttpRequest, items, per_page: int = PAGE_SIZE):
    return Paginator(items, per_page).get_page(request.GET.get("page"))
