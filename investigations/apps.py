import pkgutil
from importlib import import_module

from django.apps import AppConfig

VIEWS = "investigations.views"


class InvestigationsConfig(AppConfig):
    name = "investigations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every evidence kind registers itself (its plan, its checklist step) on import.
        import investigations.services.knowledge  # noqa: F401 (its checklist steps)
        from investigations.runs import plans

        plans()
        # Every feature's views register its panel of the investigation page on import.
        for module in pkgutil.iter_modules(import_module(VIEWS).__path__):
            import_module(f"{VIEWS}.{module.name}")
