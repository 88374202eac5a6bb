"""What the pages of the evidence kinds kept as items of a case (captures, profiles) share:
one item of the case or 404, the pair the query names or the newest pair, a stored file
sent as a download."""

from collections.abc import Callable

from django.db.models.fields.files import FieldFile
from django.http import FileResponse, Http404, HttpRequest

from investigations.views.pages import query_id

# (investigation, id) -> the case's item with this id, or None
ItemGet = Callable[[object, int], object | None]


def item_or_404(get: ItemGet, investigation, item_id: int, missing: str):
    """The case's item, else a 404 that says `missing` ("No such capture...")."""
    item = get(investigation, item_id)
    if item is None:
        raise Http404(missing)
    return item


def requested_pair(
    request: HttpRequest, investigation, *, get: ItemGet, pairs, missing: str, none_yet: str
) -> tuple:
    """The two items the query names (?a=&b=), or the newest pair's (`pairs()`, newest
    first); a 404 that says `none_yet` when there is none."""
    a_id, b_id = query_id(request, "a"), query_id(request, "b")
    if a_id is None or b_id is None:
        found = pairs()
        if not found:
            raise Http404(none_yet)
        return found[0].a, found[0].b
    return (
        item_or_404(get, investigation, a_id, missing),
        item_or_404(get, investigation, b_id, missing),
    )


def stored_file(
    field: FieldFile, *, filename: str, gone: str, content_type: str | None = None
) -> FileResponse:
    """The stored file as an attachment, else a 404 that says `gone` (the storage lost it,
    or the item never had one)."""
    try:
        content = field.open("rb")
    except (OSError, ValueError):
        raise Http404(gone) from None
    return FileResponse(content, as_attachment=True, filename=filename, content_type=content_type)
