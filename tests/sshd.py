"""Real OpenSSH `sshd` test hosts on loopback, each presenting another machine.

Every host is one `sshd -D` started inside its own mount namespace (`unshare -m`), on its
own 127.0.0.x address and a free port. In that namespace a dump from fixtures/hosts/ is
bind-mounted over /proc/cpuinfo and /sys/devices/system/{cpu,node}, and optional tweaks
are applied: files replaced, a cpufreq governor set, tools hidden or made to hang. Only
that sshd and the sessions it starts see them; the real machine is left as it was, except
that /run/sshd and the unprivileged user `perfcase-probe` exist afterwards.

A host's edits to a dump's tree (files=, governor=) go into a copy-on-write copy of its
own: an overlayfs whose lower layer is the shared unpacked dump and whose upper layer is
the host's directory. (A plain copy of the EPYC tree, 15,800 files, costs 0.65 s to make
and 0.9 s to remove per host on this machine's disk; the overlay costs nothing.) Dumps are
unpacked once per TestHosts onto /dev/shm when it allows exec (7 s on disk, 0.2 s there).

Without pytest (the bench uses it this way):

    with TestHosts() as hosts:
        host = hosts.start("db-1", dump="x86_64-epyc_7451", governor="powersave")
        with Connection(host.endpoint()) as connection:
            ...

As a pytest plugin (`pytest_plugins = ["tests.sshd"]`, or `pytest -p tests.sshd`):
`test_hosts` (session: a TestHosts, hosts live until the session ends), `start_host`
(function: `start_host(name, **options)`, stopped after the test) and `sshd_host`
(function: one host presenting x86_64-epyc_7451).
"""

import atexit
import base64
import itertools
import os
import pwd
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from collectors.keys import fingerprint_of_blob
from collectors.ssh import Endpoint, HostKey

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = Path(os.environ.get("PERFCASE_FIXTURES_DIR") or ROOT.parent / "shared" / "fixtures")
DUMPS = FIXTURES / "hosts"
DEFAULT_DUMP = "x86_64-epyc_7451"
SSHD = "/usr/sbin/sshd"
SFTP_SERVER = "/usr/lib/openssh/sftp-server"
PROBE_USER = "perfcase-probe"
READY_TIMEOUT = 10.0
RESERVED_ADDRESSES = frozenset({61, 62, 63, 231, 232})
STOP_TIMEOUT = 10.0
# Where a dump's parts are mounted: (path inside the dump, mount point).
DUMP_MOUNTS = (
    ("proc/cpuinfo", "/proc/cpuinfo"),
    ("sys/devices/system/cpu", "/sys/devices/system/cpu"),
    ("sys/devices/system/node", "/sys/devices/system/node"),
)
# Where a tool to hide or hang is looked for (the probe's PATH, /bin and /sbin included).
TOOL_DIRS = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
HANG_SCRIPT = "#!/bin/sh\nexec sleep 3600\n"
_SYSTEM_PATH = os.pathsep.join([os.environ.get("PATH", ""), "/usr/sbin", "/sbin"])


