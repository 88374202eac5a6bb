"""Load-test results from wrk, wrk2, hey, ab, k6, JMeter and Locust: text in, ladder steps out.

Each parser is a pure function `parse_<format>(text) -> list[StepResult]`: one step for the
single-run tools, one per load level (ascending) for JMeter and Locust. A file it cannot read
is refused with LoadResultError naming the line (or the JSON key) and what was expected.
Times are milliseconds and transfer is bytes per second, converted from each tool's own units.
"""

import inspect
from collections.abc import Callable

from collectors.loadresults.ab import parse_ab
from collectors.loadresults.base import ERROR_KEYS, LATENCY_KEYS, LoadResultError, StepResult
from collectors.loadresults.hey import parse_hey
from collectors.loadresults.k6 import parse_k6_json, parse_k6_text
from collectors.loadresults.tables import parse_jmeter_csv, parse_locust_csv
from collectors.loadresults.wrk import parse_wrk, parse_wrk2
from collectors.phrase import Phrase, gettext_noop

__all__ = [
    "ERROR_KEYS",
    "FORMATS",
    "LATENCY_KEYS",
    "LoadResultError",
    "StepResult",
    "parse",
    "parse_ab",
    "parse_hey",
    "parse_jmeter_csv",
    "parse_k6_json",
    "parse_k6_text",
    "parse_locust_csv",
    "parse_wrk",
    "parse_wrk2",
]

FORMATS: dict[str, Callable[..., list[StepResult]]] = {
    "wrk": parse_wrk,
    "wrk2": parse_wrk2,
    "hey": parse_hey,
    "ab": parse_ab,
    "k6-json": parse_k6_json,
    "k6-text": parse_k6_text,
    "jmeter-csv": parse_jmeter_csv,
    "locust-csv": parse_locust_csv,
}


def parse(format: str, text: str, **options) -> list[StepResult]:
    """The steps of a result file in `format` (a key of FORMATS). Options go to the parser:
    `rate` for wrk2, `concurrency` for hey."""
    parser = FORMATS.get(format)
    if parser is None:
        raise LoadResultError(
            None,
            Phrase(
                gettext_noop("unknown format %(format)s: expected one of %(formats)s"),
                format=repr(format),
                formats=", ".join(FORMATS),
            ),
        )
    accepted = [
        p.name for p in inspect.signature(parser).parameters.values() if p.kind == p.KEYWORD_ONLY
    ]
    unknown = [name for name in options if name not in accepted]
    if unknown:
        takes = f"only {', '.join(accepted)}" if accepted else "no options"
        raise LoadResultError(
            None,
            Phrase(
                gettext_noop("%(format)s takes %(takes)s, not %(unknown)s"),
                format=format,
                takes=takes,
                unknown=", ".join(unknown),
            ),
        )
    return parser(text, **options)
