"""The errors of collectors.capture."""

from collectors.errors import CollectorError
from collectors.phrase import Phrase, gettext_noop


class CaptureError(Exception):
    """Base class of the errors of collectors.capture."""


class CaptureCoreMissing(CaptureError, CollectorError):
    """The compiled core (collectors.capture._core) cannot be imported: this install was
    built without a C compiler or the Python headers. Everything else works; a capture
    collection fails at its start, an imported capture when its analysis begins."""

    def __init__(self):
        super().__init__(Phrase(gettext_noop("the capture analysis is not built on this machine")))
