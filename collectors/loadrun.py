"""Running load tools and samplers on remote hosts, one step at a time.

Every remote command is wrapped so that it writes its PID to a file and runs under
timeout(1): a tool never outlives its step, even when the controlling connection dies, and
a cancel kills it at once through the PID file. The words of every command are quoted by
the connection (argv), so a URL is never interpreted by a shell.
"""

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

# The wrapper runs the tool under timeout(1) in the background, writes timeout's PID to the
# file while it runs and removes the file when it ends: a PID file that exists always names
# a live tool, never a recycled PID. timeout passes a TERM on to the tool. stdin is passed
# on through fd 3 (a background job's own stdin is /dev/null).
WRAPPER = (
    'file=$1 limit=$2; shift 2; exec 3<&0; timeout -k 5 "$limit" "$@" <&3 3<&- & '
    'echo $! > "$file"; wait $!; status=$?; rm -f "$file"; exit $status'
)
KILL = 'for f in "$@"; do [ -r "$f" ] && kill -TERM "$(cat "$f")" 2>/dev/null; done; true'

# RFC 3986's characters, less the single quote.
_URL_PATH = re.compile(r"^[A-Za-z0-9._~!$&()*+,;=:@%/?#\[\]-]*$")
K6_SCRIPT = (
    "import http from 'k6/http';\nexport default function () { http.get(__ENV.PERFCASE_URL); }\n"
)


def validate_url(url: str) -> str:
    """An http(s) URL with a host, and no spaces or quotes: it goes to the tool as one word."""
    url = url.strip()
    if any(ord(char) < 32 or ord(char) == 127 for char in url):
        raise ValueError("A URL may not contain spaces, quotes or control characters.")
    if len(url) > 2000:
        raise ValueError("A URL may be at most 2000 characters long.")
    try:
        parts = urlsplit(url)
        hostname = parts.hostname
    except ValueError:
        parts = hostname = None
    if parts is None or parts.scheme not in ("http", "https") or not hostname:
        raise ValueError("Enter an http:// or https:// URL with a host name.")
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        raise ValueError("The port must be a number from 1 to 65535.")
    if not url.isascii():
        raise ValueError(
            "Write other than ASCII characters encoded: the host name in punycode "
            "(xn--...), the path with %XX."
        )
    rest = url[len(f"{parts.scheme}://") :]
    if not _URL_PATH.match(rest):
        raise ValueError("A URL may not contain spaces, quotes or control characters.")
    return url


@dataclass(frozen=True)
class StepCommand:
    argv: list[str]
    limit_s: int
    pidfile: str
    # The tool prints its result to stdout, except k6, which writes its summary JSON to a
    # file the second command prints.
    summary_file: str | None = None


def load_command(tool: str, url: str, load: int, seconds: int, pidfile: str) -> StepCommand:
    """The argv that runs one step of `load` concurrent connections for `seconds`."""
    limit = seconds + 30
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
    elif tool == "hey":
        tool_argv = ["hey", "-c", str(load), "-z", f"{seconds}s", url]
    elif tool == "ab":
        # ab counts requests, not seconds: -t caps the time, -n is set high enough.
        tool_argv = ["ab", "-c", str(load), "-t", str(seconds), "-n", "50000000", url]
    elif tool == "k6":
        summary = pidfile.removesuffix(".pid") + ".json"
        tool_argv = [
            "k6",
            "run",
            "--quiet",
            "--vus",
            str(load),
            "--duration",
            f"{seconds}s",
            "--summary-trend-stats",
            "avg,med,p(75),p(90),p(99),max",
            "--summary-export",
            summary,
            "-e",
            f"PERFCASE_URL={url}",
            "-",
        ]
        return StepCommand(_wrapped(pidfile, limit, tool_argv), limit, pidfile, summary)
    else:
        raise ValueError(f"unknown load tool {tool!r}")
    return StepCommand(_wrapped(pidfile, limit, tool_argv), limit, pidfile)


def _wrapped(pidfile: str, limit: int, argv: list[str]) -> list[str]:
    return ["sh", "-c", WRAPPER, "sh", pidfile, str(limit), *argv]


def sampler_command(tool: str, seconds: int, pidfile: str) -> list[str]:
    """vmstat (or mpstat) once a second for the step, under the same wrapper."""
    if tool == "vmstat":
        argv = ["vmstat", "-n", "1", str(seconds + 1)]
    elif tool == "mpstat":
        argv = ["env", "LC_ALL=C", "mpstat", "-P", "ALL", "1", str(seconds)]
    else:
        raise ValueError(f"unknown sampler {tool!r}")
    return _wrapped(pidfile, seconds + 15, argv)


def kill_command(pidfiles: list[str]) -> list[str]:
    return ["sh", "-c", KILL, "sh", *pidfiles]


def pidfile(*parts: int | str) -> str:
    """/tmp/perfcase-<ids>.pid: only numbers and fixed words, never user text."""
    return "/tmp/perfcase-" + "-".join(str(part) for part in parts) + ".pid"
