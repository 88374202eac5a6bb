"""Rebuilt cases: two sides of sshd test hosts, one real difference injected on one side, a
diagnosis run through the JSON API and a real worker, then the case's ranked hypotheses.

Plain Python (no pytest), so that the tests (tests/scenarios/test_*.py) and the bench
(tests/bench/bench_scenarios.py) run the very same cases:

    outcome = run_case(CASES["cpu-governor"], calls, test_hosts)

`calls` is anything with `get(path)` and `post(path, body)` answering (status, body): the
tests wrap Django's test client, the bench its stack's HTTP client. Everything goes through
the API: team, investigation, credential, hosts, host keys (scanned by the worker, checked
against the key the test host has, then trusted), sides, the diagnosis, the hypotheses.
"""

import contextlib
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from tests.scenarios.services import start_forwarder, start_http, start_tls_client
from tests.sshd import TestHost, TestHosts

ENDED = ("completed", "failed", "cancelled")
# The dump both sides present, unless a case says otherwise: a 2-socket EPYC, performance
# governor, with CPU vulnerability files and cpufreq trees to edit.
DUMP = "x86_64-epyc_7451"
THP = "/sys/kernel/mm/transparent_hugepage/enabled"
CLOCKSOURCE = "/sys/devices/system/clocksource/clocksource0/current_clocksource"
SPECTRE_V2 = "/sys/devices/system/cpu/vulnerabilities/spectre_v2"
# The small service each service host runs when a case needs one (tests/scenarios/
# services.py), found by the facts probe as this command name.
SERVICE_NAME = "python3"
# The ladder a case with load runs (small: the knee needs only to be found, not measured
# well), and how long the knee is held while profiling and capturing.
SMALL_LOAD = {"steps": [2, 8], "step_seconds": 2, "warmup_seconds": 1}
KNEE_SECONDS = 3
CAPTURE_FIGURES = ("side", "filter", "packets", "connections", "zero_windows", "retransmissions")


class ScenarioError(RuntimeError):
    """An API call did not answer as the scenario expects; the message says which."""


@dataclass
class Case:
    """One rebuilt case. `a` and `b`: each side's test host options (tests/sshd.py's
    start: dump, governor, files, ...). `expected`: the knowledge-base slug that must rank
    first, or None when both sides are the same (nothing may rank above the low score)."""

    name: str
    expected: str | None
    what: str  # the one difference, in words
    a: dict = field(default_factory=dict)
    b: dict = field(default_factory=dict)
    stages: tuple[str, ...] = ("facts",)
    # Each side's service host runs a service (SERVICE_NAME), started through the host (its
    # own PID namespace, signed in as root) inside the cgroup `confine(side)` gives it:
    # service(side, host) starts it and answers its port.
    service: Callable[[str, TestHost], int] | None = None
    confine: Callable[[str], "contextlib.AbstractContextManager"] | None = None
    # A load generator host on each side too, and the diagnosis's load is a ladder against
    # each side's service (SMALL_LOAD).
    load: bool = False


@dataclass
class Outcome:
    case: str
    expected: str | None
    ranked: list[tuple[str, float]]  # (slug, score), most likely first
    low_score: float
    difference_found: bool
    compared: list[str]
    diagnosis: dict
    seconds: float
    stage_seconds: dict[str, float]
    # Each capture's side and figures that tell a network cause, when the case captured.
    captures: list[dict] = field(default_factory=list)
    # When the knee's held load and its collections ran, side by side, when it was held.
    knee: dict = field(default_factory=dict)

    @property
    def first(self) -> str | None:
        return self.ranked[0][0] if self.ranked else None

    @property
    def top1(self) -> bool:
        if self.expected is None:
            return not self.difference_found
        return self.first == self.expected

    @property
    def top3(self) -> bool:
        if self.expected is None:
            return self.top1
        return self.expected in [slug for slug, _ in self.ranked[:3]]

    @property
    def wrong_first(self) -> str | None:
        """The cause ranked first when it is not the expected one (above the low score when
        both sides are the same)."""
        if self.expected is None:
            return self.first if self.difference_found else None
        return self.first if self.first != self.expected else None


# --- cgroups a service is confined in ---------------------------------------------------


CGROUP = Path("/sys/fs/cgroup")


