"""Static files as `make run` serves them: by WhiteNoise, compressed, and not sent twice."""

import subprocess
import sys
from pathlib import Path

from django.conf import settings
from django.test import Client

PLOTLY = Path(settings.BASE_DIR) / "static" / "vendor" / "plotly.min.js"


def test_the_dev_server_leaves_static_files_to_whitenoise():
    apps = settings.INSTALLED_APPS
    assert apps.index("whitenoise.runserver_nostatic") < apps.index("django.contrib.staticfiles")


def test_plotly_goes_compressed_and_is_not_sent_again_unchanged():
    if not PLOTLY.with_suffix(".js.gz").exists():  # what `make static` does
        subprocess.run(
            [sys.executable, "-m", "whitenoise.compress", "-q", "--no-brotli", str(PLOTLY.parent)],
            check=True,
        )
    client = Client()

    first = client.get("/static/vendor/plotly.min.js", HTTP_ACCEPT_ENCODING="gzip, deflate, br")

    assert first.status_code == 200
    assert first["Content-Encoding"] == "gzip"
    assert int(first["Content-Length"]) < PLOTLY.stat().st_size / 2
    assert "Cache-Control" in first and first["ETag"]
    again = client.get(
        "/static/vendor/plotly.min.js",
        HTTP_ACCEPT_ENCODING="gzip",
        HTTP_IF_NONE_MATCH=first["ETag"],
    )
    assert again.status_code == 304
    assert b"".join(again.streaming_content if again.streaming else [again.content]) == b""
