"""A file per concept: a module that passes ~500 lines is split by sub-domain (STYLE.md)."""

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
MAX_LINES = 500


def test_no_module_of_the_code_is_over_500_lines():
    too_long = {
        str(path.relative_to(ROOT)): lines
        for package in ("app", "investigations", "collectors")
        for path in sorted((ROOT / package).rglob("*.py"))
        if "migrations" not in path.parts
        and (lines := len(path.read_text().splitlines())) > MAX_LINES
    }

    assert too_long == {}, f"Split these by sub-domain (lines): {too_long}"
