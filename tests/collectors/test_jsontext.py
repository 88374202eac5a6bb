"""The bounded JSON reader (collectors/jsontext.py) and every importer that reads JSON through
it: hostile JSON is refused in words, never a RecursionError or a bare ValueError (issue 21,
item 6)."""

import pytest

from collectors.baseline import BenchmarkOutputError
from collectors.baseline.parsers import parse_fio_json, parse_import, parse_iperf3_json
from collectors.jsontext import MAX_DEPTH, JsonRefused, json_depth, read_json
from collectors.loadresults import LoadResultError, parse_k6_json

DEEP = '{"a":' * 100_000 + "1" + "}" * 100_000
LONG_NUMBER = '{"jobs": [], "end": {}, "metrics": {"x": ' + "9" * 100_000 + "}}"
LONG_FLOAT = '{"jobs": [], "end": {}, "metrics": {"x": 1.' + "5" * 100_000 + "}}"
HOSTILE = {"deep": DEEP, "long number": LONG_NUMBER, "long float": LONG_FLOAT}


def test_a_value_within_the_limits_is_read():
    text = '{"a": [1, 2.5, "x]}{[", {"b": null}], "c": -0.25e3, "d": "\\"]"}'
    assert read_json(text) == {"a": [1, 2.5, "x]}{[", {"b": None}], "c": -250.0, "d": '"]'}
    assert read_json(text.encode()) == read_json(text)


def test_the_depth_counts_brackets_outside_strings_only():
    assert json_depth('{"a": [[1]], "b": "[[[[[[["}') == 3
    assert json_depth("[" * 10 + "]" * 10) == 10


def test_nesting_past_the_limit_is_refused_before_parsing():
    read_json("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    with pytest.raises(JsonRefused, match="nested deeper than 64 levels") as refused:
        read_json("[" * (MAX_DEPTH + 1) + "]" * (MAX_DEPTH + 1))
    assert not refused.value.syntax
    with pytest.raises(JsonRefused, match="nested deeper than 64 levels"):
        read_json(DEEP)


@pytest.mark.parametrize("number", ["9" * 101, "1." + "5" * 100, "1e" + "0" * 100])
def test_a_number_longer_than_a_hundred_characters_is_refused(number):
    with pytest.raises(JsonRefused, match=r"a number of 10\d characters, more than the 100"):
        read_json(f'{{"x": {number}}}')


def test_nan_and_infinity_are_no_json_numbers():
    for constant in ("NaN", "Infinity", "-Infinity"):
        with pytest.raises(JsonRefused, match="no number in JSON"):
            read_json(f"[{constant}]")


def test_a_text_past_the_size_limit_is_refused_unread():
    with pytest.raises(JsonRefused, match="JSON of more than 1 MB"):
        read_json("[" + "1," * 600_000 + "1]", max_bytes=1024 * 1024)


def test_malformed_json_says_where():
    with pytest.raises(JsonRefused, match="invalid JSON at line 2, column 5") as refused:
        read_json('{"a":\n  1,,}')
    assert refused.value.syntax and refused.value.line == 2
    with pytest.raises(JsonRefused, match="not UTF-8"):
        read_json(b'{"a": "\xff"}')


@pytest.mark.parametrize("shape", HOSTILE)
@pytest.mark.parametrize("parser", [parse_fio_json, parse_iperf3_json, parse_import])
def test_the_baseline_importers_refuse_hostile_json_in_words(parser, shape):
    with pytest.raises(BenchmarkOutputError) as refused:
        parser(HOSTILE[shape])
    assert "nested deeper than 64 levels" in str(refused.value) or "a number of" in str(
        refused.value
    )


@pytest.mark.parametrize("shape", HOSTILE)
def test_the_k6_importer_refuses_hostile_json_in_words(shape):
    with pytest.raises(LoadResultError) as refused:
        parse_k6_json(HOSTILE[shape])
    assert str(refused.value).startswith("expected a k6 JSON summary, found ")
    assert "nested deeper" in str(refused.value) or "a number of" in str(refused.value)
