"""A machine without the compiled capture core: on PYTHONPATH, this makes every import of
collectors.capture._core fail, as it does where the package was built without gcc."""

import sys
from importlib.abc import MetaPathFinder


class NoCaptureCore(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "collectors.capture._core":
            raise ImportError(f"{name} is not built here (tests/app/without_capture_core)")
        return None


sys.meta_path.insert(0, NoCaptureCore())
