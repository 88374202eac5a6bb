"""Uploads are measured while they stream: a file or a request past its limit is stopped
and refused (413) before any view reads it, each kind of import checks its own limit from
the size measured before a byte is read into memory, and a path hop's evidence file has a
limit too."""

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile

from investigations.models import BaselineResult, PathNode, Profile
from investigations.services.path import path_node_create, path_node_set_state
from investigations.uploads import uploads_read
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db
MB = 1024 * 1024


def folded(name: str, megabytes: float) -> SimpleUploadedFile:
    line = b"svc;main;handle;parse 1\n"
    return SimpleUploadedFile(name, line * int(megabytes * MB / len(line) + 1))


def imports_path(personas) -> str:
    return f"/api/investigations/{personas.investigation.pk}/imports"


def test_a_file_past_the_limit_is_stopped_while_it_streams_and_refused_with_413(personas, settings):
    settings.UPLOAD_MAX_FILE_MB = 1
    api = ApiClient(personas.member)

    answer = api.client.post(
        imports_path(personas),
        {"side": "a", "format": "folded", "file": [folded("huge.folded", 3)]},
        headers=api.headers,
    )

    assert answer.status_code == 413
    assert answer.json()["detail"] == ("huge.folded is larger than 1 MB, the most a file may be.")
    assert not Profile.objects.exists()


def test_a_request_past_its_total_is_refused_though_each_file_is_small(personas, settings):
    settings.UPLOAD_MAX_REQUEST_MB = 1
    api = ApiClient(personas.member)

    answer = api.client.post(
        imports_path(personas),
        {
            "side": "a",
            "format": "folded",
            "file": [folded("one.folded", 0.6), folded("two.folded", 0.6)],
        },
        headers=api.headers,
    )

    assert answer.status_code == 413
    assert "the most one request may send" in answer.json()["detail"]
    assert not Profile.objects.exists()


def test_on_a_page_the_refusal_goes_back_where_it_came_from_with_the_reason(personas, settings):
    settings.UPLOAD_MAX_FILE_MB = 1
    client = personas.client(personas.member)
    case = f"/investigations/{personas.investigation.pk}/"

    answer = client.post(
        f"/investigations/{personas.investigation.pk}/profiles/import/",
        {"profile-side": "a", "profile-format": "folded", "profile-file": folded("big.folded", 2)},
        HTTP_REFERER=f"http://testserver{case}",
    )

    assert answer.status_code == 303 and answer["Location"] == f"http://testserver{case}"
    page = client.get(case).content.decode()
    assert "big.folded is larger than 1 MB, the most a file may be." in page
    assert not Profile.objects.exists()


def test_each_import_checks_its_own_limit_before_reading_a_byte():
    class Unreadable(SimpleUploadedFile):
        def read(self, *args):
            raise AssertionError("read before its size was checked")

    too_big = Unreadable("results.json", b"x" * 2048)

    with pytest.raises(ValidationError) as refused:
        uploads_read([too_big], max_bytes=1024, max_files=5)
    with pytest.raises(ValidationError) as too_many:
        uploads_read([too_big] * 6, max_bytes=1 * MB, max_files=5)

    assert refused.value.message_dict["file"] == ["results.json: larger than 0 MB."]
    assert too_many.value.message_dict["file"] == ["At most 5 files at a time."]


def test_a_baseline_import_past_its_limit_is_refused_by_its_measured_size(personas):
    api = ApiClient(personas.member)
    big = SimpleUploadedFile("fio.json", b"{" + b" " * (21 * MB) + b"}")

    answer = api.client.post(
        imports_path(personas),
        {"side": "a", "format": "fio-json", "file": [big]},
        headers=api.headers,
    )

    assert answer.status_code == 400
    assert answer.json()["errors"][0]["message"] == "fio.json: larger than 20 MB."
    assert not BaselineResult.objects.exists()


def test_more_than_fifty_files_in_one_request_are_refused(personas):
    api = ApiClient(personas.member)
    files = [SimpleUploadedFile(f"{n}.txt", b"x") for n in range(51)]

    answer = api.client.post(
        imports_path(personas), {"side": "a", "format": "wrk", "file": files}, headers=api.headers
    )

    assert answer.status_code == 400


def test_a_path_hops_evidence_file_has_a_limit(personas, settings, tmp_path):
    settings.MEDIA_ROOT = str(tmp_path)
    settings.PATH_EVIDENCE_MAX_MB = 1
    hop = path_node_create(
        investigation=personas.investigation, user=personas.member, label="app", kind="service"
    )

    with pytest.raises(ValidationError) as refused:
        path_node_set_state(
            node=hop,
            user=personas.member,
            state="suspect",
            note="slow",
            file=SimpleUploadedFile("dump.bin", b"x" * (2 * MB)),
        )

    assert refused.value.message_dict["file"] == ["dump.bin: larger than 1 MB."]
    hop = PathNode.objects.get(pk=hop.pk)
    assert hop.state == "not_checked" and not hop.state_file
    assert not list(tmp_path.rglob("dump*"))
