"""collectors.ssh and collect_facts against real OpenSSH sshd test hosts (tests/sshd.py).

Each host is a real sshd on its own 127.0.0.x address, in a mount namespace of its own that
presents a dump from fixtures/hosts/; the probe signs in as the unprivileged perfcase-probe.
"""

import io
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from collectors.errors import (
    AuthenticationFailed,
    CollectorError,
    CommandTimedOut,
    HostKeyChanged,
    HostKeyNotTrusted,
    Unreachable,
)
from collectors.facts import SCRIPT, collect_facts, parse_facts, split_sections
from collectors.ssh import Connection, HostKey, scan_host_key

PROBES = (
    re.search(rb"^for name in (.*?); do$", SCRIPT, re.S | re.M)
    .group(1)
    .replace(b"\\\n", b" ")
    .split()
)
# Probes that read only files and standard tools every test host has: they must succeed.
MUST_SUCCEED = [
    "uname",
    "cmdline",
    "uptime",
    "access",
    "virt",
    "cpuinfo",
    "cpu_topology",
    "cpufreq",
    "vulnerabilities",
    "meminfo",
    "numa",
    "mounts",
    "limits",
    "tools",
    "service",
]


def ssh_keygen_listing(public_key_path: Path) -> tuple[str, str]:
    """(fingerprint, type label) as `ssh-keygen -lf` prints them: '256 SHA256:... c (ED25519)'."""
    out = subprocess.run(
        ["ssh-keygen", "-l", "-f", str(public_key_path)], check=True, capture_output=True, text=True
    ).stdout.split()
    return out[1], out[-1].strip("()")


def run(connection: Connection, argv: list[str], **options):
    sink = io.BytesIO()
    result = connection.run(argv, sink=sink, **options)
    return result, sink.getvalue()


def facts_over_ssh(host, **options):
    sink = io.BytesIO()
    with Connection(host.endpoint()) as connection:
        started = time.monotonic()
        result = collect_facts(connection, sink, **options)
        seconds = time.monotonic() - started
    return result, split_sections(sink.getvalue()), seconds


def result_raw(host) -> bytes:
    sink = io.BytesIO()
    with Connection(host.endpoint()) as connection:
        collect_facts(connection, sink, timeout=45)
    return sink.getvalue()


# --- host keys ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key_type, name, label",
    [
        ("ed25519", "ssh-ed25519", "ED25519"),
        ("ecdsa", "ecdsa-sha2-nistp256", "ECDSA"),
        ("rsa", "ssh-rsa", "RSA"),
    ],
)
def test_scan_host_key_returns_the_key_sshd_presents(start_host, key_type, name, label):
    host = start_host("scanned", dump=None, host_key_type=key_type)
    fingerprint, shown_type = ssh_keygen_listing(host.public_host_key_path)

    scanned = scan_host_key(host.address, host.port, timeout=5)

    assert scanned == HostKey(name, fingerprint)
    assert shown_type == label
    assert scanned == host.host_key


def test_scan_host_key_of_a_port_where_nothing_listens_is_unreachable(start_host):
    host = start_host("gone", dump=None)
    host.stop()
    with pytest.raises(Unreachable, match="connection refused"):
        scan_host_key(host.address, host.port, timeout=5)


@pytest.mark.parametrize("timeout", [1.0, 2.0])
def test_a_host_that_accepts_and_never_speaks_is_unreachable_and_says_so(silent_port, timeout):
    address, port = "127.0.0.1", silent_port

    with pytest.raises(Unreachable) as raised:
        scan_host_key(address, port, timeout=timeout)

    assert raised.value.message == (
        f"{address}:{port} accepted the connection but sent no SSH banner within {timeout:g} s"
    )


def test_a_pinned_connection_to_a_silent_host_is_unreachable_too(silent_port, sshd_host):
    address, port = "127.0.0.1", silent_port
    endpoint = sshd_host.endpoint(address=address, port=port, connect_timeout=1)

    with pytest.raises(Unreachable, match="accepted the connection but sent no SSH banner"):
        with Connection(endpoint):
            pass


def test_a_host_that_answers_in_http_says_so_when_scanned_and_when_pinned(http_port, sshd_host):
    with pytest.raises(Unreachable) as scanned:
        scan_host_key("127.0.0.1", http_port, timeout=5)
    endpoint = sshd_host.endpoint(address="127.0.0.1", port=http_port, connect_timeout=5)
    with pytest.raises(Unreachable) as pinned:
        with Connection(endpoint):
            pass

    assert scanned.value.message == (
        f"127.0.0.1:{http_port} answered with HTTP, not SSH: is this the right port?"
    )
    assert pinned.value.message == (
        f"{endpoint.label} answered with HTTP, not SSH: is this the right port?"
    )


