"""Fixtures several test modules of investigations/ share."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from app.celery import app as celery_app
from investigations.demo import DEMO_TITLE, DEMO_USERNAME
from investigations.models import Investigation


@pytest.fixture
def demo_case(settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks, client):
    """The demo loaded as `make run` loads it (no task sent), and a client signed in as its
    user: (client, the demo case)."""
    settings.DEBUG = True
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(celery_app, "send_task", lambda *args, **kwargs: None)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=StringIO())
    client.force_login(get_user_model().objects.get(username=DEMO_USERNAME))
    return client, Investigation.objects.get(title=DEMO_TITLE)