def address_prefix() -> str:
    """The loopback /24 this test process's hosts take their addresses from: 127.0.0.x run
    alone, 127.(10+n).0.x in pytest-xdist's worker gw<n>, so that parallel workers' hosts
    (and captures filtered by a host's address) never meet."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "")
    if worker.startswith("gw") and worker[2:].isdigit():
        return f"127.{10 + int(worker[2:])}.0."
    return "127.0.0."


class MissingRealTool(Exception):
    """A real tool (or root) the test hosts need is not there; the message says which."""


class TestHostError(RuntimeError):
    """An sshd would not start or stop; the message carries its stderr."""

    __test__ = False


def missing_requirement() -> str | None:
    """Why test hosts cannot run here, or None when they can."""
    for tool, package in (
        ("unshare", "util-linux"),
        ("mount", "mount"),
        ("ssh-keygen", "openssh-client"),
    ):
        if shutil.which(tool, path=_SYSTEM_PATH) is None:
            return f"{tool} is not installed ({package}); the sshd test hosts need it"
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} is not installed (openssh-server); the sshd test hosts need it"
    if os.geteuid() != 0:
        return "the sshd test hosts need root (mount namespaces, bind mounts, a system user)"
    try:
        probe = subprocess.run(
            ["unshare", "-m", "--propagation", "private", "true"],
            capture_output=True,
            text=True,
            timeout=10,
        )
    except subprocess.TimeoutExpired:
        return "unshare -m did not finish within 10 s"
    if probe.returncode != 0:
        return f"unshare -m does not work here: {probe.stderr.strip()}"
    return None


def check_requirements() -> None:
    reason = missing_requirement()
    if reason is not None:
        raise MissingRealTool(reason)


def available_dumps() -> list[str]:
    return sorted(p.name.removesuffix(".tar.gz") for p in DUMPS.glob("*.tar.gz"))


def host_key_of(public_key_path: Path) -> HostKey:
    """The pinned form of an OpenSSH public key file (what `ssh-keygen -l` prints)."""
    key_type, b64 = public_key_path.read_text().split()[:2]
    return HostKey(key_type, fingerprint_of_blob(base64.b64decode(b64)))


def ensure_probe_user(name: str = PROBE_USER) -> None:
    """The unprivileged user the probe signs in as: a system user with a home and /bin/sh."""
    try:
        pwd.getpwnam(name)
        exists = True
    except KeyError:
        exists = False
    if not exists:
        made = subprocess.run(
            [
                shutil.which("useradd", path=_SYSTEM_PATH) or "useradd",
                "--system",
                "--create-home",
                "--shell",
                "/bin/sh",
                name,
            ],
            capture_output=True,
            text=True,
        )
        if made.returncode not in (0, 9):  # 9: made meanwhile by a parallel run
            raise TestHostError(f"useradd {name} failed: {made.stderr.strip()}")
    # useradd leaves the password field "!" (locked). Without PAM, sshd refuses a locked
    # account even for key logins ("not allowed because account is locked"); "*" means
    # "no password can match" without being a lock.
    for line in Path("/etc/shadow").read_text().splitlines():
        user, _, rest = line.partition(":")
        if user == name and rest.startswith("!"):
            subprocess.run(
                [shutil.which("usermod", path=_SYSTEM_PATH) or "usermod", "-p", "*", name],
                check=True,
                capture_output=True,
            )


KEY_TYPES = {
    "ed25519": ["-t", "ed25519"],
    "ecdsa": ["-t", "ecdsa", "-b", "256"],
    "rsa": ["-t", "rsa", "-b", "3072"],
}


def _keygen(path: Path, comment: str, key_type: str = "ed25519") -> None:
    if key_type not in KEY_TYPES:
        raise ValueError(f"key type {key_type!r}: one of {', '.join(KEY_TYPES)}")
    for stale in (path, path.with_name(path.name + ".pub")):
        stale.unlink(missing_ok=True)
    subprocess.run(
        ["ssh-keygen", "-q", *KEY_TYPES[key_type], "-N", "", "-C", comment, "-f", str(path)],
        check=True,
        capture_output=True,
    )


def _sshd_version() -> tuple[int, int]:
    shown = subprocess.run([SSHD, "-V"], capture_output=True, text=True)
    found = re.search(r"OpenSSH_(\d+)\.(\d+)", shown.stdout + shown.stderr)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def _fast_tmp() -> str | None:
    """Unpacking 15,000 small files is ~30 times faster on tmpfs than on this disk."""
    chosen = os.environ.get("PERFCASE_SSHD_TMPDIR")
    if chosen:
        return chosen
    try:
        flags = os.statvfs("/dev/shm").f_flag
    except OSError:
        return None
    # The hang script is executed from here, so the place must allow exec.
    if os.access("/dev/shm", os.W_OK) and not flags & (os.ST_NOEXEC | os.ST_RDONLY):
        return "/dev/shm"
    return None


def _hex_address(address: str) -> str:
    """An IPv4 address as /proc/net/tcp prints it."""
    return f"{struct.unpack('=I', socket.inet_aton(address))[0]:08X}"


def _listens(pid: int, address: str, port: int) -> bool:
    """Whether process `pid` itself holds a listening socket on address:port."""
    wanted = f"{_hex_address(address)}:{port:04X}"
    inodes = set()
    try:
        with open("/proc/net/tcp") as table:
            for line in itertools.islice(table, 1, None):
                parts = line.split()
                if parts[1] == wanted and parts[3] == "0A":
                    inodes.add(f"socket:[{parts[9]}]")
        if not inodes:
            return False
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                return True
    except OSError:
        return False
    return False


def _banner(address: str, port: int) -> bytes:
    try:
        with socket.create_connection((address, port), timeout=1.0) as sock:
            sock.settimeout(2.0)
            return sock.recv(256)
    except OSError:
        return b""


def _mount_namespace(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


_OWN_NAMESPACE = _mount_namespace(os.getpid())
# The mount namespaces of this run's running test hosts (another test run beside this one
# has its own).
_LIVE_NAMESPACES: set[str] = set()


def live_namespaces() -> frozenset[str]:
    return frozenset(_LIVE_NAMESPACES)


def _kill_namespace(namespace: str) -> int:
    """SIGKILL every process in mount namespace `namespace` (one this module made); how many."""
    if namespace == _OWN_NAMESPACE or namespace is None:
        raise TestHostError("refusing to kill the processes of this machine's own mount namespace")
    killed = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            pidfd = os.pidfd_open(int(entry.name))
        except OSError:
            continue
        try:
            # Checked after pidfd_open: the pidfd and the check are about the same process.
            if _mount_namespace(int(entry.name)) == namespace:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
                killed += 1
        except OSError:
            pass
        finally:
            os.close(pidfd)
    return killed


@dataclass(eq=False)
class TestHost:
    """One running sshd presenting a machine. `endpoint()` is ready to connect to it."""

    __test__ = False

    name: str
    address: str
    port: int
    username: str
    private_key: str = field(repr=False)
    host_key: HostKey
    dump: str | None
    directory: Path = field(repr=False)
    mount_script: str = field(repr=False)
    log_level: str = field(default="ERROR", repr=False)
    # A PID namespace of its own too: its sessions see only their own processes, so that two
    # hosts can each run "the" process of one name.
    pid_namespace: bool = False
    _pool: "TestHosts | None" = field(default=None, repr=False)
    _process: subprocess.Popen | None = field(default=None, repr=False)
    _namespace: str | None = field(default=None, repr=False)
    # Held open while the host lives, so that its namespace's number is never given to
    # another namespace (another test run's host) before stop() has killed everything in it.
    _namespace_fd: int | None = field(default=None, repr=False)

    @property
    def host_key_path(self) -> Path:
        """sshd's one host key (ed25519 unless started or restarted with another key_type)."""
        return self.directory / "ssh_host_key"

    @property
    def public_host_key_path(self) -> Path:
        return self.directory / "ssh_host_key.pub"

    @property
    def config_path(self) -> Path:
        return self.directory / "sshd_config"

    @property
    def log_path(self) -> Path:
        return self.directory / "sshd.log"

    @property
    def log(self) -> str:
        """What sshd wrote to stderr so far (at its LogLevel)."""
        try:
            return self.log_path.read_text(errors="replace")
        except FileNotFoundError:
            return ""

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.poll() is None

    def endpoint(self, **overrides) -> Endpoint:
        """A collectors.ssh.Endpoint to this host, its host key pinned; overrides replace fields."""
        values = {
            "name": self.name,
            "address": self.address,
            "port": self.port,
            "username": self.username,
            "private_key": self.private_key,
            "host_key": self.host_key,
        }
        values.update(overrides)
        return Endpoint(**values)

    # --- life cycle ------------------------------------------------------------------------

    def _write_config(self) -> None:
        lines = [
            f"Port {self.port}",
            f"ListenAddress {self.address}",
            f"HostKey {self.host_key_path}",
            f"PidFile {self.directory / 'sshd.pid'}",
            f"AuthorizedKeysFile {self.directory / 'authorized_keys'}",
            "StrictModes no",
            "UsePAM no",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "PermitRootLogin prohibit-password",
            "AllowTcpForwarding yes",
            "UseDNS no",
            "PrintMotd no",
            f"LogLevel {self.log_level}",
            # Benches open many connections at once; the defaults (10:30:100, 10) refuse them.
            "MaxStartups 100:30:200",
            "MaxSessions 50",
        ]
        if os.access(SFTP_SERVER, os.X_OK):
            lines.append(f"Subsystem sftp {SFTP_SERVER}")
        if self._pool is not None and self._pool.sshd_version >= (9, 8):
            # Failed-login tests would otherwise get 127.0.0.1 refused for a while.
            lines.append("PerSourcePenalties no")
        self.config_path.write_text("\n".join(lines) + "\n")

    def _launch(self) -> None:
        """Start sshd in its namespace and wait until it answers; raise with its stderr if not."""
        self._write_config()
        script = (
            f"set -e\n{self.mount_script}exec {SSHD} -D -e -f {shlex.quote(str(self.config_path))}"
        )
        with open(self.log_path, "ab") as log:
            log.write(f"--- starting {self.name} on {self.address}:{self.port}\n".encode())
            log.flush()
            pid_namespace = ["-p", "--fork", "--mount-proc"] if self.pid_namespace else []
            self._process = subprocess.Popen(
                ["unshare", "-m", "--propagation", "private", *pid_namespace, "sh", "-c", script],
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )
        deadline = time.monotonic() + READY_TIMEOUT
        while True:
            if self._process.poll() is not None:
                status = self._process.returncode
                self._process = None
                raise TestHostError(
                    f"sshd for test host {self.name} exited with status {status} before "
                    f"listening on {self.address}:{self.port}. Its stderr:\n{self.log}"
                )
            if _listens(self._sshd_pid(), self.address, self.port):
                if _banner(self.address, self.port).startswith(b"SSH-"):
                    break
            if time.monotonic() > deadline:
                self._namespace = _mount_namespace(self._process.pid)
                self._hold_namespace()
                self.stop()
                raise TestHostError(
                    f"sshd for test host {self.name} did not answer with an SSH banner on "
                    f"{self.address}:{self.port} within {READY_TIMEOUT:g} s. "
                    f"Its stderr:\n{self.log}"
                )
            time.sleep(0.01)
        # Only now: listening proves that unshare() ran, so this is the host's own namespace.
        self._namespace = _mount_namespace(self._process.pid)
        self._hold_namespace()
        if self._namespace in (None, _OWN_NAMESPACE):
            self._process.kill()
            raise TestHostError(f"sshd for test host {self.name} is not in a namespace of its own")

    def _sshd_pid(self) -> int:
        """sshd's PID: unshare's own, or, in a PID namespace (unshare --fork), its child's."""
        if not self.pid_namespace:
            return self._process.pid
        try:
            with open(f"/proc/{self._process.pid}/task/{self._process.pid}/children") as file:
                children = file.read().split()
        except OSError:
            return self._process.pid
        return int(children[0]) if children else self._process.pid

    def stop(self) -> None:
        """Kill this host's sshd and every process it started (its sessions included)."""
        process = self._process
        if process is None:
            return
        namespace = self._namespace
        if namespace not in (None, _OWN_NAMESPACE):
            deadline = time.monotonic() + STOP_TIMEOUT
            while _kill_namespace(namespace):
                if time.monotonic() > deadline:
                    raise TestHostError(f"processes of test host {self.name} survive SIGKILL")
                time.sleep(0.01)
        else:
            process.kill()
        process.wait(timeout=STOP_TIMEOUT)
        self._process = None
        _LIVE_NAMESPACES.discard(self._namespace)
        self._namespace = None
        if self._namespace_fd is not None:
            os.close(self._namespace_fd)
            self._namespace_fd = None

    def _hold_namespace(self) -> None:
        try:
            self._namespace_fd = os.open(f"/proc/{self._process.pid}/ns/mnt", os.O_RDONLY)
        except OSError:
            self._namespace_fd = None
        if self._namespace not in (None, _OWN_NAMESPACE):
            _LIVE_NAMESPACES.add(self._namespace)

    def start(self) -> None:
        """Start it again after stop(), on the same address and port."""
        if self.running:
            return
        deadline = time.monotonic() + 5
        while True:
            try:
                self._launch()
                return
            except TestHostError as error:
                # The port may still be held for a moment by a just-killed listener.
                if "Address already in use" not in str(error) or time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def restart(self, new_host_key: bool = False, key_type: str = "ed25519") -> None:
        """Stop and start on the same address and port; with a new host key (of key_type)
        if asked, as after a reinstall."""
        self.stop()
        if new_host_key:
            _keygen(self.host_key_path, f"test host {self.name}", key_type)
            self.host_key = host_key_of(self.public_host_key_path)
        self.start()

    def discard(self) -> None:
        """Stop it and remove its directory (upper layers and whiteouts included)."""
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)
        if self._pool is not None:
            self._pool._forget(self)