@contextlib.contextmanager
def _group(controller: str, v1: dict[str, str], v2: dict[str, str]):
    """A cgroup of its own with `controller`'s settings written in order (cgroup v2's when
    the machine has the unified hierarchy, else v1's); its cgroup.procs file. Whatever is
    left in it goes back to the parent group at the end."""
    name = f"perfcase-scenario-{uuid.uuid4().hex[:8]}"
    if (CGROUP / "cgroup.controllers").exists():
        parent, settings = CGROUP, v2
        if controller not in (CGROUP / "cgroup.controllers").read_text().split():
            raise ScenarioError(f"the cgroup v2 root offers no {controller} controller")
        (CGROUP / "cgroup.subtree_control").write_text(f"+{controller}")
    else:
        parent, settings = CGROUP / controller, v1
        if not (parent / "cgroup.procs").exists():
            raise ScenarioError(f"no cgroup v1 {controller} hierarchy at {parent}")
    group = parent / name
    group.mkdir()
    try:
        for file, value in settings.items():
            (group / file).write_text(value)
        yield group / "cgroup.procs"
    finally:
        for line in (group / "cgroup.procs").read_text().split():
            with contextlib.suppress(OSError):
                (parent / "cgroup.procs").write_text(line)
        with contextlib.suppress(OSError):
            group.rmdir()


def cpu_quota(percent: int):
    """A group whose CPU quota is `percent` of one CPU (over a 100 ms period)."""
    return _group(
        "cpu",
        {"cpu.cfs_period_us": "100000", "cpu.cfs_quota_us": str(percent * 1000)},
        {"cpu.max": f"{percent * 1000} 100000"},
    )


def cpuset(cpus: str):
    """A group that may run on `cpus` only (memory node 0)."""
    return _group(
        "cpuset",
        {"cpuset.mems": "0", "cpuset.cpus": cpus},
        {"cpuset.mems": "0", "cpuset.cpus": cpus},
    )


def _http(side: str, host: TestHost) -> int:
    return start_http(host)


def _slow_dependency_on(slow_side: str):
    def start(side: str, host: TestHost) -> int:
        return start_forwarder(host, slow=side == slow_side)

    return start


def _waiting_client_on(waiting_side: str, wait_ms: int = 120):
    # 120 ms: above the capture's gap threshold (100 ms), and the ladder's 8 connections
    # served one after another still finish within wrk's 2 s timeout.
    def start(side: str, host: TestHost) -> int:
        waits = wait_ms if side == waiting_side else 0
        return start_forwarder(host, chunk_kb=1, answered=True, wait_ms=waits)

    return start


def _tls_per_request_on(churning_side: str):
    def start(side: str, host: TestHost) -> int:
        return start_tls_client(host, per_request=side == churning_side)

    return start


def _confined_on(side_to_confine: str, make):
    def confine(side: str):
        return make() if side == side_to_confine else contextlib.nullcontext()

    return confine


# --- the cases -----------------------------------------------------------------------------

CASES: dict[str, Case] = {
    case.name: case
    for case in (
        Case(
            "cpu-governor",
            "cpu-governor-powersave",
            "side A's cpufreq governor is powersave, side B's performance",
            a={"governor": "powersave"},
            b={"governor": "performance"},
        ),
        Case(
            "transparent-huge-pages",
            "transparent-huge-pages",
            "side A's THP is always, side B's madvise",
            a={"files": {THP: "[always] madvise never\n"}},
            b={"files": {THP: "always [madvise] never\n"}},
        ),
        Case(
            "clock-source",
            "slow-clocksource",
            "side A reads time from hpet, side B from tsc",
            a={"files": {CLOCKSOURCE: "hpet\n"}},
            b={"files": {CLOCKSOURCE: "tsc\n"}},
        ),
        Case(
            "mitigations",
            "cpu-vulnerability-mitigations",
            "side A reports spectre_v2 unmitigated (Vulnerable), side B mitigated",
            a={"files": {SPECTRE_V2: "Vulnerable, IBPB: disabled, STIBP: disabled\n"}},
        ),
        Case(
            "same-sides",
            None,
            "nothing: both sides present the same machine",
        ),
        Case(
            "cgroup-cpu-quota",
            "cgroup-cpu-throttling",
            "side A's service runs in a cgroup with a CPU quota of 20 % of one CPU",
            a={"dump": None},
            b={"dump": None},
            service=_http,
            confine=_confined_on("a", lambda: cpu_quota(20)),
        ),
        Case(
            "fewer-cpus",
            "fewer-cpus",
            "side A's service may run on CPU 0 only (a cpuset), side B's on all",
            a={"dump": None},
            b={"dump": None},
            service=_http,
            confine=_confined_on("a", lambda: cpuset("0")),
        ),
        Case(
            "slow-receiver",
            "slow-receiver-zero-window",
            "side A's service writes to a dependency that reads slowly (zero windows)",
            a={"dump": None},
            b={"dump": None},
            stages=("ladder", "at_knee"),
            service=_slow_dependency_on("a"),
            load=True,
        ),
        Case(
            "client-pauses",
            "client-waits-before-requests",
            "side A's service waits 120 ms before each request it sends its dependency",
            a={"dump": None},
            b={"dump": None},
            stages=("ladder", "at_knee"),
            service=_waiting_client_on("a"),
            load=True,
        ),
        Case(
            "tls-per-request",
            "short-lived-tls-connections",
            "side A's service opens a new TLS connection to its dependency for each request; "
            "side B's keeps one",
            a={"dump": None},
            b={"dump": None},
            stages=("ladder", "at_knee"),
            service=_tls_per_request_on("a"),
            load=True,
        ),
    )
}


