"""The demo's pages in Chinese read as well as in English (issue 24 bug 11): no "pair(s)"
plural hack in either language, numbers grouped by thousands wherever the English groups
them, one number format a column in the ladder's table, and the words the English pages
had left in English (the path graph's "≠ sides differ", the ladder's "steal") translated."""

import re
from pathlib import Path

import pytest
from django.utils import translation

from collectors.phrase import Phrase, ngettext_noop
from investigations.models import Ladder
from investigations.phrases import translate

pytestmark = pytest.mark.django_db
ROOT = Path(__file__).resolve().parents[2]

# A word with "(s)" glued to it: "pair(s)", "finding(s)" (not a unit such as "At (s)").
PLURAL_HACK = re.compile(r"[A-Za-z]\(s\)")
# A number of four or more digits grouped by thousands: 1,176 or 3,723,617.5.
GROUPED = re.compile(r"(?<![\d.,])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])")
UNGROUPED = re.compile(r"(?<![\d.,#/:-])\d{4,}(?:\.\d+)?(?![\d,])")


@pytest.fixture
def demo(demo_case):
    client, investigation = demo_case
    ladder = Ladder.objects.filter(investigation=investigation).first()
    return client, [
        f"/investigations/{investigation.pk}/",
        f"/ladders/{ladder.pk}/",
        f"/investigations/{investigation.pk}/panels/path/",
        f"/investigations/{investigation.pk}/baseline/",
        f"/investigations/{investigation.pk}/postmortem/",
        f"/investigations/{investigation.pk}/facts/diff/",
        "/knowledge/",
    ]


def _text(html: str) -> str:
    """What a person reads: no scripts, styles or tags."""
    html = re.sub(r"(?s)<(script|style)\b.*?</\1>", " ", html)
    return re.sub(r"<[^>]+>", " ", html)


def _page(client, url: str, language: str) -> str:
    answer = client.get(url, HTTP_ACCEPT_LANGUAGE=language)
    assert answer.status_code == 200, url
    return answer.content.decode()


def test_the_demo_reads_without_plural_hacks_and_with_grouped_numbers_in_chinese(demo):
    client, urls = demo
    for url in urls:
        english = _page(client, url, "en")
        chinese = _page(client, url, "zh-hans")
        assert 'lang="zh-hans"' in chinese

        for language, page in (("en", english), ("zh-hans", chinese)):
            hacks = PLURAL_HACK.findall(_text(page))
            assert not hacks, f"{url} in {language}: {hacks}"
        grouped_in_english = set(GROUPED.findall(_text(english)))
        grouped_in_chinese = set(GROUPED.findall(_text(chinese)))
        missing = grouped_in_english - grouped_in_chinese
        assert not missing, f"{url}: grouped in English, not in Chinese: {sorted(missing)}"


def test_the_ladder_table_formats_each_column_one_way_in_both_languages(demo):
    client, urls = demo
    ladder_url = urls[1]
    for language in ("en", "zh-hans"):
        page = _page(client, ladder_url, language)
        table = re.search(r'(?s)<table class="list ladder-table">.*?</table>', page).group(0)
        assert not UNGROUPED.findall(_text(table)), language
        body = table.split("<tbody>", 1)[1]
        for row in re.findall(r"(?s)<tr>(.*?)</tr>", body):
            cells = [_text(cell).strip() for cell in re.findall(r"(?s)<td[^>]*>(.*?)</td>", row)]
            # p99 and p50 of both sides: one decimal always ("2.0", never "2" beside "2.5").
            for latency in (cells[4], cells[5], cells[8], cells[9]):
                assert latency == "—" or re.fullmatch(r"[\d,]+\.\d", latency), (language, cells)


def test_the_words_left_in_english_are_chinese_now(demo):
    client, urls = demo
    case = _page(client, urls[0], "zh-hans")
    ladder = _page(client, urls[1], "zh-hans")
    path = _page(client, urls[2], "zh-hans")

    assert "sides differ" not in path and "两侧规格不同。" in path
    assert "两侧规格不同." not in path
    assert "steal" not in _text(ladder).lower()
    switch = re.search(r"(?s)<form[^>]*language-switch.*?</form>", case).group(0)
    assert re.search(r"English</button>\s*<span[^>]*>\|</span>\s*<button", switch)


def test_no_marked_string_counts_with_a_plural_hack():
    """ "1 pair(s); 0 finding(s)": every count is a plural of its own (ngettext)."""
    catalogue = (ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po").read_text()
    msgids = re.findall(r'(?m)^msgid(?:_plural)? ((?:".*"\n)+)', catalogue)
    texts = ["".join(re.findall(r'"(.*)"', block)) for block in msgids]

    assert [text for text in texts if PLURAL_HACK.search(text)] == [
        # Stored before counts had plurals: kept so that older rows still read in Chinese.
        "facts from both hosts of %(pairs)s pair(s); %(findings)s finding(s) reviewed"
    ]


def test_a_phrase_that_counts_takes_the_form_of_its_count_in_each_language():
    one = Phrase(
        ngettext_noop("%(count)s finding reviewed", "%(count)s findings reviewed"), count=1
    )
    two = Phrase(
        ngettext_noop("%(count)s finding reviewed", "%(count)s findings reviewed"), count=2
    )
    stored = Phrase.from_json(two.as_json())

    assert (str(one), str(two), str(stored)) == (
        "1 finding reviewed",
        "2 findings reviewed",
        "2 findings reviewed",
    )
    with translation.override("zh-hans"):
        assert translate(one) == "已复核 1 条发现"
        assert translate(stored) == "已复核 2 条发现"
    with translation.override("en"):
        assert translate(one) == "1 finding reviewed"