class TestHosts:
    """Starts test hosts; one client key pair and one unpacked copy of each dump per instance.

    `close()` (or leaving the `with` block) kills every host and removes every file.
    """

    __test__ = False

    def __init__(self, base_dir: str | None = None):
        check_requirements()
        ensure_probe_user()
        os.makedirs("/run/sshd", mode=0o755, exist_ok=True)
        self.sshd_version = _sshd_version()
        self.root = Path(tempfile.mkdtemp(prefix="perfcase-sshd-", dir=base_dir or _fast_tmp()))
        self.root.chmod(0o755)  # the probe user reads authorized_keys below it
        self.hosts: list[TestHost] = []
        self._lock = threading.Lock()
        self._dumps: dict[str, Path] = {}
        self._names = itertools.count(1)
        # Not the addresses some tests serve their own traffic on (test_capture_live.py,
        # test_captures.py).
        self._addresses = itertools.cycle(
            n for n in range(2, 255) if n not in RESERVED_ADDRESSES
        )
        self.client_key_path = self.root / "client_ed25519"
        _keygen(self.client_key_path, "perfcase tests")
        self.client_key = self.client_key_path.read_text()
        self.client_public_key = (self.root / "client_ed25519.pub").read_text()
        self._closed = False
        atexit.register(self.close)

    def __enter__(self) -> "TestHosts":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def dump(self, name: str) -> Path:
        """The unpacked dump (unpacked on first use; shared, never written to)."""
        name = name.removesuffix(".tar.gz")
        with self._lock:
            if name not in self._dumps:
                archive = DUMPS / f"{name}.tar.gz"
                if not archive.is_file():
                    raise ValueError(
                        f"No dump {name!r} in {DUMPS}; there are: {', '.join(available_dumps())}"
                    )
                target = self.root / "dumps"
                target.mkdir(mode=0o755, exist_ok=True)
                subprocess.run(
                    ["tar", "-xzf", str(archive), "-C", str(target), "--no-same-owner"],
                    check=True,
                    capture_output=True,
                )
                self._dumps[name] = target / name
            return self._dumps[name]

    def _next_address(self) -> str:
        return f"{address_prefix()}{next(self._addresses)}"

    @staticmethod
    def _free_port(address: str) -> int:
        while True:
            with socket.socket() as sock:
                sock.bind((address, 0))
                port = sock.getsockname()[1]
            if not 8000 <= port <= 8100:
                return port

    def start(
        self,
        name: str | None = None,
        *,
        dump: str | None = DEFAULT_DUMP,
        governor: str | None = None,
        files: dict[str, str] | None = None,
        hide_tools: list[str] | tuple[str, ...] = (),
        hang_tools: list[str] | tuple[str, ...] = (),
        username: str = PROBE_USER,
        address: str | None = None,
        log_level: str = "ERROR",
        host_key_type: str = "ed25519",
        pid_namespace: bool = False,
    ) -> TestHost:
        """Start one host and return it running.

        dump: a name from fixtures/hosts/ (x86_64-epyc_7451, vmware_fpe, ...), or None for
            this machine as it is.
        governor: every cpu*/cpufreq/scaling_governor of the dump reads this (needs a dump).
        files: {absolute path: content}; paths in the dump's trees are edited in this host's
            copy-on-write layer over the dump, others are bind-mounted over the real file.
        hide_tools: these commands are missing on the host (exit status 127).
        hang_tools: these commands hang (sleep 3600) on the host.
        username: who the endpoint signs in as (perfcase-probe, or root).
        address: a 127.0.0.x of its own by default (127.0.0.2, .3, ... in turn).
        log_level: sshd's LogLevel (DEBUG1 shows forwarded channels); see `host.log`.
        host_key_type: ed25519 (the default), ecdsa or rsa.
        pid_namespace: a PID namespace of its own (its sessions see only their processes).
        """
        if self._closed:
            raise TestHostError("these test hosts were closed")
        with self._lock:
            number = next(self._names)
            address = address or self._next_address()
        name = name or f"test-host-{number}"
        directory = self.root / f"host-{number}-{re.sub(r'[^A-Za-z0-9_.-]', '_', name)[:40]}"
        directory.mkdir(mode=0o755)
        try:
            _keygen(directory / "ssh_host_key", f"test host {name}", host_key_type)
            authorized = directory / "authorized_keys"
            authorized.write_text(self.client_public_key)
            authorized.chmod(0o644)
            script = _mount_script(
                directory,
                self.dump(dump) if dump else None,
                governor=governor,
                files=files or {},
                hide_tools=list(hide_tools),
                hang_tools=list(hang_tools),
            )
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
        host = TestHost(
            name=name,
            address=address,
            port=0,
            username=username,
            private_key=self.client_key,
            host_key=host_key_of(directory / "ssh_host_key.pub"),
            dump=dump,
            directory=directory,
            mount_script=script,
            log_level=log_level,
            pid_namespace=pid_namespace,
            _pool=self,
        )
        with self._lock:
            self.hosts.append(host)
        for attempt in range(5):
            host.port = self._free_port(address)
            try:
                host._launch()
                return host
            except TestHostError as error:
                # Another process took the port between our check and sshd's bind: try another.
                if "Address already in use" not in str(error) or attempt == 4:
                    host.discard()
                    raise
        raise AssertionError("unreachable")

    def _forget(self, host: TestHost) -> None:
        with self._lock:
            if host in self.hosts:
                self.hosts.remove(host)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        errors = []
        for host in list(self.hosts):
            try:
                host.stop()
            except Exception as error:  # stop the others all the same
                errors.append(error)
        self.hosts.clear()
        shutil.rmtree(self.root, ignore_errors=True)
        atexit.unregister(self.close)
        if errors:
            raise errors[0]


