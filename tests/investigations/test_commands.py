"""The commands behind `make run`: demo data, and the web server with its worker."""

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command

from investigations.choices import EventKind, Status
from investigations.management.commands.load_demo import DEMO_TITLE, DEMO_USERNAME
from investigations.models import EnvironmentMember, Host, Investigation, Membership

ROOT = Path(__file__).resolve().parent.parent.parent


@pytest.mark.django_db
def test_the_demo_is_a_lived_in_case_and_loads_once(settings):
    settings.DEBUG = True

    call_command("load_demo")
    call_command("load_demo")

    investigation = Investigation.objects.get(title=DEMO_TITLE)
    assert Investigation.objects.count() == 1
    assert investigation.status == Status.RESOLVED
    assert [side.label for side in investigation.sides.all()] == ["container", "VM"]
    assert investigation.symptom_ratio == 2.0
    actions = investigation.events.filter(kind=EventKind.ACTION)
    assert {"rate_limit", "restart", "scale_out", "fix"} <= set(
        actions.values_list("action", flat=True)
    )
    occurred = list(investigation.events.values_list("occurred_at", flat=True))
    assert occurred == sorted(occurred)
    assert Membership.objects.get(user__username=DEMO_USERNAME).role == "lead"
    # The demo invents no machines.
    assert not Host.objects.exists() and not EnvironmentMember.objects.exists()


@pytest.mark.django_db
def test_the_demo_refuses_to_run_in_production(settings):
    settings.DEBUG = False

    with pytest.raises(CommandError, match="DEBUG"):
        call_command("load_demo")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_runstack_serves_the_app_and_ctrl_c_stops_web_and_worker(tmp_path):
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL") and not k.startswith("PERFCASE_")
    }
    env["PERFCASE_VAR_DIR"] = str(tmp_path)
    subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput", "-v0"],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=120,
    )
    port = _free_port()
    stack = subprocess.Popen(
        [sys.executable, "manage.py", "runstack", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        banner = ""
        deadline = time.monotonic() + 60
        while "Sign in as" not in banner and time.monotonic() < deadline:
            banner += stack.stdout.readline()
        assert f"Perfcase is running at http://127.0.0.1:{port}/" in banner
        assert "Sign in as demo / perfcase-demo" in banner
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=10) as page:
            assert page.status == 200

        # Ctrl-C in a terminal signals the whole foreground process group.
        os.killpg(stack.pid, signal.SIGINT)
        stack.wait(timeout=30)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                os.killpg(stack.pid, 0)
            except ProcessLookupError:
                break
            time.sleep(0.2)
        else:
            pytest.fail("a web server or worker process outlived Ctrl-C")
    finally:
        if stack.poll() is None:
            os.killpg(stack.pid, signal.SIGKILL)
        stack.stdout.close()
