"""What a Django process of the app builds when it starts: a Celery worker or a management
command serves no API, so it must not build the API's schemas (pydantic models for each
operation: a third of `django.setup()`'s CPU, paid by every worker and command)."""

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
API_MODULES = ("investigations.api", "investigations.api.root", "investigations.urls")


def test_a_process_that_serves_no_api_starts_without_building_it():
    program = (
        "import sys, django\n"
        "django.setup()\n"
        f"print(' '.join(m for m in {API_MODULES!r} if m in sys.modules))\n"
    )
    started = subprocess.run(
        [sys.executable, "-c", program],
        cwd=ROOT,
        env={**os.environ, "DJANGO_SETTINGS_MODULE": "app.settings"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert started.returncode == 0, started.stderr
    assert started.stdout.split() == [], f"django.setup() imported {started.stdout.strip()}"
