"""The remote commands of collectors/loadrun.py: URL checks, argv, and the real wrapper.

The argv of every command goes to the remote shell as `shlex.join(argv)` (collectors/ssh.py);
the shell tests here hand the same text to a local `sh -c`, so that the wrapper, timeout(1),
the PID files and the quoting are the real ones, on this machine.
"""

import os
import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from collectors.loadresults import parse as parse_results
from collectors.loadrun import (
    K6_SCRIPT,
    WRAPPER,
    kill_command,
    load_command,
    pidfile,
    sampler_command,
    tool_failure,
    unreachable_reason,
    validate_url,
)
from collectors.parsers.sampling import parse_mpstat, parse_vmstat
from tests.conftest import require_real_tool, wait_for
from tests.loadservers import http_server

TOOLS = ("wrk", "hey", "ab")
PARSE_FORMAT = {"wrk": "wrk", "hey": "hey", "ab": "ab"}


def remote(argv: list[str]) -> list[str]:
    """What the SSH connection runs: the argv quoted into one shell command line."""
    return ["sh", "-c", shlex.join(argv)]


def wrapped(name: str, limit: int, *tool: str) -> list[str]:
    """Any command under the wrapper, the way load_command and sampler_command wrap tools."""
    return ["sh", "-c", WRAPPER, "sh", name, str(limit), *tool]


# This run's own mark in its PID file names: another run beside it has files of its own.
RUN = uuid.uuid4().hex[:8]


@pytest.fixture
def pid_name():
    """PID file names of this test's own (pidfile() always writes under /tmp)."""
    made = []

    def make(*parts) -> str:
        name = pidfile("test", RUN, uuid.uuid4().hex[:12], *parts)
        made.append(name)
        return name

    yield make
    for name in made:
        Path(name).unlink(missing_ok=True)


@pytest.fixture
def started():
    """Popen of wrapped commands; whatever is still running at the end is stopped."""
    processes = []

    def start(argv, **kwargs) -> subprocess.Popen:
        process = subprocess.Popen(
            remote(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs
        )
        processes.append(process)
        return process

    yield start
    for process in processes:
        if process.poll() is None:
            process.kill()
            process.wait(5)


def tool_installed(tool: str) -> None:
    if shutil.which(tool) is None:
        require_real_tool(f"{tool} is not installed")


def pid_in(name: str) -> int:
    """The PID a wrapper wrote, once it has written it."""
    return wait_for(
        lambda: (
            (text := Path(name).read_text().strip() if Path(name).exists() else "") and int(text)
        ),
        timeout=5,
        interval=0.02,
    )


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"


def children(pid: int) -> list[int]:
    found = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    return [int(word) for word in found.stdout.split()]


def command_name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except FileNotFoundError:
        return ""


def tool_of(pid: int, name: str) -> int:
    """The process a wrapper's PID (timeout's) runs, once timeout has started it.

    The wrapper writes $! as soon as it has forked: the fork may not have become timeout
    yet, nor timeout have started the tool.
    """
    wait_for(lambda: command_name(pid) == "timeout", timeout=5, interval=0.02)
    [tool] = wait_for(
        lambda: [c for c in children(pid) if command_name(c) == name], timeout=5, interval=0.02
    )
    return tool


# --- validate_url ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/",
        "http://127.0.0.1:8080/",
        "https://checkout.shop.example.com/api/v2/cart",
        "https://lb.internal:8443/health?deep=1",
        "http://10.20.0.7:80/search?q=red%20shoes&page=2&sort=price-asc",
        "http://app/items;jsessionid=abc123?x=(1)&y=*,~",
        "http://app.local",
        "HTTPS://Example.COM/",
        "http://perf:s3cret@10.0.0.5:8080/",
    ],
)
def test_an_http_or_https_url_with_a_host_is_accepted_as_it_is(url):
    assert validate_url(url) == url


def test_the_spaces_around_a_url_are_dropped():
    assert validate_url("  http://127.0.0.1:8080/\n") == "http://127.0.0.1:8080/"


