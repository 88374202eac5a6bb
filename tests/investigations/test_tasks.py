"""The Celery settings must take effect in a real worker, not just sit in settings.py."""

import re

import pytest

from app.celery import app
from investigations import tasks

LIMIT_ITEMS = ("soft_time_limit", "time_limit", "acks_late", "reject_on_worker_lost")


def _attributes(line: str) -> dict[str, str]:
    # Celery answers "name [soft_time_limit=30 time_limit=45 ...]".
    return dict(re.findall(r"(\w+)=(\S+?)(?=[\s\]])", line))


@pytest.mark.django_db(transaction=True)
def test_the_worker_runs_every_task_with_limits_and_late_acks(celery_worker):
    answer = app.control.inspect(destination=[celery_worker], timeout=5).registered(*LIMIT_ITEMS)

    lines = [line for line in answer[celery_worker] if line.startswith("perfcase.")]
    assert lines, "the worker registered none of our tasks"
    for line in lines:
        attributes = _attributes(line)
        assert int(attributes["soft_time_limit"]) > 0, line
        assert int(attributes["time_limit"]) > int(attributes["soft_time_limit"]), line
        assert attributes["acks_late"] == "True", line
        assert attributes["reject_on_worker_lost"] == "True", line


@pytest.mark.django_db(transaction=True)
def test_the_worker_takes_one_task_per_process_at_a_time(celery_worker):
    stats = app.control.inspect(destination=[celery_worker], timeout=5).stats()[celery_worker]

    # prefetch_count is concurrency × worker_prefetch_multiplier: 1 means no hoarding.
    assert stats["prefetch_count"] == stats["pool"]["max-concurrency"]


def test_the_celery_settings_reach_the_app_under_their_real_names():
    # A misspelled CELERY_* setting is silently ignored; the effective conf tells.
    assert app.conf.task_acks_late is True
    assert app.conf.task_reject_on_worker_lost is True
    assert app.conf.worker_prefetch_multiplier == 1
    assert 0 < app.conf.task_soft_time_limit < app.conf.task_time_limit


def test_every_task_has_an_explicit_name_and_limits():
    ours = {name: task for name, task in app.tasks.items() if name.startswith("perfcase.")}
    assert tasks.webhook_deliver.name in ours
    for name, task in ours.items():
        assert task.soft_time_limit and task.time_limit > task.soft_time_limit, name
        assert task.acks_late and task.reject_on_worker_lost, name
