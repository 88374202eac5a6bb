"""Perfcase from its wheel, not from the checkout: the wheel is built from a clean copy of the
source tree, installed into a venv of its own, and the app is migrated, collected and served
from there, outside the source tree, with every file it reads at run time (templates, static
files, the catalogues, the probe scripts, the knowledge base's entries, the demo's outputs)
found inside the installed package.

The dependencies are the project venv's, seen through a .pth file in the new venv: its
editable install's path hook is never loaded, so Perfcase itself comes from the wheel alone
(each test asserts where its modules were imported from)."""

import os
import re
import shutil
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from pathlib import Path

import pytest

from tests import once

ROOT = Path(__file__).resolve().parents[2]
# What a clean checkout does not hold, or what the build does not need.
NOT_SOURCE = shutil.ignore_patterns(
    ".git", ".venv", "var", "build", "dist", "*.egg-info", "__pycache__", "*.so", "*.gz",
    "staticfiles", "test-artifacts", "tests", ".ruff_cache", ".pytest_cache",
)  # fmt: skip
# Folders read at run time: each of their files must be in the wheel, at this place.
SHIPPED = {
    "templates": "app/templates",
    "static": "app/static",
    "locale": "app/locale",
    "collectors/probes": "collectors/probes",
    "investigations/migrations/data": "investigations/migrations/data",
    "investigations/demo/files": "investigations/demo/files",
}


@pytest.fixture(scope="module")
def wheel(request) -> Path:
    """The wheel, built once for the whole run (tests/once.py): pytest-xdist may run this
    module's tests in several processes."""

    def build(work: Path):
        shutil.copytree(ROOT, work / "src", ignore=NOT_SOURCE)
        subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", work / "dist",
             work / "src"],
            check=True, timeout=300,
        )  # fmt: skip
        shutil.rmtree(work / "src")

    (built,) = (once.shared(request.config, "wheel", build) / "dist").glob("perfcase-*.whl")
    return built


@pytest.fixture(scope="module")
def installed(wheel, request) -> Path:
    """A venv holding the wheel, with the project venv's dependencies (once for the run);
    its python."""

    def install(venv: Path):
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", venv], check=True, timeout=60
        )
        subprocess.run(
            [sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install",
             "--quiet", "--no-deps", wheel],
            check=True, timeout=120,
        )  # fmt: skip
        site_packages = subprocess.run(
            [venv / "bin" / "python", "-c",
             "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True, capture_output=True, text=True,
        ).stdout.strip()  # fmt: skip
        ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
        pth = Path(site_packages) / "project_dependencies.pth"
        pth.write_text("\n".join(sorted(ours)) + "\n")

    return once.shared(request.config, "venv", install) / "bin" / "python"


def run_env(var_dir: Path, **extra) -> dict:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("DATABASE_URL", "CELERY_BROKER_URL", "PYTHONPATH")
        and not k.startswith(("PERFCASE_", "DJANGO_"))
    }
    return {**env, "DJANGO_SETTINGS_MODULE": "app.settings", "PERFCASE_VAR_DIR": str(var_dir),
            **extra}  # fmt: skip


@pytest.fixture(scope="module")
def migrated(installed, request) -> Path:
    """A database the installed app migrated (SQLite, in a var directory of its own, once
    for the run): each test starts from a copy, so the migrations run from the wheel once."""

    def migrate(var: Path):
        elsewhere = var.parent / "migrated-cwd"
        elsewhere.mkdir(exist_ok=True)
        done = subprocess.run(
            [installed, "-m", "django", "migrate", "--noinput", "-v0"],
            cwd=elsewhere, env=run_env(var), capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]

    return once.shared(request.config, "migrated-var", migrate) / "perfcase.sqlite3"


def var_with(database: Path, var_dir: Path) -> Path:
    """`var_dir`, holding a copy of the migrated `database`."""
    var_dir.mkdir()
    shutil.copy(database, var_dir / database.name)
    return var_dir


def test_the_wheel_ships_every_file_the_app_reads_and_the_licence(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())

    for source, shipped in SHIPPED.items():
        files = [p for p in (ROOT / source).rglob("*") if p.is_file() and p.suffix != ".gz"]
        assert files, source
        for path in files:
            assert f"{shipped}/{path.relative_to(ROOT / source)}" in names, path
    assert any(re.fullmatch(r"collectors/capture/_core\..*\.so", n) for n in names)
    metadata = zipfile.ZipFile(wheel).read("perfcase-0.1.0.dist-info/METADATA").decode()
    assert "License-Expression: AGPL-3.0-or-later" in metadata.splitlines()
    licence = zipfile.ZipFile(wheel).read("perfcase-0.1.0.dist-info/licenses/LICENSE")
    assert licence == (ROOT / "LICENSE").read_bytes()