def test_an_ipv6_literal_host_is_accepted():
    # RFC 3986 writes an IPv6 host in brackets; wrk, hey and ab all take it.
    assert validate_url("http://[::1]:8080/") == "http://[::1]:8080/"
    assert validate_url("https://[2001:db8::10]/health") == "https://[2001:db8::10]/health"


def test_a_url_of_2000_characters_is_accepted():
    url = "http://app/" + "a" * (2000 - len("http://app/"))

    assert validate_url(url) == url


@pytest.mark.parametrize(
    "url",
    [
        "ftp://files.example.com/big.iso",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "gopher://127.0.0.1:6379/_FLUSHALL",
        "ws://127.0.0.1:8080/socket",
        "127.0.0.1:8080/",
        "//127.0.0.1/",
        "http://",
        "http:///only/a/path",
        "https://:443/",
        "",
    ],
)
def test_other_schemes_and_urls_without_a_host_are_refused(url):
    with pytest.raises(ValueError, match="http:// or https:// URL with a host"):
        validate_url(url)


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1/a b",
        "http://127.0.0.1/$(touch /tmp/pwned)",
        'http://127.0.0.1/"quoted"',
        "http://127.0.0.1/it's",
        "http://127.0.0.1/`id`",
        "http://127.0.0.1/a\nb",
        "http://127.0.0.1/a\rb",
        "http://127.0.0.1/a\tb",
        "http://127.0.0.1/a\x00b",
        "http://127.0.0.1/a\x1bb",
        "http://127.0.0.1/a\x7fb",
        "http://127.0.0.1/<script>",
        "http://127.0.0.1/a|b",
        "http://127.0.0.1/a\\b",
    ],
)
def test_spaces_quotes_and_control_characters_are_refused(url):
    with pytest.raises(ValueError, match="spaces, quotes or control characters"):
        validate_url(url)


@pytest.mark.parametrize(
    "url",
    ["http\n://127.0.0.1/", "ht\ttp://127.0.0.1/", "\x01http://127.0.0.1/", "http:\r//127.0.0.1/"],
    ids=["newline-in-scheme", "tab-in-scheme", "leading-control", "cr-after-colon"],
)
def test_a_control_character_before_the_host_is_refused_too(url):
    # urlsplit drops tabs and line breaks, and leading control characters, before it looks
    # at the scheme: the check must look at the text as given.
    with pytest.raises(ValueError):
        validate_url(url)


def test_a_port_that_cannot_exist_is_refused():
    with pytest.raises(ValueError):
        validate_url("http://127.0.0.1:99999/")
    with pytest.raises(ValueError):
        validate_url("http://127.0.0.1:http/")


def test_an_over_long_url_is_refused():
    with pytest.raises(ValueError):
        validate_url("http://app/" + "a" * 2000)


# --- argv -----------------------------------------------------------------------------------

URL = "http://10.20.0.7:8080/search?q=red%20shoes&page=2;$(reboot)"


@pytest.mark.parametrize("tool", TOOLS)
def test_the_url_is_one_word_of_the_tools_argv(tool):
    command = load_command(tool, URL, 50, 30, "/tmp/perfcase-7-a-0-load.pid")

    assert command.argv.count(URL) == 1
    assert command.argv[-1] == URL
    # The remote shell splits the joined line back into exactly these words.
    assert shlex.split(shlex.join(command.argv)) == command.argv


def test_wrk_runs_threads_connections_duration_and_latency():
    command = load_command("wrk", URL, 50, 30, "/tmp/perfcase-7-a-0-load.pid")

    assert command.argv[:6] == ["sh", "-c", WRAPPER, "sh", "/tmp/perfcase-7-a-0-load.pid", "60"]
    assert command.argv[6:] == ["wrk", "-t", "4", "-c", "50", "-d", "30s", "--latency", URL]
    assert (command.limit_s, command.pidfile, command.summary_file) == (
        60,
        "/tmp/perfcase-7-a-0-load.pid",
        None,
    )


