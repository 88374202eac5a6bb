"""Running load tools and samplers on remote hosts, one step at a time.

Every remote command is wrapped so that it writes its PID to a file and runs under
timeout(1): a tool never outlives its step, even when the controlling connection dies, and
a cancel kills it at once through the PID file. The words of every command are quoted by
the connection (argv), so a URL is never interpreted by a shell.
"""

import math
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from collectors.phrase import Phrase, gettext_noop

# The wrapper runs the tool under timeout(1) in the background, writes timeout's PID to the
# file while it runs and removes the file when it ends: a PID file that exists always names
# a live tool, never a recycled PID. timeout passes a TERM on to the tool. stdin is passed
# on through fd 3 (a background job's own stdin is /dev/null). sshd sends the wrapper a HUP
# when its channel closes while it runs (a cancelled run closes its connections): the trap
# then ends the tool and removes the file, rather than dying with the file left behind.
WRAPPER = (
    'file=$1 limit=$2; shift 2; exec 3<&0; timeout -k 5 "$limit" "$@" <&3 3<&- & pid=$!; '
    "trap 'kill -TERM $pid 2>/dev/null; wait $pid; rm -f \"$file\"; exit 129' HUP TERM INT; "
    'echo $pid > "$file"; wait $pid; status=$?; rm -f "$file"; exit $status'
)
# The shell functions that start a tool with its PID file (`stoppable`) and end tools
# through their files (`stop_tools`), put before the probe scripts of the long-running tools
# (capture, profile, baseline); the kill command of every run is stop_tools.
STOPPABLE = (Path(__file__).parent / "probes" / "stoppable.sh").read_text()
# The kill command ends the tools of the PID files it is given and removes the other files
# (a run's scratch files, Perfcase's own names).
KILL = (
    "\n".join(line for line in STOPPABLE.splitlines() if not line.lstrip().startswith("#"))
    + '\nfor pc_file in "$@"; do case $pc_file in *.pid) stop_tools "$pc_file" ;;'
    + ' *) rm -f -- "$pc_file" ;; esac; done'
)

# RFC 3986's characters, less the single quote.
_URL_PATH = re.compile(r"^[A-Za-z0-9._~!$&()*+,;=:@%/?#\[\]-]*$")
# k6 reads its step from the environment: a number of VUs (--vus, --duration), or a
# request rate held by the constant-arrival-rate executor.
K6_SCRIPT = """import http from 'k6/http';
const rate = Number(__ENV.PERFCASE_RATE || 0);
const vus = Number(__ENV.PERFCASE_VUS || 1);
export const options = rate ? {
  scenarios: {
    step: {
      executor: 'constant-arrival-rate', rate: rate, timeUnit: '1s',
      duration: `${__ENV.PERFCASE_SECONDS}s`, preAllocatedVUs: vus, maxVUs: 4 * vus,
    },
  },
} : {};
export default function () { http.get(__ENV.PERFCASE_URL); }
"""
# The parser of each tool's output (collectors.loadresults), and the parser option that
# gives the load for formats whose output does not say it (hey: its concurrency; wrk2: its
# rate).
PARSE_FORMAT = {"wrk": "wrk", "hey": "hey", "ab": "ab", "k6": "k6-json"}
LOAD_OPTION = {"hey": "concurrency", "wrk2": "rate"}
SAMPLERS = ("vmstat", "mpstat")

# Holding a rate: each connection (hey worker, k6 VU) is given about this many requests/s.
RATE_PER_CONNECTION = 10
MAX_RATE_CONNECTIONS = 1000


def validate_url(url: str) -> str:
    """An http(s) URL with a host, and no spaces or quotes: it goes to the tool as one word."""
    url = url.strip()
    if any(ord(char) < 32 or ord(char) == 127 for char in url):
        raise ValueError(
            Phrase(gettext_noop("A URL may not contain spaces, quotes or control characters."))
        )
    if len(url) > 2000:
        raise ValueError(Phrase(gettext_noop("A URL may be at most 2000 characters long.")))
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except ValueError:
        parts = hostname = None
    if parts is None or parts.scheme not in ("http", "https") or not hostname:
        raise ValueError(Phrase(gettext_noop("Enter an http:// or https:// URL with a host name.")))
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise ValueError(Phrase(gettext_noop("The port must be a number from 1 to 65535.")))
    if not hostname.startswith("[") and (
        len(hostname) > 253 or any(not 0 < len(label) <= 63 for label in hostname.split("."))
    ):
        # DNS: at most 63 characters a label, 253 in all; no tool could resolve it.
        raise ValueError(Phrase(gettext_noop("Enter an http:// or https:// URL with a host name.")))
    if not url.isascii():
        raise ValueError(
            Phrase(
                gettext_noop(
                    "Encode characters other than ASCII: the host name in punycode (xn--...), "
                    "the path as %XX."
                )
            )
        )
    rest = url[len(f"{parts.scheme}://") :]
    if not _URL_PATH.match(rest):
        raise ValueError(
            Phrase(gettext_noop("A URL may not contain spaces, quotes or control characters."))
        )
    return url


@dataclass(frozen=True)
class StepCommand:
    argv: list[str]
    limit_s: int
    pidfile: str
    # The tool prints its result to stdout, except k6, which writes its summary JSON to a
    # file the second command prints.
    summary_file: str | None = None


def rate_connections(rate: int) -> int:
    """How many connections hold `rate` requests/s: enough that each has time to spare."""
    return max(1, min(math.ceil(rate / RATE_PER_CONNECTION), MAX_RATE_CONNECTIONS))


