"""Host facts: one probe script per host, run as one remote command, parsed into typed
values under stable dotted keys (`kernel.release`, `cpu.governor`, `mm.thp.enabled`, ...).

`collect_facts` runs the script over any connection with a `run(argv, ...)` (SSH or local);
`parse_facts` is pure: the raw output in, a FactsSnapshot out. A probe that timed out, lacked
a tool or permission, or printed something unparseable is recorded with its reason, never
raised.
"""

import re
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from collectors.parsers import PARSERS, finish
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _

SCRIPT = (Path(__file__).parent / "probes" / "facts.sh").read_bytes()
DEFAULT_TIMEOUT = 60.0
MAX_OUTPUT_BYTES = 8 * 1024 * 1024

# A process name as it appears in /proc/PID/comm (or a PID); an absolute path without
# spaces, globs, quotes or parent steps. Nothing else reaches the probe script.
_SERVICE = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.:@+-]{0,63}$")
_PATH = re.compile(r"^/[A-Za-z0-9._@+/-]{0,254}$")


@dataclass(frozen=True)
class FactsRequest:
    service: str = ""
    paths: tuple[str, ...] = ()


def validate_service(value: str) -> str:
    value = value.strip()
    if value and not _SERVICE.match(value):
        raise ValueError(
            Phrase(_("A process name (letters, digits and _ . : @ + -, at most 64) or a PID."))
        )
    return value


def validate_path(value: str) -> str:
    value = value.strip()
    if not _PATH.match(value) or "/../" in value + "/":
        raise ValueError(
            Phrase(_("An absolute path of letters, digits and _ . @ + - / (no spaces)."))
        )
    return value


def facts_argv(token: str, request: FactsRequest) -> list[str]:
    return ["sh", "-s", "--", token, request.service, *request.paths]


def collect_facts(
    connection,
    sink: BinaryIO,
    request: FactsRequest = FactsRequest(),
    *,
    timeout: float = DEFAULT_TIMEOUT,
    max_bytes: int = MAX_OUTPUT_BYTES,
):
    """Run the probe script once; its raw output goes to `sink`. Returns the RunResult."""
    token = secrets.token_hex(8)
    return connection.run(
        facts_argv(token, request), sink=sink, stdin=SCRIPT, timeout=timeout, max_bytes=max_bytes
    )


@dataclass(frozen=True)
class ProbeStatus:
    status: str  # ok, skipped, unavailable, timeout, unparseable, missing
    reason: str = ""
    via_sudo: bool = False


@dataclass
class FactsSnapshot:
    facts: dict[str, object] = field(default_factory=dict)
    probes: dict[str, ProbeStatus] = field(default_factory=dict)


@dataclass(frozen=True)
class Section:
    text: str
    exit_status: int | None  # None: the end marker never came (output cut short)
    via_sudo: bool = False


_BEGIN = re.compile(r"^@@([0-9a-f]{16}) begin ([a-z_]+)$", re.M)
# dash's "sh: 1: lscpu: not found", bash's "lscpu: command not found", and timeout(1)'s
# "timeout: failed to run command 'lscpu': No such file or directory".
_NOT_FOUND = re.compile(
    # (?<!...): a name starts a word, or a search from each of its characters is quadratic.
    r"(?:(?<![^\s:])([^\s:]+): (?:command )?not found|failed to run command '([^']+)'.*)\s*$"
)


def split_sections(raw: bytes) -> dict[str, Section]:
    """The probe outputs by name. The boundary token is read from the first marker line
    (a login shell may print something before it)."""
    text = raw.decode("utf-8", errors="replace")
    first = _BEGIN.search(text)
    if first is None:
        return {}
    token = re.escape(first.group(1))
    pattern = re.compile(
        rf"^@@{token} begin (?P<name>[a-z_]+)\n(?P<body>.*?)(?:\n@@{token} end (?P=name) "
        rf"(?P<rc>\d+)(?P<sudo> sudo)?$|\Z)",
        re.S | re.M,
    )
    sections = {}
    for match in pattern.finditer(text):
        rc = match.group("rc")
        sections[match.group("name")] = Section(
            text=match.group("body").rstrip("\n"),
            exit_status=int(rc) if rc is not None else None,
            via_sudo=bool(match.group("sudo")),
        )
    return sections


def _failure(name: str, section: Section) -> ProbeStatus | None:
    rc, body = section.exit_status, section.text.strip()
    last_line = body.splitlines()[-1] if body else ""
    if rc is None:
        return ProbeStatus("unparseable", "the output was cut short", section.via_sudo)
    if rc in (124, 137):
        return ProbeStatus("timeout", "did not finish within its time limit", section.via_sudo)
    if rc == 127:
        found = _NOT_FOUND.search(last_line)
        tool = (found.group(1) or found.group(2)) if found else name
        return ProbeStatus("unavailable", f"{tool} is not installed", section.via_sudo)
    if rc == 4:
        return ProbeStatus("unavailable", last_line or "not available here", section.via_sudo)
    if rc == 5:
        return ProbeStatus("skipped", last_line or "not needed here", section.via_sudo)
    if "Permission denied" in body:
        return ProbeStatus("unavailable", "permission denied", section.via_sudo)
    if rc != 0 and not body:
        return ProbeStatus("unavailable", f"exited with status {rc}", section.via_sudo)
    return None


def parse_facts(raw: bytes, request: FactsRequest = FactsRequest()) -> FactsSnapshot:
    snapshot = FactsSnapshot()
    sections = split_sections(raw)
    for name, parser in PARSERS.items():
        section = sections.get(name)
        if section is None:
            snapshot.probes[name] = ProbeStatus(
                "missing", "no output: the probe script stopped before this probe"
            )
            continue
        failure = _failure(name, section)
        if failure is not None:
            snapshot.probes[name] = failure
            continue
        try:
            facts = parser(section.text, request=request, exit_status=section.exit_status)
        except (ValueError, IndexError, KeyError, TypeError, ArithmeticError) as error:
            snapshot.probes[name] = ProbeStatus(
                "unparseable", f"{type(error).__name__}: {error}"[:300], section.via_sudo
            )
            continue
        snapshot.facts.update(facts)
        snapshot.probes[name] = ProbeStatus("ok", "", section.via_sudo)
    snapshot.facts = finish(snapshot.facts)
    return snapshot
