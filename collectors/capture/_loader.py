"""Import the compiled core, or say that this machine has none (CaptureCoreMissing)."""

from types import ModuleType

from collectors.capture.errors import CaptureCoreMissing


def core_module() -> ModuleType:
    try:
        from collectors.capture import _core
    except ImportError as error:
        # The ImportError stays chained for the operator: building needs gcc and the Python
        # headers (Debian's python3-dev) when the package is installed.
        raise CaptureCoreMissing() from error
    return _core


def require_core() -> None:
    """Raise CaptureCoreMissing now, before a capture is taken that could not be analysed."""
    core_module()
