"""A machine without the compiled capture core (collectors.capture._core): the app starts and
everything works but the capture analysis, which says so. The core is kept out of a process
by tests/app/without_capture_core/sitecustomize.py on its PYTHONPATH: the web process of the
first test, a real Celery worker in the second."""

import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from django.utils import translation

from app.celery import app
from tests.conftest import ApiClient, start_worker, stop_worker, wait_for
from tests.investigations.test_captures import pcap_of, upload
from tests.investigations.test_collections import place_local_hosts

ROOT = Path(__file__).resolve().parents[2]
WITHOUT_CORE = {"PYTHONPATH": str(Path(__file__).parent / "without_capture_core")}
NOT_BUILT = "the capture analysis is not built on this machine"

START = r"""
import importlib, pkgutil, sys
import django
django.setup()
from django.core.management import call_command
from django.test import Client
import collectors, investigations

call_command("check", fail_level="ERROR")
for package in (investigations, collectors):
    for module in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
        if not module.name.endswith(("._core", ".__main__")):
            importlib.import_module(module.name)
page = Client().get("/accounts/login/", HTTP_HOST="localhost")
assert page.status_code == 200 and b'name="password"' in page.content, page.status_code
from collectors.capture import CaptureCoreMissing, analyse_capture
try:
    analyse_capture(sys.argv[1])
except CaptureCoreMissing as error:
    print("analysis:", error)
assert "collectors.capture._core" not in sys.modules
print("started")
"""


def test_the_app_starts_and_renders_pages_without_the_capture_core(tmp_path):
    capture = tmp_path / "one.pcap"
    capture.write_bytes(pcap_of(1))
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "CELERY_BROKER_URL")}
    started = subprocess.run(
        [sys.executable, "-c", START, str(capture)],
        cwd=ROOT,
        env={**env, **WITHOUT_CORE, "PERFCASE_VAR_DIR": str(tmp_path / "var")},
        capture_output=True,
        text=True,
        timeout=180,
    )

    assert started.returncode == 0, started.stderr[-3000:]
    assert started.stdout.splitlines()[-2:] == [f"analysis: {NOT_BUILT}", "started"]


@pytest.fixture
def worker_without_core():
    """A real worker (on a queue of its own) of a machine that has no capture core."""
    queue, previous = f"perfcase-nocore-{uuid.uuid4().hex[:8]}", app.conf.task_default_queue
    app.conf.task_default_queue = queue
    process, hostname = start_worker(queue, log_name="celery-worker-nocore.log", env=WITHOUT_CORE)
    try:
        yield hostname
    finally:
        stop_worker(process)
        app.conf.task_default_queue = previous


def collection_end(api: ApiClient, investigation_id: int, kind: str) -> dict:
    created = api.post(f"/api/investigations/{investigation_id}/collections", {"kind": kind})
    assert created.status_code == 201, created.body
    return wait_for(
        lambda: (
            (body := api.get(f"/api/collections/{created.body['id']}").body)["status"]
            in ("completed", "failed")
            and body
        ),
        timeout=90,
    )


@pytest.mark.django_db(transaction=True)
def test_captures_say_the_analysis_is_not_built_and_everything_else_works(
    personas, worker_without_core
):
    place_local_hosts(personas)
    api = ApiClient(personas.member)
    investigation = personas.investigation.pk

    # A capture collection stops before tcpdump runs for nothing, on every host.
    captured = collection_end(api, investigation, "capture")
    assert [(t["host_name"], t["status"], t["error"]) for t in captured["targets"]] == [
        ("app-a", "failed", NOT_BUILT),
        ("app-b", "failed", NOT_BUILT),
    ]
    zh = api.get(f"/api/collections/{captured['id']}", HTTP_ACCEPT_LANGUAGE="zh-hans").body
    with translation.override("zh-hans"):
        assert zh["targets"][0]["error"] == translation.gettext(NOT_BUILT) != NOT_BUILT

    # An imported capture is kept (its file downloadable) and says why it has no analysis.
    imported = api.post_multipart(
        f"/api/investigations/{investigation}/imports",
        {"side": "a", "format": "pcap", "file": [upload("side-a.pcap", pcap_of(2))]},
    )
    assert imported.status_code == 201, imported.body
    (listed,) = imported.body["captures"]
    failed = wait_for(
        lambda: (
            (body := api.get(f"/api/captures/{listed['id']}").body)["status"] == "failed" and body
        ),
        timeout=60,
    )
    assert failed["error"] == f"side-a.pcap cannot be analysed: {NOT_BUILT}"
    assert api.get(f"/api/captures/{listed['id']}/pcap").status_code == 200

    # The same worker collects everything else.
    facts = collection_end(api, investigation, "facts")
    assert [(t["host_name"], t["status"]) for t in facts["targets"]] == [
        ("app-a", "succeeded"),
        ("app-b", "succeeded"),
    ]
