"""Hostile JSON sent to an importer is a 400 naming the file, never a 500 (issue 21, item 6):
nested 100,000 levels deep (RecursionError before), a number of 100,000 digits (a bare
ValueError before), through the API and through the import pages. (A request body as hostile
is already a 400: django-ninja answers any body its parser cannot read so.)"""

import html

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from investigations.models import BaselineResult, Ladder
from tests.conftest import ApiClient

pytestmark = pytest.mark.django_db
DEEP = '{"a":' * 100_000 + "1" + "}" * 100_000
LONG_NUMBER = '{"jobs": [], "end": {}, "metrics": {"x": ' + "9" * 100_000 + "}}"
SHAPES = {
    "deep": (DEEP, "JSON nested deeper than 64 levels"),
    "long number": (LONG_NUMBER, "a number of 100,000 characters"),
}
FORMATS = ["fio-json", "iperf3-json", "k6-json"]


def upload(content: str) -> SimpleUploadedFile:
    return SimpleUploadedFile("results.json", content.encode(), "application/json")


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("format", FORMATS)
def test_the_api_refuses_hostile_json_naming_the_file(personas, format, shape):
    content, problem = SHAPES[shape]

    answer = ApiClient(personas.member).post_multipart(
        f"/api/investigations/{personas.investigation.pk}/imports",
        {"side": "a", "format": format, "file": [upload(content)]},
    )

    assert answer.status_code == 400, answer.content
    [error] = answer.body["errors"]
    assert error["field"] == "file"
    assert error["message"].startswith("results.json: "), error
    assert problem in error["message"], error
    assert not BaselineResult.objects.exists() and not Ladder.objects.exists()


@pytest.mark.parametrize("shape", SHAPES)
def test_the_baseline_page_refuses_hostile_json_naming_the_file(personas, shape):
    content, problem = SHAPES[shape]

    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/baseline/import/",
        {"baseline-side": "a", "baseline-role": "", "baseline-file": [upload(content)]},
    )

    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert "results.json: " in page and problem in page
    assert not BaselineResult.objects.exists()


@pytest.mark.parametrize("shape", SHAPES)
def test_the_ladder_import_page_refuses_hostile_json_naming_the_file(personas, shape):
    content, problem = SHAPES[shape]

    response = personas.client(personas.member).post(
        f"/investigations/{personas.investigation.pk}/imports/",
        {
            "import-side": "a",
            "import-format": "k6-json",
            "import-file": [upload(content)],
            "import-load": "",
            "import-ladder": "",
        },
    )

    assert response.status_code == 400
    page = html.unescape(response.content.decode())
    assert "results.json: " in page and problem in page
    assert not Ladder.objects.exists()