# --- running one ---------------------------------------------------------------------------


def _ok(answer, what: str, expect=(200, 201, 202)):
    status, body = answer
    if status not in expect:
        raise ScenarioError(f"{what} answered {status}: {body}")
    return body


def wait(predicate, timeout: float, what: str, interval: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = predicate()
        if found:
            return found
        time.sleep(interval)
    raise ScenarioError(f"{what}: not within {timeout:g} s")


def place(
    calls, host: TestHost, *, team: int, investigation: int, credential: int, side: str, role: str
):
    """The test host as a host of the team on `side` in `role`, its key scanned by the
    worker, checked against the key the host has, and trusted."""
    host_id = _ok(
        calls.post(
            "/api/hosts",
            {
                "team": team,
                "name": host.name,
                "address": host.address,
                "port": host.port,
                "username": host.username,
                "credential": credential,
            },
        ),
        "POST /api/hosts",
    )["id"]
    _ok(calls.post(f"/api/hosts/{host_id}/host-key/scan", {}), "key scan")
    scanned = wait(
        lambda: (
            (body := _ok(calls.get(f"/api/hosts/{host_id}/host-key/scan"), "scan"))["status"]
            in ("done", "failed")
            and body
        ),
        60,
        f"the key scan of {host.name}",
        0.1,
    )
    if scanned["fingerprint"] != host.host_key.fingerprint:
        raise ScenarioError(f"{host.name}: the scan found {scanned}, not the host's own key")
    _ok(
        calls.post(f"/api/hosts/{host_id}/host-key/trust", {"fingerprint": scanned["fingerprint"]}),
        "trust",
    )
    _ok(
        calls.post(
            f"/api/investigations/{investigation}/members",
            {"host": host_id, "side": side, "role": role},
        ),
        "POST members",
    )
    return host_id


def start_hosts(case: Case, test_hosts: TestHosts, stack: contextlib.ExitStack) -> dict:
    """Each side's hosts by (side, role), with the service (and its cgroup) when the case has
    one; and each side's service URL."""
    hosts, urls = {}, {}
    for side in ("a", "b"):
        options = {"dump": DUMP, **getattr(case, side)}
        if case.service:
            options.update(username="root", pid_namespace=True)
        host = test_hosts.start(f"{case.name[:20]}-{side}", **options)
        stack.callback(host.discard)
        hosts[(side, "service")] = host
        if case.load:
            loader = test_hosts.start(f"{case.name[:16]}-load-{side}", dump=None)
            stack.callback(loader.discard)
            hosts[(side, "load_generator")] = loader
        if case.service:
            if case.confine is not None:
                procs = stack.enter_context(case.confine(side))
                if procs is not None:
                    # sshd goes into the group: every session it starts from now on, and so
                    # the service started below, is confined in it.
                    procs.write_text(str(host._sshd_pid()))
            urls[side] = f"http://127.0.0.1:{case.service(side, host)}/"
    return hosts, urls


def diagnose(calls, investigation: int, stages, urls: dict, timeout: float = 240) -> dict:
    body = {"stages": list(stages)}
    if urls:
        body["load"] = {"side_a_url": urls["a"], "side_b_url": urls["b"], **SMALL_LOAD}
        body["seconds"] = KNEE_SECONDS
    started = _ok(
        calls.post(f"/api/investigations/{investigation}/diagnoses", body),
        "POST diagnoses",
        expect=(201, 202),
    )
    return wait(
        lambda: (
            (body := _ok(calls.get(f"/api/diagnoses/{started['id']}"), "GET diagnosis"))["status"]
            in ENDED
            and body
        ),
        timeout,
        f"diagnosis #{started['id']}",
        0.3,
    )


def _stage_seconds(diagnosis: dict) -> dict[str, float]:
    from datetime import datetime

    found = {}
    for stage in diagnosis.get("stages", []):
        began, ended = stage.get("started_at"), stage.get("ended_at")
        if began and ended:
            found[stage["name"]] = (
                datetime.fromisoformat(ended) - datetime.fromisoformat(began)
            ).total_seconds()
    return found


def run_case(case: Case, calls, test_hosts: TestHosts, *, team_name: str = "Scenarios"):
    """Start the case's hosts, place them, diagnose, and read the ranking. Hosts (and
    cgroups) end with the call."""
    started = time.monotonic()
    team = _ok(calls.post("/api/teams", {"name": f"{team_name} {case.name}"}), "POST teams")
    investigation = _ok(
        calls.post(
            "/api/investigations",
            {
                "team": team["id"],
                "title": f"Rebuilt case: {case.name}",
                "side_a_label": "A",
                "side_b_label": "B",
            },
        ),
        "POST investigations",
    )["id"]
    credential = _ok(
        calls.post(
            "/api/credentials",
            {"team": team["id"], "name": "test hosts", "private_key": test_hosts.client_key},
        ),
        "POST credentials",
    )["id"]
    with contextlib.ExitStack() as stack:
        hosts, urls = start_hosts(case, test_hosts, stack)
        for (side, role), host in hosts.items():
            place(
                calls,
                host,
                team=team["id"],
                investigation=investigation,
                credential=credential,
                side=side,
                role=role,
            )
        # A case with a service gives its URLs as the load, ladder or not: its facts stage
        # finds the service's process on each service host by the URL's port.
        diagnosis = diagnose(calls, investigation, case.stages, urls)
        answer = _ok(calls.get(f"/api/investigations/{investigation}/hypotheses"), "hypotheses")
        captures = _ok(calls.get(f"/api/investigations/{investigation}/captures"), "captures")
        knee = _knee_timeline(calls, diagnosis)
    return Outcome(
        case=case.name,
        expected=case.expected,
        ranked=[(item["root_cause"]["slug"], item["score"]) for item in answer["items"]],
        low_score=answer["low_score"],
        difference_found=answer["difference_found"],
        compared=[item["summary"] for item in answer["compared"]],
        diagnosis=diagnosis,
        seconds=time.monotonic() - started,
        stage_seconds=_stage_seconds(diagnosis),
        captures=[
            {key: detail.get(key) for key in CAPTURE_FIGURES}
            for item in captures["items"]
            if (detail := _ok(calls.get(f"/api/captures/{item['id']}"), "capture") or {})
        ],
        knee=knee,
    )


def _knee_timeline(calls, diagnosis) -> dict:
    """When the knee's load was held on each side and when its profiles and captures ran, to
    tell from a failure whether they overlapped."""
    stage = next((s for s in diagnosis["stages"] if s["name"] == "at_knee"), None)
    if not stage or not stage.get("ladder"):
        return {}
    hold = _ok(calls.get(f"/api/ladders/{stage['ladder']}"), "hold") or {}
    steps = [
        {key: step.get(key) for key in ("side", "started_at", "duration_s", "requests", "errors")}
        for step in hold.get("results", [])
    ]
    targets = []
    for pk in stage.get("collections", []):
        collection = _ok(calls.get(f"/api/collections/{pk}"), "collection") or {}
        for target in collection.get("targets", []):
            targets.append(
                {"kind": collection.get("kind")}
                | {
                    key: target.get(key)
                    for key in ("side", "status", "began_at", "finished_at", "timings", "error")
                }
            )
    return {"hold": hold.get("status"), "steps": steps, "collections": targets}
