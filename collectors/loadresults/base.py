"""What every load-result parser shares: the step it returns, its error, reading the text
(the package's docstring says what the parsers promise)."""

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal

from collectors.phrase import Phrase, as_phrase, gettext_noop

LATENCY_KEYS = ("avg", "p50", "p75", "p90", "p99", "max")
ERROR_KEYS = ("connect", "read", "write", "timeout", "non_2xx", "other")


class LoadResultError(ValueError):
    """A result file that cannot be read; `line` is 1-based, None when no line applies.
    `phrase` says so in each reader's language; `message` is the English without the line."""

    def __init__(self, line: int | None, message: "str | Phrase"):
        message = as_phrase(message)
        self.phrase = (
            Phrase(gettext_noop("line %(line)s: %(message)s"), line=line, message=message)
            if line is not None
            else message
        )
        super().__init__(str(self.phrase))
        self.line = line
        self.message = message


# What a reader met where the expected line should have been.
END_OF_OUTPUT = Phrase(gettext_noop("the end of the output"))


def expected_found(line: int, expected: str, found: "str | Phrase") -> LoadResultError:
    """The common error: a line of the tool's output (quoted as the tool prints it) was
    expected where something else was found."""
    return LoadResultError(
        line,
        Phrase(
            gettext_noop("expected '%(expected)s', found %(found)s"), expected=expected, found=found
        ),
    )


@dataclass(frozen=True)
class StepResult:
    load: float  # concurrency, or a request rate for rate-driven tools (wrk2 -R)
    load_kind: str  # "concurrency" or "rate"
    duration_s: float | None
    requests: int
    rps: float
    transfer_bytes_per_s: float | None
    latency_ms: dict[str, float | None]  # keys exactly LATENCY_KEYS
    errors: dict[str, int]  # keys exactly ERROR_KEYS
    # Records of the file left out while reading it, by why (on a file's first step only:
    # they belong to the file, not to a load level).
    skipped: dict[str, int] = field(default_factory=dict)


def make_step(load, kind, duration, requests, rps, transfer, latency, errors=None) -> StepResult:
    return StepResult(
        load=float(load),
        load_kind=kind,
        duration_s=None if duration is None else float(duration),
        requests=int(requests),
        rps=float(rps),
        transfer_bytes_per_s=None if transfer is None else float(transfer),
        latency_ms={key: latency.get(key) for key in LATENCY_KEYS},
        errors={key: int((errors or {}).get(key, 0)) for key in ERROR_KEYS},
    )


# --- reading text ------------------------------------------------------------------------

# Control characters no tool prints (tab, newline, carriage return and ESC are allowed), and
# the replacement character that undecodable bytes become.
_BINARY = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1a\x1c-\x1f\x7f\ufffd]")
NUM = r"\d+(?:\.\d+)?"


def read_text(text, tool: str) -> str:
    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            line = bytes(text)[: exc.start].count(b"\n") + 1
            raise LoadResultError(line, _binary(tool)) from None
    if not isinstance(text, str):
        raise LoadResultError(
            None,
            Phrase(
                gettext_noop("expected %(tool)s output as text, found %(found)s"),
                tool=tool,
                found=type(text).__name__,
            ),
        )
    if not text.strip():
        raise LoadResultError(
            1, Phrase(gettext_noop("expected %(tool)s output, found an empty text"), tool=tool)
        )
    match = _BINARY.search(text)
    if match:
        line = text.count("\n", 0, match.start()) + 1
        raise LoadResultError(line, _binary(tool))
    return text


def _binary(tool: str) -> Phrase:
    return Phrase(gettext_noop("expected %(tool)s output as text, found binary data"), tool=tool)


def read_lines(text, tool: str) -> list[str]:
    lines = read_text(text, tool).split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.rstrip("\r") for line in lines]


def shown(line: str) -> str:
    line = line.strip()
    return repr(line if len(line) <= 200 else line[:200] + "...")


def dec(value: str, scale: str | int = 1) -> float:
    return float(Decimal(value) * Decimal(scale))


@dataclass(frozen=True)
class Item:
    """One line of a tool's report, in the order the tool prints them."""

    key: str
    label: str  # a regex that recognises the line (matched at the start, line stripped)
    pattern: str  # a regex for the whole stripped line
    expected: str  # how the line should look, for messages
    required: bool = True
    block: Callable | None = None  # reads the lines under a heading: (lines, index) -> data


def scan(lines: list[str], items: list[Item], stopped: Callable | None = None) -> dict:
    """Find each item in order: {key: (line number, match, block data)}.

    Unknown lines between items are passed over (tools print progress, warnings, script
    output); a line that belongs to a later item means this one is missing."""
    labels = [re.compile(item.label) for item in items]
    found = {}
    position = 0
    for index, item in enumerate(items):
        at = position
        hit = None
        while at < len(lines):
            line = lines[at].strip()
            if labels[index].match(line):
                hit = at
                break
            if any(label.match(line) for label in labels[index + 1 :]):
                break
            at += 1
        if hit is None:
            if not item.required:
                continue
            if stopped is not None:
                stopped(lines)
            what = shown(lines[at]) if at < len(lines) else END_OF_OUTPUT
            raise expected_found(at + 1, item.expected, what)
        match = re.fullmatch(item.pattern, lines[hit].strip())
        if match is None:
            raise expected_found(hit + 1, item.expected, shown(lines[hit]))
        data, position = None, hit + 1
        if item.block is not None:
            data, position = item.block(lines, hit + 1)
        found[item.key] = (hit + 1, match, data)
    return found