def test_a_host_that_answers_in_another_protocol_quotes_its_first_line(free_port_speaking):
    with pytest.raises(Unreachable) as scanned:
        scan_host_key("127.0.0.1", free_port_speaking(b"220 mail.example ESMTP\r\n"), timeout=5)

    assert scanned.value.message.endswith(
        "answered '220 mail.example ESMTP', not SSH: is this the right port?"
    )


@pytest.fixture
def free_port_speaking():
    """speak(greeting): a loopback port whose server sends `greeting` to each connection."""
    import socket
    import threading

    servers = []

    def speak(greeting: bytes) -> int:
        server = socket.create_server(("127.0.0.1", 0))
        servers.append(server)

        def serve():
            while True:
                try:
                    connection, _ = server.accept()
                except OSError:
                    return
                with connection:
                    connection.sendall(greeting)
                    connection.recv(100)

        threading.Thread(target=serve, daemon=True).start()
        return server.getsockname()[1]

    yield speak
    for server in servers:
        server.close()


# --- running commands -----------------------------------------------------------------------


def test_a_pinned_connection_runs_a_command_as_the_unprivileged_user(sshd_host):
    with Connection(sshd_host.endpoint()) as connection:
        result, out = run(connection, ["id", "-un"])
        uid_result, uid = run(connection, ["id", "-u"])

    assert result.exit_status == 0 and out == b"perfcase-probe\n"
    assert uid_result.exit_status == 0 and int(uid) != 0
    assert result.truncated is False and result.stdout_bytes == len(out)


def test_the_exit_status_and_stderr_come_back(sshd_host):
    with Connection(sshd_host.endpoint()) as connection:
        result, out = run(connection, ["sh", "-c", "echo out; echo err >&2; exit 3"])

    assert result.exit_status == 3
    assert out == b"out\n"
    assert result.stderr == "err\n"


def test_arguments_arrive_literally_never_interpreted_by_the_remote_shell(sshd_host):
    # A directory the probe user could write to: a command injection would leave a file.
    witness_dir = Path(tempfile.mkdtemp(prefix="perfcase-argv-"))
    witness_dir.chmod(0o777)
    witness = witness_dir / "pwned"
    hostile = [
        f'"; touch {witness} #',
        f"'; touch {witness} #",
        f"$(touch {witness})",
        f"`touch {witness}`",
        "$(id)",
        "$HOME * ~ {a,b} \\n %s",
        "tab\there\nnew line",
        "",
        "容器 🔥",
    ]
    try:
        with Connection(sshd_host.endpoint()) as connection:
            for argument in hostile:
                result, out = run(connection, ["printf", "%s", argument])
                assert result.exit_status == 0, result.stderr
                assert out == argument.encode(), argument
            result, out = run(connection, ["printf", "[%s]", *hostile])
        assert out == "".join(f"[{a}]" for a in hostile).encode()
        assert not witness.exists()
    finally:
        witness.unlink(missing_ok=True)
        witness_dir.rmdir()


def test_stdout_is_streamed_to_the_sink_in_full(sshd_host):
    size = 5 * 1024 * 1024
    with Connection(sshd_host.endpoint()) as connection:
        result, out = run(connection, ["head", "-c", str(size), "/dev/urandom"])
        check, digest = run(connection, ["sh", "-c", "printf 'x%.0s' $(seq 1 70000) | wc -c"])

    assert result.exit_status == 0
    assert len(out) == size == result.stdout_bytes
    assert result.truncated is False
    assert digest.strip() == b"70000"


def test_max_bytes_caps_the_output_and_marks_it_truncated(sshd_host):
    with Connection(sshd_host.endpoint()) as connection:
        capped, out = run(connection, ["head", "-c", "1000000", "/dev/zero"], max_bytes=1000)
    with Connection(sshd_host.endpoint()) as connection:
        exact, exact_out = run(connection, ["head", "-c", "1000", "/dev/zero"], max_bytes=1000)

    assert capped.truncated is True
    assert len(out) == 1000 == capped.stdout_bytes
    assert capped.exit_status is None
    assert exact.truncated is False and len(exact_out) == 1000 and exact.exit_status == 0


