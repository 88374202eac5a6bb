"""One bounded reader for JSON that comes from outside: uploaded result files, tools' outputs
on a host, request bodies.

json.loads alone fails badly on hostile text: nesting 100,000 levels deep raises
RecursionError, an integer of 100,000 digits raises a bare ValueError (Python refuses to
convert more than 4,300), and a structure nested a few hundred levels deep parses but breaks
whatever walks it later (repr, the schema). Here the size is checked first, then the depth
(counted without recursion, brackets inside strings left out), then every number's length
as it is parsed; each refusal is a JsonRefused that says which limit, in words.
"""

import json
import re
from itertools import accumulate

from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _

MAX_BYTES = 20 * 1024 * 1024
MAX_DEPTH = 64  # fio's report nests 6 levels, k6's summary 4, our API bodies 3
MAX_DIGITS = 100  # the longest number a tool prints (a float's 17 digits and exponent)

# A string, or an unterminated one to the end of the text: every attempt that starts at a
# quote ends past it, so the scan is linear whatever the quotes and backslashes.
_STRING = re.compile(r'"(?:[^"\\]++|\\[\s\S])*+(?:"|\\?\Z)')
_NOT_BRACKETS = re.compile(r"[^\[\]{}]++")
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


class JsonRefused(ValueError):
    """The text is no JSON this reader takes. `phrase` says why (read in each person's
    language); `syntax` is True for malformed JSON (`reason` then is json's own words), False
    for a limit passed; `line` and `column` say where, when known."""

    def __init__(
        self,
        phrase: Phrase,
        *,
        syntax: bool = False,
        line: int | None = None,
        column: int | None = None,
        reason: str = "",
    ):
        super().__init__(str(phrase))
        self.phrase, self.syntax, self.reason = phrase, syntax, reason
        self.line, self.column = line, column


def json_depth(text: str, limit: int = MAX_DEPTH) -> int:
    """How deep the text's arrays and objects nest (brackets inside strings left out), counted
    up to a little past `limit`; malformed text is counted as far as it goes."""
    brackets = _NOT_BRACKETS.sub("", _STRING.sub("", text))
    deepest = 0
    for depth in accumulate(_STEP[char] for char in brackets):
        if depth > deepest:
            deepest = depth
            if deepest > limit:
                break
    return deepest


def _number(kind):
    def parse(value: str):
        if len(value) > MAX_DIGITS:
            raise JsonRefused(
                Phrase(
                    _("a number of %(length)s characters, more than the %(limit)s JSON may have"),
                    length=f"{len(value):,}",
                    limit=MAX_DIGITS,
                )
            )
        return kind(value)

    return parse


def _constant(value: str):
    raise JsonRefused(Phrase(_("%(value)s, which is no number in JSON"), value=value))


def read_json(text: str | bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH):
    """The value of a JSON text, within the limits, or a JsonRefused."""
    if len(text) > max_bytes:
        raise JsonRefused(
            Phrase(
                _("JSON of more than %(size)s MB"),
                size=f"{max_bytes / 1024 / 1024:g}",
            )
        )
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as error:
            raise JsonRefused(
                Phrase(_("JSON that is not UTF-8 (byte %(at)s)"), at=error.start + 1), syntax=True
            ) from None
    if json_depth(text, max_depth) > max_depth:
        raise JsonRefused(Phrase(_("JSON nested deeper than %(depth)s levels"), depth=max_depth))
    try:
        return json.loads(
            text,
            parse_int=_number(int),
            parse_float=_number(float),
            parse_constant=_constant,
        )
    except json.JSONDecodeError as error:
        raise JsonRefused(
            Phrase(
                _("invalid JSON at line %(line)s, column %(column)s: %(error)s"),
                line=error.lineno,
                column=error.colno,
                error=error.msg,
            ),
            syntax=True,
            line=error.lineno,
            column=error.colno,
            reason=error.msg,
        ) from None
    except RecursionError:  # only if the depth limit is set above what Python can take
        raise JsonRefused(
            Phrase(_("JSON nested deeper than %(depth)s levels"), depth=max_depth)
        ) from None
