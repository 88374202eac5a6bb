import pkgutil
from importlib import import_module

from django.apps import AppConfig

VIEWS = "investigations.views"


class InvestigationsConfig(AppConfig):
    name = "investigations"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        # Every evidence kind registers its descriptor (investigations/kinds/), before anything
        # reads the registry; each plan is made once, before any worker forks.
        import investigations.services.knowledge  # noqa: F401 (its checklist steps)
        from investigations.kinds.loader import load_kinds
        from investigations.runs import plans

        load_kinds()
        plans()
        # Every feature's views register its panel of the investigation page on import.
        for module in pkgutil.iter_modules(import_module(VIEWS).__path__):
            import_module(f"{VIEWS}.{module.name}")
        # And each registered evidence kind's views, wherever they live.
        from investigations.kinds import kinds

        for kind in kinds():
            if kind.views is not None:
                kind.views()
        # A row that owns a job (a target, a capture, ...) takes it along when deleted.
        from django.db.models.signals import post_delete

        from investigations.models.jobs import delete_owned_job, job_owners

        for model in job_owners(self.get_models()):
            post_delete.connect(
                delete_owned_job, sender=model, dispatch_uid=f"job-{model.__name__}"
            )