def test_the_connection_stays_usable_after_cut_short_commands(sshd_host):
    """Cutting a command short closes its channel while its output still streams in; the
    connection must survive that. (Repeated: the failure this guards against is a race.)"""
    with Connection(sshd_host.endpoint()) as connection:
        for attempt in range(60):
            capped, _ = run(connection, ["cat", "/dev/zero"], max_bytes=1000)
            assert capped.truncated is True
            try:
                after, out = run(connection, ["echo", "still here"])
            except Unreachable as error:
                pytest.fail(f"attempt {attempt + 1}: the connection died: {error}")
            assert after.exit_status == 0 and out == b"still here\n"


def test_a_command_past_its_timeout_raises_command_timed_out(sshd_host):
    with Connection(sshd_host.endpoint()) as connection:
        started = time.monotonic()
        with pytest.raises(CommandTimedOut) as raised:
            run(connection, ["sleep", "30"], timeout=1)
        elapsed = time.monotonic() - started
        # The connection survives a timed-out command.
        result, out = run(connection, ["echo", "ok"])

    assert 1 <= elapsed < 5
    assert sshd_host.name in raised.value.message and "1 s" in raised.value.message
    assert result.exit_status == 0 and out == b"ok\n"


def test_root_may_be_chosen_per_host(start_host):
    host = start_host("as-root", dump=None, username="root")
    with Connection(host.endpoint()) as connection:
        result, out = run(connection, ["id", "-u"])
    assert result.exit_status == 0 and out == b"0\n"


# --- failures, each naming the host and what to do ------------------------------------------


def test_nothing_listening_is_unreachable_connection_refused(sshd_host):
    sshd_host.stop()
    with pytest.raises(Unreachable) as raised:
        with Connection(sshd_host.endpoint(connect_timeout=5)):
            pass
    message = raised.value.message
    assert "connection refused" in message
    assert sshd_host.name in message and f"{sshd_host.address}:{sshd_host.port}" in message
    assert "is sshd running?" in message
    assert raised.value.transient is True


def test_a_key_the_host_does_not_accept_is_authentication_failed(sshd_host, make_key):
    other = make_key()
    with pytest.raises(AuthenticationFailed) as raised:
        with Connection(sshd_host.endpoint(private_key=other.text)):
            pass
    message = raised.value.message
    assert f"perfcase-probe@{sshd_host.address}" in message
    assert "authorized_keys" in message
    assert raised.value.transient is False


def test_a_user_the_host_does_not_have_is_authentication_failed(sshd_host):
    with pytest.raises(AuthenticationFailed) as raised:
        with Connection(sshd_host.endpoint(username="nobody-like-this")):
            pass
    assert f"nobody-like-this@{sshd_host.address}" in raised.value.message
    assert "user name" in raised.value.message


def test_a_host_key_changed_after_a_reinstall_is_refused(sshd_host):
    trusted = sshd_host.endpoint()
    sshd_host.restart(new_host_key=True)
    new_fingerprint, _ = ssh_keygen_listing(sshd_host.public_host_key_path)
    assert new_fingerprint != trusted.host_key.fingerprint

    with pytest.raises(HostKeyChanged) as raised:
        with Connection(trusted):
            pass
    message = raised.value.message
    assert sshd_host.name in message
    assert trusted.host_key.fingerprint in message and new_fingerprint in message
    assert "trust its new key" in message
    # With the new key trusted it works again.
    with Connection(sshd_host.endpoint()) as connection:
        assert run(connection, ["true"])[0].exit_status == 0


def test_a_host_key_of_another_type_after_a_reinstall_is_a_changed_key(sshd_host):
    """The trusted ed25519 key is gone; the host now offers only an RSA key. That is a changed
    host key (as OpenSSH says), not an unreachable host to retry."""
    trusted = sshd_host.endpoint()
    sshd_host.restart(new_host_key=True, key_type="rsa")
    new_fingerprint, _ = ssh_keygen_listing(sshd_host.public_host_key_path)

    with pytest.raises(CollectorError) as raised:
        with Connection(trusted):
            pass
    assert isinstance(raised.value, HostKeyChanged), (
        f"{type(raised.value).__name__}: {raised.value}"
    )
    assert trusted.host_key.fingerprint in raised.value.message
    assert sshd_host.name in raised.value.message
    assert new_fingerprint in raised.value.message


def test_no_pinned_key_is_host_key_not_trusted(sshd_host):
    with pytest.raises(HostKeyNotTrusted) as raised:
        with Connection(sshd_host.endpoint(host_key=None)):
            pass
    assert sshd_host.name in raised.value.message
    assert "trust it" in raised.value.message