def labelled_rows(lines: list[str], start: int, label: str, pattern: str, expected: str):
    """The lines under a heading (blank lines before them skipped): each line that `label`
    recognises must match `pattern`; the first one it does not recognise ends them.
    Returns ([(line number, match)], index of the first line after them)."""
    at = start
    while at < len(lines) and not lines[at].strip():
        at += 1
    matches = []
    while at < len(lines) and re.match(label, lines[at].strip()):
        match = re.fullmatch(pattern, lines[at].strip())
        if match is None:
            raise expected_found(at + 1, expected, shown(lines[at]))
        matches.append((at + 1, match))
        at += 1
    return matches, at


def rows_until(lines: list[str], start: int, pattern: str, expected: str, until: str):
    """Every non-blank line from `start` matches `pattern` up to one matching `until`,
    which must come. Returns the index of that line."""
    at = start
    while at < len(lines):
        line = lines[at].strip()
        if re.fullmatch(until, line):
            return at
        if line and re.fullmatch(pattern, line) is None:
            raise expected_found(at + 1, expected, shown(line))
        at += 1
    raise expected_found(at + 1, expected, END_OF_OUTPUT)


def percentile_rows(
    lines: list[str],
    start: int,
    percents: tuple,
    value: str,
    unit: str,
    no_sample: re.Pattern | None = None,
):
    """A tool's fixed list of percentile lines `<percent>% <value>`, one per percent, in order
    (blank lines before them skipped); a line matching `no_sample` stands for a percentile
    the tool had no sample for and is left out. Returns ([(line number, match)], index after
    them)."""
    at = start
    while at < len(lines) and not lines[at].strip():
        at += 1
    matches = []
    for percent in percents:
        expected = f"{percent}% {unit}"
        line = lines[at].strip() if at < len(lines) else None
        if line is not None and no_sample is not None and no_sample.fullmatch(line):
            at += 1
            continue
        match = re.fullmatch(rf"({re.escape(percent)})%\s+{value}", line or "")
        if match is None:
            what = shown(line) if line is not None else END_OF_OUTPUT
            raise expected_found(at + 1, expected, what)
        matches.append((at + 1, match))
        at += 1
    return matches, at


def next_line(lines: list[str], at: int, pattern: str, expected: str):
    """The next non-blank line from `at`, which must match: (match, index after it)."""
    while at < len(lines) and not lines[at].strip():
        at += 1
    line = lines[at].strip() if at < len(lines) else None
    match = re.fullmatch(pattern, line) if line is not None else None
    if match is None:
        what = shown(line) if line is not None else END_OF_OUTPUT
        raise expected_found(at + 1, expected, what)
    return match, at + 1


PERCENTILE_KEYS = {50: "p50", 75: "p75", 90: "p90", 99: "p99"}


def percentile_map(rows, convert) -> dict[str, float]:
    """{p50: ...} from (line, match) rows whose groups are (percent, value...)."""
    latency = {}
    for _, match in rows:
        percent = Decimal(match.group(1))
        if percent == percent.to_integral() and int(percent) in PERCENTILE_KEYS:
            latency[PERCENTILE_KEYS[int(percent)]] = convert(*match.groups()[1:])
    return latency


def command_option(lines: list[str], tool: str, options: str) -> str | None:
    """The value of an option on a command line kept with the output (`$ wrk -R2000 ...`)."""
    command = re.compile(rf"(?:\$\s*)?(?:\S*/)?{tool}\s")
    for line in lines:
        if command.match(line.strip()):
            match = re.search(rf"(?:^|\s)(?:{options})[= ]?\s*(\d+(?:\.\d+)?[kMG]?)(?=\s|$)", line)
            return match.group(1) if match else ""
    return None


BINARY_SCALE = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3, "T": 1024**4, "P": 1024**5}
METRIC_SCALE = {"": 1, "k": 1000, "M": 1000**2, "G": 1000**3}
# Milliseconds in one of each time unit the tools print (wrk, wrk2, k6).
TIME_MS = {
    "h": "3600000",
    "m": "60000",
    "s": "1000",
    "ms": "1",
    "us": "0.001",
    "µs": "0.001",
    "ns": "0.000001",
}


def client_error_kind(message: str) -> str:
    """Go's net/http error texts (hey, k6) by what failed."""
    lowered = message.lower()
    if "timeout" in lowered or "deadline exceeded" in lowered:
        return "timeout"
    if "dial tcp" in lowered or "connect:" in lowered or "no such host" in lowered:
        return "connect"
    if "broken pipe" in lowered or "write:" in lowered:
        return "write"
    if "reset by peer" in lowered or "eof" in lowered or "read:" in lowered:
        return "read"
    return "other"