def test_wrk_never_runs_more_threads_than_connections():
    command = load_command("wrk", URL, 2, 10, "/tmp/perfcase-7-a-0-load.pid")

    assert command.argv[6:11] == ["wrk", "-t", "2", "-c", "2"]


def test_hey_runs_for_a_duration():
    command = load_command("hey", URL, 20, 15, "/tmp/perfcase-7-b-1-load.pid")

    assert command.argv[6:] == ["hey", "-c", "20", "-z", "15s", URL]
    assert command.limit_s == 45


def test_ab_is_capped_by_time_with_a_request_count_high_enough():
    command = load_command("ab", URL, 10, 5, "/tmp/perfcase-7-a-2-load.pid")

    assert command.argv[6:] == ["ab", "-c", "10", "-t", "5", "-n", "50000000", URL]


def test_k6_gets_the_url_as_one_environment_word_and_its_script_on_stdin():
    command = load_command("k6", URL, 100, 30, "/tmp/perfcase-7-a-3-load.pid")

    tool = command.argv[6:]
    assert tool[:2] == ["k6", "run"] and tool[-1] == "-"
    assert tool[tool.index("--vus") + 1] == "100"
    assert tool[tool.index("--duration") + 1] == "30s"
    assert tool[tool.index("-e") + 1] == f"PERFCASE_URL={URL}"
    assert "p(99)" in tool[tool.index("--summary-trend-stats") + 1]
    assert command.summary_file == "/tmp/perfcase-7-a-3-load.json"
    assert tool[tool.index("--summary-export") + 1] == command.summary_file
    assert "__ENV.PERFCASE_URL" in K6_SCRIPT
    assert shlex.split(shlex.join(command.argv)) == command.argv


def test_an_unknown_tool_is_refused():
    with pytest.raises(ValueError, match="unknown load tool 'siege'"):
        load_command("siege", URL, 1, 1, "/tmp/perfcase-1.pid")
    with pytest.raises(ValueError, match="unknown sampler 'sar'"):
        sampler_command("sar", 1, "/tmp/perfcase-1.pid")


def test_samplers_run_once_a_second_for_the_step():
    vmstat = sampler_command("vmstat", 30, "/tmp/perfcase-7-a-0-vmstat-3.pid")
    mpstat = sampler_command("mpstat", 30, "/tmp/perfcase-7-a-0-mpstat-3.pid")

    # vmstat's first line is the since-boot average: one more line for 30 samples.
    assert vmstat[6:] == ["vmstat", "-n", "1", "31"]
    assert mpstat[6:] == ["env", "LC_ALL=C", "mpstat", "-P", "ALL", "1", "30"]
    assert vmstat[5] == mpstat[5] == "45"


def test_pid_files_are_named_from_numbers_and_fixed_words():
    assert pidfile(7, "a", 0, "load") == "/tmp/perfcase-7-a-0-load.pid"
    assert pidfile(7, "b", 3, "mpstat", 12) == "/tmp/perfcase-7-b-3-mpstat-12.pid"


def test_kill_command_takes_the_pid_files_as_words():
    names = ["/tmp/perfcase-7-a-0-load.pid", "/tmp/perfcase-7-a-0-vmstat-3.pid"]

    argv = kill_command(names)

    assert argv[:2] == ["sh", "-c"] and argv[-2:] == names


# --- the wrapper, for real ------------------------------------------------------------------


def test_one_kill_command_ends_a_runs_tools_and_removes_its_scratch_files(
    pid_name, started, tmp_path
):
    # Every kind's cleanup (runs/remote.py) is this one command: PID files name tools to end,
    # any other name is a scratch file of the run's to remove.
    name = pid_name("sleep")
    scratch = tmp_path / "perfcase-baseline-7-1.fio"
    scratch.write_bytes(b"x" * 4096)
    process = started(wrapped(name, 30, "sleep", "30"))
    tool = tool_of(pid_in(name), "sleep")

    subprocess.run(remote(kill_command([name, str(scratch)])), check=True, timeout=15)

    assert process.wait(10) != 0
    assert not alive(tool)
    assert not Path(name).exists() and not scratch.exists()


