"""Import the compiled core with a message that says how to build it."""

from types import ModuleType


def core_module() -> ModuleType:
    try:
        from collectors.capture import _core
    except ImportError as error:
        raise ImportError(
            "collectors.capture._core is not built: run `pip install -e '.[dev]'` (needs gcc "
            "and the Python headers, Debian's python3-dev)"
        ) from error
    return _core
