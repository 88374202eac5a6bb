"""`make run`: the web server and one Celery worker together; Ctrl-C stops both."""

import os
import signal
import socket
import subprocess
import sys
import time

from django.conf import settings
from django.core.management.base import BaseCommand

from investigations.demo import DEMO_PASSWORD, DEMO_USERNAME


class Command(BaseCommand):
    help = "Start the development web server and a Celery worker; stop both on Ctrl-C."

    def add_arguments(self, parser):
        parser.add_argument("--port", type=int, default=8000)

    def handle(self, *args, port: int, **options):
        url = f"http://127.0.0.1:{port}/"
        children = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "app",
                    "worker",
                    "--loglevel",
                    "INFO",
                    "--concurrency",
                    "2",
                ]
            ),
            # `-m django` rather than manage.py: a wheel's install has no manage.py.
            subprocess.Popen(
                [sys.executable, "-m", "django", "runserver", "--noreload", f"127.0.0.1:{port}"],
                env={**os.environ, "DJANGO_SETTINGS_MODULE": settings.SETTINGS_MODULE},
            ),
        ]
        stopping = False
        announced = False

        def stop(*_):
            nonlocal stopping
            stopping = True

        signal.signal(signal.SIGINT, stop)
        signal.signal(signal.SIGTERM, stop)
        try:
            while not stopping and all(child.poll() is None for child in children):
                if not announced and _listening(port):
                    announced = True
                    self.stdout.write(
                        self.style.SUCCESS(
                            f"\nPerfcase is running at {url}\n"
                            f"Sign in as {DEMO_USERNAME} / {DEMO_PASSWORD}\n"
                            "Press Ctrl-C to stop the web server and the worker.\n"
                        )
                    )
                time.sleep(0.3)
        finally:
            for child in children:
                if child.poll() is None:
                    child.terminate()
            for child in children:
                try:
                    child.wait(timeout=15)
                except subprocess.TimeoutExpired:
                    child.kill()
        failed = [c for c in children if c.returncode not in (0, -signal.SIGTERM, -signal.SIGINT)]
        if failed and not stopping:
            raise SystemExit("A process stopped unexpectedly; see its output above.")


def _listening(port: int) -> bool:
    with socket.socket() as probe:
        probe.settimeout(0.2)
        return probe.connect_ex(("127.0.0.1", port)) == 0