def test_the_pid_file_names_the_running_tool_and_goes_when_it_ends(pid_name, started):
    name = pid_name("sleep")

    process = started(wrapped(name, 30, "sleep", "1.5"))
    pid = pid_in(name)

    # The PID is timeout's, and timeout runs the tool.
    tool = tool_of(pid, "sleep")
    assert process.wait(10) == 0
    assert not Path(name).exists()
    assert not alive(pid) and not alive(tool)


def test_the_tools_exit_status_comes_through(pid_name):
    name = pid_name("status")

    finished = subprocess.run(remote(wrapped(name, 30, "sh", "-c", "exit 3")), timeout=10)

    assert finished.returncode == 3
    assert not Path(name).exists()


def test_kill_command_stops_a_running_tool_within_a_second(pid_name, started):
    name = pid_name("kill")
    process = started(wrapped(name, 120, "sleep", "60"))
    pid = pid_in(name)
    tool = tool_of(pid, "sleep")

    began = time.monotonic()
    killed = subprocess.run(remote(kill_command([name])), timeout=10)
    process.wait(5)

    assert time.monotonic() - began < 1
    assert killed.returncode == 0
    assert process.returncode != 0
    assert not Path(name).exists()
    assert not alive(tool) and not alive(pid)


def test_kill_command_stops_several_tools_and_ignores_ended_ones(pid_name, started):
    names = [pid_name("load"), pid_name("vmstat"), pid_name("gone")]
    processes = [started(wrapped(name, 120, "sleep", "60")) for name in names[:2]]
    tools = [tool_of(pid_in(name), "sleep") for name in names[:2]]

    killed = subprocess.run(remote(kill_command(names)), timeout=10)

    assert killed.returncode == 0  # the third file never existed
    for process in processes:
        process.wait(5)
    assert not any(Path(name).exists() for name in names)
    assert not any(alive(tool) for tool in tools)


def test_kill_command_without_any_pid_file_does_nothing(pid_name):
    finished = subprocess.run(remote(kill_command([pid_name("none")])), timeout=10)

    assert finished.returncode == 0


def test_timeout_ends_a_tool_that_overruns_its_limit(pid_name, started):
    name = pid_name("overrun")
    began = time.monotonic()

    process = started(wrapped(name, 1, "sleep", "60"))
    tool = tool_of(pid_in(name), "sleep")
    process.wait(10)

    assert 0.9 < time.monotonic() - began < 4
    assert process.returncode == 124  # timeout(1)'s "timed out"
    assert not Path(name).exists()
    assert not alive(tool)


def test_a_tool_that_ignores_term_is_killed_after_the_grace(pid_name, started):
    name = pid_name("stubborn")
    began = time.monotonic()

    process = started(wrapped(name, 1, "sh", "-c", "trap '' TERM; sleep 60"))
    shell = tool_of(pid_in(name), "sh")
    [sleeper] = wait_for(lambda: children(shell), timeout=5, interval=0.02)
    process.wait(15)

    # timeout's -k 5: TERM at 1 s is ignored, KILL follows 5 s later.
    assert 5.5 < time.monotonic() - began < 10
    assert process.returncode == 128 + 9
    assert not Path(name).exists()
    assert not alive(shell) and not alive(sleeper)


def test_stdin_reaches_the_tool_through_the_wrapper(pid_name):
    name = pid_name("stdin")

    finished = subprocess.run(
        remote(wrapped(name, 30, "cat")), input=K6_SCRIPT.encode(), capture_output=True, timeout=10
    )

    assert finished.returncode == 0
    assert finished.stdout.decode() == K6_SCRIPT
    assert not Path(name).exists()


