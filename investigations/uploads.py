"""Uploads are measured while they stream, never read whole before their size is known.

Django streams each uploaded file past FILE_UPLOAD_MAX_MEMORY_SIZE into a temporary file;
`LimitedUploadHandler`, first of the handlers, counts the bytes as they come and stops the
upload at UPLOAD_MAX_FILE_MB a file or UPLOAD_MAX_REQUEST_MB a request (what is left of the
body is read and dropped, never kept). `UploadLimitMiddleware` then answers at once with the
reason (413: JSON under /api/, the page it came from with a message otherwise), before any
view sees a partial upload. Each kind of import has its own, smaller limit, checked by
`uploads_read` from the size Django measured, before a byte is read into memory.
"""

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import TooManyFilesSent, ValidationError
from django.core.files.uploadhandler import FileUploadHandler, StopUpload
from django.http import HttpRequest, JsonResponse
from django.shortcuts import redirect
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.translation import gettext
from django.utils.translation import gettext_lazy as _

MB = 1024 * 1024


class LimitedUploadHandler(FileUploadHandler):
    def __init__(self, request=None):
        super().__init__(request)
        self.total = 0
        self.file_bytes = 0

    def new_file(self, *args, **kwargs):
        super().new_file(*args, **kwargs)
        self.file_bytes = 0

    def _refuse(self, message: str) -> None:
        self.request.upload_refused = message
        raise StopUpload(connection_reset=False)

    def receive_data_chunk(self, raw_data, start):
        self.file_bytes += len(raw_data)
        self.total += len(raw_data)
        if self.file_bytes > settings.UPLOAD_MAX_FILE_MB * MB:
            self._refuse(
                gettext("%(file)s is larger than %(size)s MB, the most a file may be.")
                % {"file": self.file_name, "size": settings.UPLOAD_MAX_FILE_MB}
            )
        if self.total > settings.UPLOAD_MAX_REQUEST_MB * MB:
            self._refuse(
                gettext("The upload is larger than %(size)s MB, the most one request may send.")
                % {"size": settings.UPLOAD_MAX_REQUEST_MB}
            )
        return raw_data

    def file_complete(self, file_size):
        return None  # the next handlers keep the file


class UploadLimitMiddleware:
    """Answers an upload the handler stopped, before the view runs."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest):
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view, args, kwargs):
        content_type = request.META.get("CONTENT_TYPE", "")
        if request.method != "POST" or not content_type.startswith("multipart/form-data"):
            return None
        status = 413
        try:
            request.FILES  # noqa: B018 - parse now: the handler measures while it streams
        except TooManyFilesSent:
            request.upload_refused = gettext("At most %(count)s files at a time.") % {
                "count": settings.DATA_UPLOAD_MAX_NUMBER_FILES
            }
            status = 400
        message = getattr(request, "upload_refused", None)
        if message is None:
            return None
        if request.path.startswith("/api/"):
            error = {"field": "file", "message": message}
            return JsonResponse({"detail": message, "errors": [error]}, status=status)
        messages.error(request, message)
        back = request.META.get("HTTP_REFERER", "")
        safe = url_has_allowed_host_and_scheme(
            back, allowed_hosts={request.get_host()}, require_https=request.is_secure()
        )
        response = redirect(back if safe and back else "/")
        response.status_code = 303
        return response


def uploads_read(uploads, *, max_bytes: int, max_files: int) -> list[tuple[str, bytes]]:
    """Uploaded files as (name, content): their count and each one's size (as Django
    measured it while it streamed) checked before any is read."""
    uploads = list(uploads)
    if len(uploads) > max_files:
        raise ValidationError(
            {"file": _("At most %(count)s files at a time.") % {"count": max_files}}
        )
    for upload in uploads:
        if upload.size > max_bytes:
            raise too_large(upload.name, max_bytes)
    return [(upload.name, upload.read()) for upload in uploads]


def too_large(name: str, max_bytes: int) -> ValidationError:
    """The refusal of a file past its import's limit, named."""
    return ValidationError(
        {"file": _("%(file)s: larger than %(size)s MB.") % {"file": name, "size": max_bytes // MB}}
    )
