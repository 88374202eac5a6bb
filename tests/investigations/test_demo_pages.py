"""The demo's pages, as a newcomer met them (issue 24 bug 13): plotly.js only on pages
that draw a chart."""

from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from app.celery import app as celery_app
from investigations.demo import DEMO_TITLE, DEMO_USERNAME
from investigations.models import Investigation, Ladder

pytestmark = pytest.mark.django_db

PLOTLY = "vendor/plotly.min.js"


@pytest.fixture
def demo(settings, tmp_path, monkeypatch, django_capture_on_commit_callbacks, client):
    settings.DEBUG = True
    settings.MEDIA_ROOT = tmp_path / "media"
    monkeypatch.setattr(celery_app, "send_task", lambda *args, **kwargs: None)
    with django_capture_on_commit_callbacks(execute=True):
        call_command("load_demo", stdout=StringIO())
    client.force_login(get_user_model().objects.get(username=DEMO_USERNAME))
    return client, Investigation.objects.get(title=DEMO_TITLE)


def _page(client, url: str) -> str:
    answer = client.get(url)
    assert answer.status_code == 200, url
    return answer.content.decode()


def test_plotly_is_sent_only_with_a_chart(demo):
    client, case = demo
    ladder = Ladder.objects.filter(investigation=case).first()
    for url in [
        "/investigations/",
        f"/investigations/{case.pk}/",  # its panels come after it, the path with its chart
        f"/investigations/{case.pk}/panels/checklist/",
        f"/investigations/{case.pk}/postmortem/",
        "/knowledge/",
    ]:
        assert PLOTLY not in _page(client, url), url
    for url in [
        f"/investigations/{case.pk}/panels/path/",
        f"/ladders/{ladder.pk}/",
        f"/investigations/{case.pk}/baseline/",
        f"/investigations/{case.pk}/postmortem/print/",
    ]:
        page = _page(client, url)
        assert f'data-plotly="/static/{PLOTLY}"' in page, url
        assert "data-chart=" in page, url