def load_command(
    tool: str, url: str, load: int, seconds: int, pidfile: str, rate: bool = False
) -> StepCommand:
    """The argv that runs one step for `seconds`: `load` concurrent connections, or with
    rate=True (hey and k6 only) `load` requests/s."""
    limit = seconds + 30
    if rate and tool not in ("hey", "k6"):
        raise ValueError(f"{tool} cannot hold a request rate")
    if tool == "wrk":
        threads = max(1, min(load, 4))
        tool_argv = [
            "wrk",
            "-t",
            str(threads),
            "-c",
            str(load),
            "-d",
            f"{seconds}s",
            "--latency",
            url,
        ]
    elif tool == "hey" and rate:
        # hey's -q is per worker: the workers together hold the rate.
        workers = rate_connections(load)
        per_worker = f"{load / workers:.6g}"
        tool_argv = ["hey", "-c", str(workers), "-q", per_worker, "-z", f"{seconds}s", url]
    elif tool == "hey":
        tool_argv = ["hey", "-c", str(load), "-z", f"{seconds}s", url]
    elif tool == "ab":
        # ab counts requests, not seconds: -t caps the time, -n is set high enough.
        tool_argv = ["ab", "-c", str(load), "-t", str(seconds), "-n", "50000000", url]
    elif tool == "k6":
        summary = pidfile.removesuffix(".pid") + ".json"
        if rate:
            step = ["-e", f"PERFCASE_RATE={load}", "-e", f"PERFCASE_SECONDS={seconds}"]
            step += ["-e", f"PERFCASE_VUS={rate_connections(load)}"]
        else:
            step = ["--vus", str(load), "--duration", f"{seconds}s"]
        tool_argv = [
            "k6",
            "run",
            "--quiet",
            "--no-usage-report",
            *step,
            "--summary-trend-stats",
            "avg,med,p(75),p(90),p(99),max",
            "--summary-export",
            summary,
            "-e",
            f"PERFCASE_URL={url}",
            "-",
        ]
        return StepCommand(wrapped_command(pidfile, limit, tool_argv), limit, pidfile, summary)
    else:
        raise ValueError(f"unknown load tool {tool!r}")
    return StepCommand(wrapped_command(pidfile, limit, tool_argv), limit, pidfile)


def wrapped_command(pidfile: str, limit: int, argv: list[str]) -> list[str]:
    """argv under the wrapper: at most `limit` seconds, stopped by kill_command([pidfile])."""
    return ["sh", "-c", WRAPPER, "sh", pidfile, str(limit), *argv]


def sampler_command(tool: str, seconds: int, pidfile: str) -> list[str]:
    """vmstat (or mpstat) once a second for the step, under the same wrapper."""
    if tool == "vmstat":
        argv = ["vmstat", "-n", "1", str(seconds + 1)]
    elif tool == "mpstat":
        argv = ["env", "LC_ALL=C", "mpstat", "-P", "ALL", "1", str(seconds)]
    else:
        raise ValueError(f"unknown sampler {tool!r}")
    return wrapped_command(pidfile, seconds + 15, argv)


def kill_command(pidfiles: list[str]) -> list[str]:
    """One command that ends the tools these PID files name and removes the files (a name
    not ending in .pid, a scratch file, is only removed)."""
    return ["sh", "-c", KILL, "sh", *pidfiles]


def pidfile(*parts: int | str) -> str:
    """/tmp/perfcase-<ids>.pid: only numbers and fixed words, never user text."""
    return "/tmp/perfcase-" + "-".join(str(part) for part in parts) + ".pid"


# What load tools say when they cannot reach the URL at all, on stderr (wrk, ab, k6) or in
# their report (hey's error distribution), lowercased: wrk "unable to connect to h:p
# Connection refused", ab "apr_socket_recv: Connection refused (111)", hey and k6 "dial tcp
# h:p: connect: connection refused" or "lookup h ...: no such host".
_UNREACHABLE = (
    (
        ("connection refused",),
        gettext_noop(
            "Cannot connect to %(url)s: connection refused (from %(generator)s; is the service "
            "listening on that port?)"
        ),
    ),
    (
        (
            "unable to resolve",
            "name or service not known",
            "no such host",
            "temporary failure in name resolution",
            "could not resolve",
        ),
        gettext_noop("Cannot resolve the host of %(url)s (from %(generator)s)."),
    ),
    (
        ("no route to host", "network is unreachable"),
        gettext_noop("Cannot reach %(url)s: no route to it (from %(generator)s)."),
    ),
    (
        ("connection timed out", "i/o timeout"),
        gettext_noop("Cannot connect to %(url)s: no answer (from %(generator)s)."),
    ),
)


def unreachable_reason(url: str, generator: str, *texts: str) -> Phrase | None:
    """Why a load tool could not reach `url` at all, from its own words, or None."""
    said = "\n".join(texts).lower()
    for marks, template in _UNREACHABLE:
        if any(mark in said for mark in marks):
            return Phrase(template, url=url, generator=generator)
    return None


def tool_failure(
    tool: str, url: str, generator: str, errors: str, status: int | None
) -> Phrase | None:
    """Why a load tool whose output does not parse failed, in words: the URL unreachable, or
    the last line it wrote on stderr when it ended with an error status; None if it said
    nothing to go by."""
    reason = unreachable_reason(url, generator, errors)
    if reason is not None:
        return reason
    lines = [line.strip() for line in errors.splitlines() if line.strip()]
    if status and lines:
        return Phrase(
            gettext_noop("%(tool)s failed on %(generator)s (exit status %(status)s): %(error)s"),
            tool=tool,
            generator=generator,
            status=str(status),
            error=lines[-1][:300],
        )
    return None