def test_a_tool_reading_stdin_gets_its_end_when_there_is_none(pid_name):
    name = pid_name("no-stdin")

    finished = subprocess.run(
        remote(wrapped(name, 30, "cat")), input=b"", capture_output=True, timeout=10
    )

    assert (finished.returncode, finished.stdout) == (0, b"")


@pytest.mark.parametrize("tool", TOOLS)
def test_a_real_load_step_writes_its_pid_file_and_prints_its_result(tool, pid_name, started):
    tool_installed(tool)
    name = pid_name(tool)
    with http_server(wait_ms=2) as url:
        command = load_command(tool, url, 2, 1, name)

        process = started(command.argv)
        # While it runs, the PID file names timeout(1), which runs the tool.
        running = tool_of(pid_in(name), tool)
        output, errors = process.communicate(timeout=30)

    assert process.returncode == 0, errors.decode()
    assert not Path(name).exists()
    assert not alive(running)
    options = {"concurrency": 2} if tool == "hey" else {}
    [result] = parse_results(PARSE_FORMAT[tool], output.decode(), **options)
    assert result.load == 2 and result.rps > 0


@pytest.mark.parametrize("tool", TOOLS)
def test_a_running_load_tool_is_killed_through_its_pid_file(tool, pid_name, started):
    tool_installed(tool)
    name = pid_name(tool)
    with http_server(wait_ms=2) as url:
        process = started(load_command(tool, url, 2, 60, name).argv)
        running = tool_of(pid_in(name), tool)

        began = time.monotonic()
        subprocess.run(remote(kill_command([name])), timeout=10)
        process.wait(5)

    assert time.monotonic() - began < 1
    assert not Path(name).exists()
    assert not alive(running)


@pytest.mark.parametrize("sampler", ["vmstat", "mpstat"])
def test_a_real_sampler_gives_one_sample_a_second(sampler, pid_name):
    tool_installed(sampler)
    name = pid_name(sampler)

    finished = subprocess.run(
        remote(sampler_command(sampler, 2, name)), capture_output=True, text=True, timeout=30
    )

    assert finished.returncode == 0, finished.stderr
    assert not Path(name).exists()
    series = {"vmstat": parse_vmstat, "mpstat": parse_mpstat}[sampler](finished.stdout)
    assert len(series) == 2
    if sampler == "mpstat":
        assert {"all", "0"} <= set(series[0])


# --- hostile URLs ---------------------------------------------------------------------------


def hostile_urls(marker: Path) -> list[str]:
    return [
        f"http://127.0.0.1:9/$(touch {marker})",
        f"http://127.0.0.1:9/;touch$IFS{marker}",
        f"http://127.0.0.1:9/`touch {marker}`",
        f"http://127.0.0.1:9/x';touch {marker};'",
        f"http://127.0.0.1:9/?a=1&touch$IFS{marker}&b=2",
        f"http://127.0.0.1:9/$(touch${{IFS}}{marker})",
    ]


def test_the_hostile_urls_would_run_in_an_unquoted_shell(tmp_path):
    # The control: pasted into a command line without quoting, the URL runs its command.
    marker = tmp_path / "pwned"
    url = hostile_urls(marker)[1]
    assert validate_url(url) == url  # it even passes the URL check

    subprocess.run(["sh", "-c", f"true {url}"], timeout=10, capture_output=True)

    assert marker.exists()


@pytest.mark.parametrize("tool", TOOLS)
def test_a_hostile_url_is_never_executed(tool, tmp_path, pid_name):
    tool_installed(tool)
    marker = tmp_path / "pwned"

    for url in hostile_urls(marker):
        command = load_command(tool, url, 1, 1, pid_name(tool))
        subprocess.run(remote(command.argv), capture_output=True, timeout=60)

        assert not marker.exists(), url
        assert not Path(command.pidfile).exists()