def _tool_paths(tool: str) -> dict[str, str]:
    """{real directory: path} for each place the probe's PATH finds `tool`."""
    if "/" in tool or not tool:
        raise ValueError(f"a command name, not a path: {tool!r}")
    found = {}
    for directory in TOOL_DIRS:
        real = os.path.realpath(directory)
        if os.path.lexists(os.path.join(real, tool)):
            found.setdefault(real, os.path.join(real, tool))
    return found


def _mount_script(
    directory: Path,
    tree: Path | None,
    *,
    governor: str | None,
    files: dict[str, str],
    hide_tools: list[str],
    hang_tools: list[str],
) -> str:
    """The shell lines, run inside the new mount namespace, that make the host what it shows."""
    q = shlex.quote
    lines: list[str] = []
    files = dict(files)
    for path in files:
        if not path.startswith("/"):
            raise ValueError(f"files: an absolute path, not {path!r}")
    if governor is not None and tree is None:
        raise ValueError(
            "governor= needs a dump: this machine's own cpufreq files stay as they are"
        )
    layers = itertools.count(1)

    # 1. The dump, with this host's edits in a copy-on-write layer of its own.
    if tree is not None:
        for inside, target in DUMP_MOUNTS:
            source = tree / inside
            if not source.exists():
                continue
            if source.is_file():
                if target in files:
                    source = directory / f"file-{next(layers)}"
                    source.write_text(files.pop(target))
                    source.chmod(0o644)
                lines.append(f"mount --bind {q(str(source))} {q(target)}")
                continue
            edits = {}
            for path in list(files):
                if path.startswith(target + "/"):
                    edits[path[len(target) + 1 :]] = files.pop(path)
            if governor is not None and inside == "sys/devices/system/cpu":
                for found in sorted(source.glob("cpu[0-9]*/cpufreq/scaling_governor")):
                    edits.setdefault(str(found.relative_to(source)), governor + "\n")
            if not edits:
                lines.append(f"mount --bind {q(str(source))} {q(target)}")
                continue
            number = next(layers)
            upper, work = directory / f"upper-{number}", directory / f"work-{number}"
            upper.mkdir(mode=0o755)
            work.mkdir(mode=0o755)
            real_source = os.path.realpath(source)
            for relative, content in edits.items():
                # Follow the dump's own links (cpu0/cpufreq -> ../cpufreq/policy0), so that
                # the edit lands on the file, not on a directory shadowing the link.
                real = os.path.realpath(os.path.join(real_source, relative))
                if os.path.commonpath([real, real_source]) != real_source:
                    raise ValueError(f"files: {target}/{relative} leaves the dump's tree")
                edited = upper / os.path.relpath(real, real_source)
                for parent in reversed(edited.relative_to(upper).parents):
                    (upper / parent).mkdir(mode=0o755, exist_ok=True)
                edited.write_text(content)
                edited.chmod(0o644)
            lines.append(
                f"mount -t overlay overlay -o lowerdir={real_source},upperdir={upper},"
                f"workdir={work} {q(target)}"
            )

    # 2. Single files of the real machine, replaced by a bind mount of our own file.
    for path, content in files.items():
        if not os.path.exists(path):
            raise ValueError(
                f"files: {path} does not exist here, so nothing can be mounted over it"
            )
        source = directory / f"file-{next(layers)}"
        source.write_text(content)
        source.chmod(0o644)
        lines.append(f"mount --bind {q(str(source))} {q(path)}")

    # 3. Missing tools: an overlay over their directory, the tool removed in it (a whiteout
    #    in our upper directory, removed with the host's directory).
    hidden: dict[str, list[str]] = {}
    for tool in hide_tools:
        for real_dir, path in _tool_paths(tool).items():
            hidden.setdefault(real_dir, []).append(path)
    for real_dir, paths in hidden.items():
        number = next(layers)
        upper, work = directory / f"upper-{number}", directory / f"work-{number}"
        upper.mkdir(mode=0o755)
        work.mkdir(mode=0o755)
        lines.append(
            f"mount -t overlay overlay -o lowerdir={real_dir},upperdir={upper},workdir={work} "
            f"{q(real_dir)}"
        )
        lines.append("rm -f " + " ".join(q(p) for p in paths))

    # 4. Hanging tools: a script that sleeps, bind-mounted over the tool.
    if hang_tools:
        hang = directory / "hang.sh"
        hang.write_text(HANG_SCRIPT)
        hang.chmod(0o755)
        for tool in hang_tools:
            paths = _tool_paths(tool)
            if not paths:
                raise ValueError(f"hang_tools: {tool} is not installed here, so it cannot hang")
            for path in paths.values():
                lines.append(f"mount --bind {q(str(hang))} {q(path)}")
    return "".join(line + "\n" for line in lines)


# --- pytest fixtures ------------------------------------------------------------------------


@pytest.fixture(scope="session")
def test_hosts():
    """Session-wide TestHosts: `test_hosts.start(name, dump=..., governor=..., files=...,
    hide_tools=..., hang_tools=..., username=...)`; every host is stopped at the session's end."""
    reason = missing_requirement()
    if reason is not None:
        from tests.conftest import require_real_tool

        require_real_tool(reason)
    hosts = TestHosts()
    try:
        yield hosts
    finally:
        hosts.close()


@pytest.fixture
def start_host(test_hosts):
    """`start_host(name=None, **options)` like test_hosts.start; the hosts end with the test."""
    started: list[TestHost] = []

    def start(name: str | None = None, **options) -> TestHost:
        host = test_hosts.start(name, **options)
        started.append(host)
        return host

    yield start
    for host in started:
        host.discard()


@pytest.fixture
def sshd_host(start_host) -> TestHost:
    """One host presenting x86_64-epyc_7451, signed in to as perfcase-probe."""
    return start_host("epyc-host", dump=DEFAULT_DUMP)
