"""Profiles imported from files: the format recognised from what a file holds (and named when
it is another, or no profile at all), what the counts are (samples, or events weighted by
period as stackcollapse-perf.pl writes them), and kernel stacks seen in the frames.

Real inputs: FlameGraph's perf scripts (shared/fixtures/profiles), folded by FlameGraph's own
stackcollapse-perf.pl (shared/tools/flamegraph, run in place), and a pcap of
tests/collectors/data."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from investigations.models import Profile
from investigations.services.profiles import AUTO, profile_import
from tests.collectors.test_recognise import CAPTURES
from tests.collectors.test_stacks import PROFILES, run_stackcollapse
from tests.conftest import ApiClient, loaded_page

pytestmark = pytest.mark.django_db

DD = PROFILES / "perf-dd-stacks-01.txt"  # 10 samples of dd, each 10101010 ns of cpu-clock


def imported(personas, name: str, content: bytes, format: str = AUTO, side: str = "a"):
    (profile,) = profile_import(
        investigation=personas.investigation,
        user=personas.lead,
        side_key=side,
        format=format,
        files=[(name, content)],
    )
    return profile


def refusal(personas, name: str, content: bytes, format: str) -> str:
    with pytest.raises(ValidationError) as raised:
        imported(personas, name, content, format)
    assert not Profile.objects.exists()
    return " ".join(raised.value.message_dict["file"])


def test_perf_script_imported_as_folded_stacks_is_named_as_perf_script(personas):
    message = refusal(personas, "dd.txt", DD.read_bytes(), "folded")
    assert message == (
        "dd.txt: this is perf script text, not folded stacks: import it as “perf script text”."
    )


def test_folded_stacks_imported_as_perf_script_are_named_as_folded(personas):
    folded = run_stackcollapse(DD.read_bytes(), ["--all"])
    message = refusal(personas, "dd.folded", folded, "perf-script")
    assert message.startswith("dd.folded: this is folded stacks, not perf script text"), message


def test_py_spy_output_imported_as_perf_script_is_named_as_py_spy(personas):
    from tests.collectors.test_stacks import PY_SPY_RAW

    message = refusal(personas, "spin.txt", PY_SPY_RAW.encode(), "perf-script")
    assert message.startswith("spin.txt: this is py-spy raw stacks, not perf script text")


def test_a_packet_capture_says_what_it_is_and_what_a_profile_is(personas):
    pcap = (CAPTURES / "keepalive-pauses-ethernet.pcap").read_bytes()
    for format in ("folded", "perf-script", AUTO):
        message = refusal(personas, "trace.pcap", pcap, format)
        assert message.startswith(
            "trace.pcap: this is not a profile in any format read here; it looks like a "
            "packet capture (pcap)"
        ), message
        assert "A profile is the text of `perf script`, or folded stacks" in message


def test_the_format_is_recognised_file_by_file(personas):
    perf = imported(personas, "dd.txt", DD.read_bytes())
    folded = imported(personas, "dd.folded", run_stackcollapse(DD.read_bytes(), ["--all"]))
    assert (perf.format, folded.format) == ("perf-script", "folded")
    assert perf.weight == folded.weight == 101_010_100


def test_folded_counts_weighted_by_period_are_not_called_samples(personas, settings):
    perf = imported(personas, "dd.txt", DD.read_bytes(), "perf-script")
    folded = imported(
        personas, "dd.folded", run_stackcollapse(DD.read_bytes(), ["--all"]), "folded"
    )
    # A folded file made by stackcollapse-perf.pl carries the periods, not 10 samples.
    assert (perf.samples, perf.weight) == (10, 101_010_100)
    assert (folded.samples, folded.weight) == (0, 101_010_100)
    # A folded file of samples stays samples.
    plain = imported(personas, "plain.folded", b"svc;main;work 90\nsvc;main;parse 10\n", "folded")
    assert (plain.samples, plain.weight) == (100, 100)

    client = personas.client(personas.member)
    page = loaded_page(client, reverse("investigation_detail", args=[personas.investigation.pk]))
    cells = re.findall(r'<td class="num">([^<]*)</td>', page)
    assert "10 samples" in cells
    assert "101,010,100 events (weighted by period)" in cells
    assert "100 samples" in cells

    detail = client.get(reverse("profile_detail", args=[personas.investigation.pk, folded.pk]))
    text = detail.content.decode()
    assert "not known: the file's counts are weights, not samples" in text
    assert "101,010,100" in text and "events weighted by period" in text

    # Chinese groups the digits too (Django's zh_Hans format has no separator of its own).
    client.cookies[settings.LANGUAGE_COOKIE_NAME] = "zh-hans"
    page = loaded_page(client, reverse("investigation_detail", args=[personas.investigation.pk]))
    assert "101,010,100" in page
    assert "101010100" not in page


def test_frames_marked_as_the_kernels_say_the_profile_has_kernel_stacks(personas):
    folded = run_stackcollapse(DD.read_bytes(), ["--all"])
    assert b"_[k]" in folded
    profile = imported(personas, "dd.folded", folded, "folded")
    assert profile.kernel_stacks is True
    user_only = imported(personas, "user.folded", b"svc;main;work 90\n", "folded")
    assert user_only.kernel_stacks is None

    client = personas.client(personas.member)
    url = reverse("profile_detail", args=[personas.investigation.pk, profile.pk])
    kernel = re.search(r'<dd class="profile-kernel">([^<]*)</dd>', client.get(url).content.decode())
    assert kernel[1] == "recorded"

    # A profile stored before frames were looked at (kernel_stacks not known) reads the same.
    Profile.objects.filter(pk=profile.pk).update(kernel_stacks=None)
    kernel = re.search(r'<dd class="profile-kernel">([^<]*)</dd>', client.get(url).content.decode())
    assert kernel[1] == "recorded"


def test_the_import_form_recognises_the_format_by_default(personas):
    client = personas.client(personas.member)
    answer = client.post(
        reverse("profile_import", args=[personas.investigation.pk]),
        {
            "profile-side": "b",
            "profile-format": "auto",
            "profile-file": [SimpleUploadedFile("dd.txt", DD.read_bytes())],
        },
    )
    assert answer.status_code == 302, answer.content.decode()[:2000]
    assert Profile.objects.get().format == "perf-script"


def test_the_import_form_says_beside_its_field_what_a_wrong_file_is(personas):
    client = personas.client(personas.member)
    answer = client.post(
        reverse("profile_import", args=[personas.investigation.pk]),
        {
            "profile-side": "a",
            "profile-format": "auto",
            "profile-file": [
                SimpleUploadedFile(
                    "trace.pcap", (CAPTURES / "keepalive-pauses-ethernet.pcap").read_bytes()
                )
            ],
        },
        HTTP_HX_REQUEST="true",
    )
    assert answer.status_code == 400
    page = answer.content.decode()
    assert "trace.pcap: this is not a profile in any format read here; it looks like a " in page
    assert "packet capture (pcap)" in page
    assert not Profile.objects.exists()


def test_the_api_takes_auto_and_recognises_each_files_format(personas):
    """The import endpoint's format "auto", as the page's form has it (issue 24): each
    file's own format; the explicit formats still hold; no profile at all is named."""
    api = ApiClient(personas.member)
    path = f"/api/investigations/{personas.investigation.pk}/imports"
    folded = run_stackcollapse(DD.read_bytes(), ["--all"])

    def post(side: str, format: str, *files: tuple[str, bytes]):
        uploads = [SimpleUploadedFile(name, content) for name, content in files]
        return api.client.post(
            path, {"side": side, "format": format, "file": uploads}, headers=api.headers
        )

    answer = post("a", "auto", ("dd.txt", DD.read_bytes()), ("dd.folded", folded))
    assert answer.status_code == 201, answer.content
    formats = {p["name"]: p["format"] for p in answer.json()["profiles"]}
    assert formats == {"dd.txt": "perf-script", "dd.folded": "folded"}

    refused = post("b", "perf-script", ("dd.folded", folded))
    assert refused.status_code == 400
    assert refused.json()["errors"][0]["message"].startswith(
        "dd.folded: this is folded stacks, not perf script text"
    )
    capture = (CAPTURES / "lossy-link-ethernet.pcap").read_bytes()
    pcap = post("b", "auto", ("lossy.pcap", capture))
    assert pcap.status_code == 400
    assert pcap.json()["errors"][0]["message"].startswith("lossy.pcap: this is not a profile")
    assert Profile.objects.count() == 2


def test_the_diff_page_says_what_each_sides_shares_are_of(personas, client):
    """Issue 24: its help said "percent of its own samples" where a side's weight may be
    events weighted by period; it names each side's unit as the profile's page does."""
    a = imported(personas, "a.folded", b"svc;main;parse 90\nsvc;main;encode 10\n")
    b = imported(personas, "dd.folded", run_stackcollapse(DD.read_bytes(), ["--all"]), side="b")
    client.force_login(personas.member)

    page = loaded_page(
        client, f"/investigations/{personas.investigation.pk}/profiles/diff/?a={a.pk}&b={b.pk}"
    )

    assert "own samples" not in page
    assert "percent of its own total (A counts samples, B events weighted by period)" in page
