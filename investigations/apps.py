from django.apps import AppConfig


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