def test_a_hostile_url_reaches_the_tool_as_it_was_given(tmp_path, pid_name):
    # With a stand-in tool that prints its last word: the URL arrives intact and alone.
    marker = tmp_path / "pwned"
    for url in hostile_urls(marker):
        argv = [*load_command("hey", url, 1, 1, pid_name("echo")).argv]
        argv[argv.index("hey")] = "printf"
        argv[argv.index("printf") + 1 : -1] = ["%s\\n"]

        finished = subprocess.run(remote(argv), capture_output=True, text=True, timeout=10)

        assert finished.stdout == url + "\n"
        assert not marker.exists()


def test_no_pid_file_of_these_tests_is_left(pid_name):
    leftovers = [
        name
        for name in os.listdir("/tmp")
        if name.startswith(f"perfcase-test-{RUN}-") and name.endswith(".pid")
    ]

    assert leftovers == []


def test_a_hangup_of_the_wrapper_ends_the_tool_and_removes_its_pid_file(tmp_path):
    """sshd hangs up on the wrapper when a cancelled run closes its channel."""
    import signal

    from collectors.loadrun import WRAPPER

    pidfile = tmp_path / "tool.pid"
    # As sshd starts it: with the hang-up signal at its default, whatever this process
    # inherited (under nohup it is ignored, and a shell cannot trap an ignored signal).
    shell = subprocess.Popen(
        ["sh", "-c", WRAPPER, "sh", str(pidfile), "60", "sleep", "30"],
        stdin=subprocess.DEVNULL,
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_DFL),
    )
    deadline = time.monotonic() + 10
    while not (pidfile.exists() and pidfile.read_text().strip()):
        assert time.monotonic() < deadline, "the wrapper never wrote its PID file"
        time.sleep(0.05)
    tool = int(pidfile.read_text())

    os.kill(shell.pid, signal.SIGHUP)

    assert shell.wait(timeout=30) == 129
    assert not pidfile.exists()
    deadline = time.monotonic() + 10
    while (
        os.path.exists(f"/proc/{tool}") and "Z" not in open(f"/proc/{tool}/stat").read().split()[2]
    ):
        assert time.monotonic() < deadline, "the tool outlived its wrapper"
        time.sleep(0.05)


# What the tools wrote when they could not reach the URL (captured from wrk 4.1, ab 2.3,
# hey 0.1 and k6 on this machine's loopback and resolver).
@pytest.mark.parametrize(
    "errors, expected",
    [
        (
            "unable to connect to 127.0.0.1:9 Connection refused\n",
            "Cannot connect to http://127.0.0.1:9/: connection refused (from gen-a; is the "
            "service listening on that port?)",
        ),
        (
            "apr_socket_recv: Connection refused (111)\n",
            "Cannot connect to http://127.0.0.1:9/: connection refused (from gen-a; is the "
            "service listening on that port?)",
        ),
        (
            "unable to resolve nonexistent.invalid:http Name or service not known\n",
            "Cannot resolve the host of http://127.0.0.1:9/ (from gen-a).",
        ),
        (
            "apr_sockaddr_info_get() for nonexistent.invalid: Name or service not known (670002)\n",
            "Cannot resolve the host of http://127.0.0.1:9/ (from gen-a).",
        ),
        (
            "wrk: invalid URL\nUsage: wrk <options> <url>\n",
            "wrk failed on gen-a (exit status 1): Usage: wrk <options> <url>",
        ),
        ("", None),
    ],
)
def test_a_load_tool_that_reached_nothing_says_why(errors, expected):
    assert tool_failure("wrk", "http://127.0.0.1:9/", "gen-a", errors, 1) == expected


def test_a_run_where_every_request_failed_to_connect_is_named_from_the_report():
    hey_report = (
        "Error distribution:\n"
        '  [26]\tGet "http://x.invalid/": dial tcp: lookup x.invalid on 10.0.0.53:53: '
        "no such host\n"
    )
    assert unreachable_reason("http://x.invalid/", "gen-b", hey_report, "") == (
        "Cannot resolve the host of http://x.invalid/ (from gen-b)."
    )
    assert unreachable_reason("http://x/", "gen-b", "Non-2xx or 3xx responses: 9", "") is None
