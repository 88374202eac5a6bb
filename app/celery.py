import os

from celery import Celery
from celery.signals import after_setup_logger, after_setup_task_logger

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "app.settings")

app = Celery("perfcase")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

from investigations.worker import Sweeper  # noqa: E402


# The worker sets up its own log handlers: they escape control characters as the web's do.
@after_setup_logger.connect
@after_setup_task_logger.connect
def _escape_worker_logs(logger, **kwargs):
    from investigations.log_records import escape_handlers

    escape_handlers(logger)


app.steps["worker"].add(Sweeper)