@pytest.mark.parametrize("key_type", ["rsa", "ecdsa"])
def test_a_host_with_a_pinned_rsa_or_ecdsa_key_can_be_reached(start_host, key_type):
    host = start_host(f"{key_type}-host", dump=None, host_key_type=key_type)
    pinned = scan_host_key(host.address, host.port, timeout=5)
    assert pinned == host.host_key
    with Connection(host.endpoint(host_key=pinned)) as connection:
        result, out = run(connection, ["echo", "hello"])
    assert result.exit_status == 0 and out == b"hello\n"


# --- a jump host ----------------------------------------------------------------------------


def test_a_jump_host_forwards_to_the_target_whose_key_is_still_checked(start_host):
    jump = start_host("bastion", dump=None, log_level="DEBUG1")
    target = start_host("behind-bastion")

    with Connection(target.endpoint(jump=jump.endpoint())) as connection:
        result, out = run(connection, ["sh", "-c", "grep -m1 'model name' /proc/cpuinfo"])
    assert result.exit_status == 0
    assert b"AMD EPYC 7451" in out  # the target's machine, not the jump's
    # The jump's sshd opened a direct-tcpip channel to the target.
    assert re.search(
        rf"direct[-_]tcpip.*target {re.escape(target.address)} port {target.port}\b", jump.log
    ), jump.log[-2000:]

    # The target's key is checked through the jump too: trusting the jump's key for it fails.
    with pytest.raises(HostKeyChanged) as raised:
        with Connection(target.endpoint(jump=jump.endpoint(), host_key=jump.host_key)):
            pass
    assert target.name in raised.value.message

    # And the jump's own key is checked.
    with pytest.raises(HostKeyChanged):
        with Connection(target.endpoint(jump=jump.endpoint(host_key=target.host_key))):
            pass

    # Without the jump the target is not reached through it.
    jump.stop()
    with pytest.raises(Unreachable) as raised:
        with Connection(target.endpoint(jump=jump.endpoint(connect_timeout=5))):
            pass
    assert "connection refused" in raised.value.message and jump.name in raised.value.message


def test_a_target_the_jump_cannot_reach_is_unreachable_through_the_jump(start_host):
    jump = start_host("bastion-2", dump=None)
    target = start_host("down-behind-bastion", dump=None)
    target.stop()
    with pytest.raises(Unreachable) as raised:
        with Connection(target.endpoint(jump=jump.endpoint())):
            pass
    assert "through the jump host bastion-2" in raised.value.message
    assert target.name in raised.value.message


# --- collect_facts over SSH -----------------------------------------------------------------


def test_collect_facts_from_a_host_presenting_an_epyc_7451(sshd_host):
    result, sections, seconds = facts_over_ssh(sshd_host, timeout=30)

    assert result.exit_status == 0 and result.truncated is False, result.stderr
    assert [name.decode() for name in PROBES] == list(sections)
    assert all(isinstance(s.exit_status, int) for s in sections.values())
    for name in MUST_SUCCEED:
        assert sections[name].exit_status == 0, (name, sections[name].text[-500:])
    assert not any(s.via_sudo for s in sections.values())
    # x86 names its model in /proc/cpuinfo: lscpu is not needed, and not run.
    assert sections["lscpu"].exit_status == 5
    facts = parse_facts(result_raw(sshd_host)).facts
    assert facts["cpu.model"] == "AMD EPYC 7451 24-Core Processor"
    assert (facts["cpu.count"], facts["cpu.sockets"], facts["cpu.cores_per_socket"]) == (96, 2, 24)
    assert (facts["cpu.threads_per_core"], facts["numa.nodes"]) == (2, 8)
    assert sections["cpuinfo"].text.count("processor\t:") == 96
    assert "(perfcase-probe)" in sections["access"].text.splitlines()[0]
    assert not sections["access"].text.startswith("uid=0(")
    assert "performance" in sections["cpufreq"].text
    assert seconds < 20


def test_the_real_machine_is_left_as_it_was(sshd_host):
    with Connection(sshd_host.endpoint()) as connection:
        _, remote = run(connection, ["cat", "/proc/cpuinfo"])
    assert b"AMD EPYC 7451" in remote
    assert Path("/proc/cpuinfo").read_bytes() != remote
    assert not any(
        "perfcase-sshd" in line for line in Path("/proc/self/mountinfo").read_text().splitlines()
    )


