"""Log records that cannot be forged: every control character in a rendered message is
escaped, so text a user gave (a URL, a user name, a report's fields) can never start a line
of its own and pass for a record the application wrote.

`EscapeControls` is a logging filter, set on every handler: on the console handler by
settings.LOGGING, on the Celery worker's own handlers by app/celery.py. It renders the
message with its arguments, escapes \\r, \\n, \\t, the other C0 and C1 controls, DEL, the
Unicode line and paragraph separators and the bidirectional overrides (which reorder what a
terminal shows) as \\xNN or \\uNNNN, and indents every line of a traceback under its record,
so a newline in an exception's message starts no record either. Backslashes are left as they
are: escaping is then idempotent, and a record passed to several handlers stays as it was.
"""

import logging

from gunicorn.glogging import Logger as GunicornBaseLogger

_BIDI_CONTROLS = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(char: str) -> str:
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


_TABLE = {
    code: _escape(chr(code))
    for code in [*range(0x20), *range(0x7F, 0xA0), 0x2028, 0x2029, *map(ord, _BIDI_CONTROLS)]
}
# Every line of a traceback after its record's own begins so: never a record of its own.
TRACEBACK_INDENT = "  | "


def escape_controls(text: str) -> str:
    """`text` on one line: its control characters written as escapes (\\n, \\x1b, \\u2028)."""
    return text.translate(_TABLE)


def _indented(text: str) -> str:
    return "\n".join(TRACEBACK_INDENT + escape_controls(line) for line in text.split("\n"))


class EscapeControls(logging.Filter):
    """Escapes the rendered message of every record that passes, and indents its traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "_controls_escaped", False):
            return True
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: keep what can be said, escaped
            message = f"{record.msg!r} % {record.args!r}"
        record.msg, record.args = escape_controls(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = _indented(record.exc_text)
        if record.stack_info:
            record.stack_info = _indented(record.stack_info)
        record._controls_escaped = True
        return True


def escape_handlers(logger: logging.Logger) -> None:
    """Puts the filter on each of the logger's handlers (those Celery sets up itself)."""
    for handler in logger.handlers:
        if not any(isinstance(f, EscapeControls) for f in handler.filters):
            handler.addFilter(EscapeControls())


class GunicornLogger(GunicornBaseLogger):
    """gunicorn's logger (`--logger-class`, see the Dockerfile) with the filter on its own
    handlers: its access log writes the User-Agent and Referer a client sent."""

    def setup(self, cfg):
        super().setup(cfg)
        escape_handlers(self.error_log)
        escape_handlers(self.access_log)
