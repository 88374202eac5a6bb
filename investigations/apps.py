from django.apps import AppConfig


class InvestigationsConfig(AppConfig):
    name = "investigations"
    default_auto_field = "django.db.models.BigAutoField"
