"""Import every kind's module of this package, each of which registers its kind: run once
when the app starts (apps.py), before anything reads the registry."""

import importlib
import pkgutil

PACKAGE = "investigations.kinds"
NOT_KINDS = {"loader", "schema"}


def load_kinds() -> None:
    package = importlib.import_module(PACKAGE)
    for module in pkgutil.iter_modules(package.__path__):
        if module.name not in NOT_KINDS:
            importlib.import_module(f"{PACKAGE}.{module.name}")