CHECK = r"""
import sys
from pathlib import Path
import django
django.setup()
from django.conf import settings
from django.contrib.staticfiles import finders
from django.test import Client
import app, collectors.capture._core, collectors.facts, collectors.loadrun, investigations
from investigations.models import RootCause

venv = Path(sys.prefix)
for module in (app, investigations, collectors.capture._core, collectors.facts):
    assert venv in Path(module.__file__).parents, module.__file__
assert collectors.facts.SCRIPT.startswith(b"# Perfcase host-facts probe")
assert collectors.loadrun.STOPPABLE.startswith("# Perfcase's stoppable tools")
assert venv in Path(finders.find("vendor/htmx.min.js")).parents
assert RootCause.objects.count() >= 10  # the shipped entries, loaded by a migration
client = Client(HTTP_HOST="localhost")
page = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="zh-hans")
assert page.status_code == 200 and "登录" in page.content.decode(), page.status_code
script = client.get("/static/vendor/htmx.min.js")
assert script.status_code == 200 and b"htmx" in b"".join(script.streaming_content)
print("ok")
"""


def test_the_app_runs_from_the_installed_wheel(installed, migrated, tmp_path):
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    env = run_env(var_with(migrated, tmp_path / "var"))

    def django(*args, env=env):
        return subprocess.run(
            [installed, "-m", "django", *args], cwd=elsewhere, env=env,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip

    unset = django("check", env={k: v for k, v in env.items() if k != "PERFCASE_VAR_DIR"})
    assert unset.returncode != 0 and "PERFCASE_VAR_DIR must be set" in unset.stderr
    for command in (
        ["check", "--fail-level", "WARNING"],
        ["migrate", "--noinput", "-v0"],  # nothing left to apply: the copy is migrated
        ["load_demo"],  # reads the demo's outputs from the package
    ):
        done = django(*command)
        assert done.returncode == 0, done.stderr[-3000:]
    checked = subprocess.run(
        [installed, "-c", CHECK], cwd=elsewhere, env=env, capture_output=True, text=True,
        timeout=120,
    )  # fmt: skip
    assert checked.returncode == 0, checked.stderr[-3000:]
    assert checked.stdout.strip() == "ok"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_production_collects_the_static_files_and_gunicorn_serves_from_the_wheel(
    installed, migrated, tmp_path
):
    production = run_env(
        var_with(migrated, tmp_path / "var"),
        PERFCASE_DEBUG="0",
        PERFCASE_SECRET_KEY="wheel-test-" + "x" * 50,
        PERFCASE_ALLOWED_HOSTS="127.0.0.1",
        PERFCASE_CREDENTIAL_KEYS="bm90LWEtcmVhbC1rZXktYnV0LTMyLWJ5dGVzLWxvbmc=",
        PERFCASE_SSL_REDIRECT="0",
    )
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    for command in (["migrate", "--noinput", "-v0"], ["collectstatic", "--noinput", "-v0"]):
        done = subprocess.run(
            [installed, "-m", "django", *command], cwd=elsewhere, env=production,
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-3000:]
    assert (tmp_path / "var" / "staticfiles" / "vendor" / "plotly.min.js").is_file()

    port = free_port()
    server = subprocess.Popen(
        [installed, "-m", "gunicorn", "app.wsgi:application", "--bind", f"127.0.0.1:{port}",
         "--workers", "1"],
        cwd=elsewhere, env=production, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    try:
        page = None
        deadline = time.monotonic() + 60
        while page is None and time.monotonic() < deadline and server.poll() is None:
            try:
                page = urllib.request.urlopen(f"http://127.0.0.1:{port}/accounts/login/", timeout=5)
            except OSError:
                time.sleep(0.3)
        assert page is not None and page.status == 200, server.poll()
        html = page.read().decode()
        # The page names the collected, content-hashed copy of each script.
        (htmx,) = re.findall(r'src="(/static/vendor/htmx\.min\.[0-9a-f]{12}\.js)"', html)
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{htmx}", timeout=5) as script:
            assert script.status == 200 and b"htmx" in script.read()
    finally:
        server.terminate()
        server.wait(timeout=20)