def test_a_host_presents_its_governor_and_files(start_host):
    host = start_host(
        "tuned-down",
        dump="x86_64-dell_e4310",
        governor="powersave",
        files={
            "/sys/kernel/mm/transparent_hugepage/enabled": "always madvise [never]\n",
            "/sys/devices/system/cpu/cpu1/cpufreq/scaling_max_freq": "1199000\n",
        },
    )
    _, sections, _ = facts_over_ssh(host, timeout=30)

    cpufreq = sections["cpufreq"].text.splitlines()
    governors = [line for line in cpufreq if "/scaling_governor:" in line]
    assert len(governors) == 4 and all(line.endswith(":powersave") for line in governors)
    assert "cpu1/cpufreq/scaling_max_freq:1199000" in cpufreq
    assert "cpu0/cpufreq/scaling_max_freq:1199000" not in cpufreq
    assert (
        "/sys/kernel/mm/transparent_hugepage/enabled:always madvise [never]"
        in sections["thp"].text.splitlines()
    )
    assert "Core(TM) i5 CPU       M 560" in sections["cpuinfo"].text
    # The shared dump itself is untouched.
    dump = host._pool.dump("x86_64-dell_e4310") / "sys/devices/system/cpu/cpu0/cpufreq"
    assert (dump / "scaling_governor").read_text().strip() != "powersave"


def test_a_missing_tool_fails_only_its_own_probe(start_host, sshd_host):
    hidden = start_host("no-ethtool", hide_tools=["ethtool"])

    _, baseline, _ = facts_over_ssh(sshd_host, timeout=30)
    result, sections, _ = facts_over_ssh(hidden, timeout=30)

    assert result.exit_status == 0
    assert list(sections) == list(baseline)
    assert sections["ethtool"].exit_status == 127
    assert "ethtool: not found" in sections["ethtool"].text
    others = {n: s.exit_status for n, s in sections.items() if n != "ethtool"}
    assert others == {n: s.exit_status for n, s in baseline.items() if n != "ethtool"}
    assert "ethtool=" in sections["tools"].text.splitlines()
    # The tool is still there on the real machine.
    assert os.access("/usr/sbin/ethtool", os.X_OK)


def test_a_host_without_lscpu_still_gives_every_cpu_fact(start_host, sshd_host):
    hidden = start_host("no-lscpu", hide_tools=["lscpu"])

    with_lscpu = parse_facts(result_raw(sshd_host)).facts
    without = parse_facts(result_raw(hidden)).facts

    cpu = {k: v for k, v in with_lscpu.items() if k.startswith(("cpu.", "numa."))}
    volatile = {"cpu.mhz.current"}
    assert cpu and {k: without.get(k) for k in cpu if k not in volatile} == {
        k: v for k, v in cpu.items() if k not in volatile
    }
    assert without["tools.lscpu"] is False


def test_a_hanging_tool_times_out_alone_and_the_others_still_run(start_host):
    host = start_host("hanging-detect-virt", hang_tools=["systemd-detect-virt"])

    result, sections, seconds = facts_over_ssh(host, timeout=45)

    assert result.exit_status == 0
    assert sections["virt"].exit_status in (124, 137)
    assert "systemd-detect-virt: no answer within 5 s" in sections["virt"].text
    assert sections["cpuinfo"].exit_status == 0
    assert "AMD EPYC 7451" in sections["cpuinfo"].text
    assert [name.decode() for name in PROBES] == list(sections)
    snapshot = parse_facts(result_raw(host))
    assert snapshot.probes["virt"].status == "timeout"
    assert snapshot.facts["cpu.model"] == "AMD EPYC 7451 24-Core Processor"
    # The virt probe's own limit is 5 s; the whole run ends long before the 45 s asked.
    assert 4 < seconds < 15


# --- the test hosts themselves --------------------------------------------------------------


def test_stopping_a_host_ends_its_sessions_too(sshd_host):
    connection = Connection(sshd_host.endpoint())
    connection.open()
    try:
        with pytest.raises(CommandTimedOut):
            run(connection, ["sleep", "300"], timeout=0.5)
        namespace = os.readlink(f"/proc/{sshd_host.pid}/ns/mnt")
        ours = [pid for pid in _pids_named("sleep") if _namespace_of(pid) == namespace]
        assert ours, "the timed-out command should still run on the host"
        sshd_host.stop()
        assert not any(Path(f"/proc/{pid}").exists() and _namespace_of(pid) for pid in ours)
    finally:
        connection.close()


def _pids_named(comm: str) -> list[str]:
    pids = []
    for entry in os.scandir("/proc"):
        try:
            if entry.name.isdigit() and Path(entry.path, "comm").read_text().strip() == comm:
                pids.append(entry.name)
        except OSError:
            pass
    return pids


def _namespace_of(pid: str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None
