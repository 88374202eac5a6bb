"""The Chinese catalogue is complete: every string the code marks has a translation.

The strings are extracted afresh from a copy of the sources (the repository's catalogue is
never touched), merged with the shipped translations, and every entry must be translated
and not fuzzy. Then the shipped catalogue must compile, and the interface must answer in
Chinese for a browser that asks for it.
"""

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.utils import translation

from tests.conftest import require_real_tool

ROOT = Path(settings.BASE_DIR)
CATALOGUE = ROOT / "locale" / "zh_Hans" / "LC_MESSAGES" / "django.po"
SOURCES = ("app", "investigations", "collectors", "templates", "locale", "manage.py")


def po_entries(text: str) -> list[dict]:
    """The entries of a .po file: msgid, msgstr (all forms joined), flags."""
    entries, entry, field = [], None, None

    def unquote(line: str) -> str:
        return line[1:-1].encode().decode("unicode_escape").encode("latin-1").decode()

    for line in text.splitlines() + [""]:
        if not line.strip():
            if entry and entry["msgid"]:
                entries.append(entry)
            entry, field = None, None
            continue
        entry = entry or {
            "msgid": "",
            "plural": "",
            "msgstr": [],
            "flags": set(),
            "obsolete": False,
        }
        if line.startswith("#~"):
            entry["obsolete"] = True
        elif line.startswith("#,"):
            entry["flags"].update(flag.strip() for flag in line[2:].split(","))
        elif line.startswith("#"):
            continue
        elif line.startswith("msgid "):
            field, entry["msgid"] = "msgid", unquote(line[6:])
        elif line.startswith("msgid_plural "):
            field, entry["plural"] = "plural", unquote(line[13:])
        elif line.startswith("msgstr"):
            field = "msgstr"
            entry["msgstr"].append(unquote(line.split(" ", 1)[1]))
        elif line.startswith('"') and field == "msgid":
            entry["msgid"] += unquote(line)
        elif line.startswith('"') and field == "plural":
            entry["plural"] += unquote(line)
        elif line.startswith('"') and field == "msgstr":
            entry["msgstr"][-1] += unquote(line)
    return entries


def test_every_marked_string_has_a_chinese_translation(tmp_path):
    if shutil.which("xgettext") is None or shutil.which("msgmerge") is None:
        require_real_tool("gettext (xgettext, msgmerge) is not installed")
    for name in SOURCES:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tmp_path / name, ignore=shutil.ignore_patterns("*.mo"))
        else:
            shutil.copy2(source, tmp_path / name)
    subprocess.run(
        [
            sys.executable,
            "manage.py",
            "makemessages",
            "-l",
            "zh_Hans",
            "--no-location",
            "--no-obsolete",
        ],
        cwd=tmp_path,
        check=True,
        capture_output=True,
    )
    extracted = po_entries((tmp_path / CATALOGUE.relative_to(ROOT)).read_text())
    assert len(extracted) > 100, "the extraction found almost nothing: is makemessages broken?"
    untranslated = [e["msgid"] for e in extracted if not all(e["msgstr"]) and not e["obsolete"]]
    fuzzy = [e["msgid"] for e in extracted if "fuzzy" in e["flags"]]
    assert not untranslated, (
        f"{len(untranslated)} marked strings have no Chinese translation (run `make "
        f"translations`, then translate them in {CATALOGUE.relative_to(ROOT)}): {untranslated[:20]}"
    )
    assert not fuzzy, f"{len(fuzzy)} translations are marked fuzzy (check them): {fuzzy[:20]}"


def test_the_catalogue_compiles_and_keeps_placeholders(tmp_path):
    if shutil.which("msgfmt") is None:
        require_real_tool("gettext (msgfmt) is not installed")
    # --check: the placeholders of each translation match its msgid (python-format).
    subprocess.run(
        ["msgfmt", "--check", "-o", str(tmp_path / "django.mo"), str(CATALOGUE)],
        check=True,
        capture_output=True,
    )
    for entry in po_entries(CATALOGUE.read_text()):
        # A plural entry's one Chinese form may use the singular's or the plural's values.
        named = set(re.findall(r"%\((\w+)\)", entry["msgid"] + entry["plural"]))
        for text in entry["msgstr"]:
            used = set(re.findall(r"%\((\w+)\)", text))
            assert used <= named if entry["plural"] else used == named, entry["msgid"]


@pytest.mark.django_db
def test_a_browser_asking_for_chinese_gets_chinese(client):
    answer = client.get("/accounts/login/", HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9,en;q=0.5")
    assert answer.status_code == 200
    assert 'lang="zh-hans"' in answer.text
    assert "登录" in answer.text  # "Sign in"
    with translation.override("en"):
        assert "Sign in" in client.get("/accounts/login/").text
