"""The baseline pack end to end: real sysbench, perf, stress-ng, fio, iperf3, qperf and ping
over real sshd test hosts, a real Celery worker, the API and the table. One side's sshd (and
so every benchmark its sessions start) runs in a cgroup with a CPU quota, so that the table
must call that side worse at compute."""

import contextlib
import os
import shutil
import subprocess
import tempfile
import uuid
from pathlib import Path

import pytest

from investigations.models import Finding
from tests.conftest import ApiClient, require_real_tool, wait_for
from tests.conftest import trust_host_key as trust
from tests.investigations.test_facts_end_to_end import place

pytestmark = pytest.mark.django_db(transaction=True)
BENCHMARK_TOOLS = ("sysbench", "fio", "iperf3", "qperf", "stress-ng", "ping", "perf")
RUNNING = ["sysbench", "fio", "iperf3", "qperf", "stress-ng"]


@pytest.fixture(autouse=True)
def tools():
    missing = [tool for tool in BENCHMARK_TOOLS if shutil.which(tool) is None]
    if missing:
        require_real_tool(f"not installed: {', '.join(missing)} (see .ci/run)")


@contextlib.contextmanager
def cpu_capped(pid: int, percent: int):
    """The process (and what it starts from now on) limited to `percent` of one CPU: a
    cgroup of its own with a CPU quota (cgroup v2's cpu.max, or v1's cfs quota)."""
    name = f"perfcase-test-{uuid.uuid4().hex[:8]}"
    v2, v1 = Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/cpu")
    if (v2 / "cgroup.controllers").exists() and "cpu" in (v2 / "cgroup.controllers").read_text():
        group = v2 / name
        try:
            (v2 / "cgroup.subtree_control").write_text("+cpu")
            group.mkdir()
            (group / "cpu.max").write_text(f"{percent * 1000} 100000")
        except OSError as error:
            require_real_tool(f"cannot make a cgroup with a CPU quota: {error}")
        procs = group / "cgroup.procs"
    elif (v1 / "cpu.cfs_quota_us").exists():
        group = v1 / name
        try:
            group.mkdir()
            (group / "cpu.cfs_period_us").write_text("100000")
            (group / "cpu.cfs_quota_us").write_text(str(percent * 1000))
        except OSError as error:
            require_real_tool(f"cannot make a cgroup with a CPU quota: {error}")
        procs = group / "cgroup.procs"
    else:
        require_real_tool("no cgroup cpu controller to cap a test host's CPU")
    procs.write_text(str(pid))
    try:
        yield
    finally:
        # Whatever is left in it goes back to the root group, then the group goes.
        for line in procs.read_text().split():
            with contextlib.suppress(OSError):
                (group.parent / "cgroup.procs").write_text(line)
        with contextlib.suppress(OSError):
            group.rmdir()


def collect(api: ApiClient, personas, timeout=240, **parameters) -> dict:
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {"kind": "baseline", **parameters},
    )
    assert created.status_code == 201, created.body
    return wait_for(
        lambda: (
            (body := api.get(f"/api/collections/{created.body['id']}").body)["completed_at"]
            and body
        ),
        timeout=timeout,
        interval=0.5,
    )


def rows_of(api, personas) -> dict:
    body = api.get(f"/api/investigations/{personas.investigation.pk}/baseline").body
    return {(item["benchmark"], item["metric"], item["role"]): item for item in body["items"]}


def ours_running() -> list[str]:
    """Benchmark processes on this machine (the test hosts' sessions run here)."""
    found = subprocess.run(
        ["pgrep", "-a", "-x", "|".join(RUNNING)], capture_output=True, text=True
    ).stdout
    return [line for line in found.splitlines() if line.strip()]


@pytest.mark.parametrize("capped", ["a", "b"])
def test_the_side_with_a_cpu_quota_is_worse_at_compute_in_either_direction(
    personas, celery_worker, credential, start_host, capped
):
    api = ApiClient(personas.member)
    hosts = {side: start_host(f"app-{side}", dump=None) for side in ("a", "b")}
    for side, test_host in hosts.items():
        trust(api, place(personas, credential, test_host, side))

    with cpu_capped(hosts[capped]._sshd_pid(), percent=20):
        collection = collect(api, personas, suite=["compute"], repeat=2, seconds=1)

    assert {t["status"] for t in collection["targets"]} == {"succeeded"}, collection["targets"]
    began = sorted(t["began_at"] for t in collection["targets"])
    assert began[0][:19] == began[1][:19]  # the same second: together
    rows = rows_of(api, personas)
    expected = "worse" if capped == "a" else "better"
    # Higher is better (events a second) and lower is better (a pipe round trip's time):
    # both say the capped side is worse.
    for key in (
        ("cpu_1", "events_per_second", "service"),
        ("cpu_all", "events_per_second", "service"),
        ("stress_matrix", "bogo_ops_per_second", "service"),
    ):
        row = rows[key]
        assert row["verdict"] == expected, row
        assert row["status_a"] == row["status_b"] == "measured"
        assert len(row["values_a"]) == 2 and row["spread_a"] is not None
    assert rows[("cpu_1", "events_per_second", "service")]["higher_is_better"] is True
    pipe = rows[("sched_pipe", "usecs_per_op", "service")]
    assert pipe["higher_is_better"] is False
    assert pipe["verdict"] in (expected, "about_equal"), pipe
    worse = capped.upper()
    finding = Finding.objects.get(
        investigation=personas.investigation, rule="baseline.cpu_1.events_per_second"
    )
    assert finding.title.startswith(f"Side {worse} is worse at sysbench cpu, 1 thread")


def test_disk_memory_and_network_run_within_each_side_and_leave_nothing_behind(
    personas, celery_worker, credential, start_host
):
    scratch = Path(tempfile.mkdtemp(prefix="perfcase-scratch-"))
    scratch.chmod(0o777)
    api = ApiClient(personas.member)
    loadgen_a = start_host("lg-a", dump=None)
    app_a = start_host("app-a", dump=None)
    # Side B: one host is both load generator and service, and has no qperf.
    both_b = start_host("both-b", dump=None, hide_tools=["qperf"])
    trust(api, place(personas, credential, loadgen_a, "a", role="load_generator"))
    trust(api, place(personas, credential, app_a, "a"))
    host_b = place(personas, credential, both_b, "b")
    trust(api, host_b)
    from investigations.services.inventory import member_add

    member_add(
        investigation=personas.investigation,
        user=personas.member,
        host=host_b,
        side_key="b",
        role="load_generator",
    )

    try:
        collection = collect(
            api,
            personas,
            suite=["memory", "disk", "network"],
            repeat=1,
            seconds=1,
            scratch_dir=str(scratch),
            file_mb=32,
        )
        left = sorted(os.listdir(scratch))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    assert {t["status"] for t in collection["targets"]} == {"succeeded"}, collection["targets"]
    rows = rows_of(api, personas)
    for metric in ("randread_iops", "randwrite_latency_us", "seqwrite_mb_per_second"):
        row = rows[("fio", metric, "service")]
        assert row["status_a"] == row["status_b"] == "measured", row
        assert row["a"] > 0 and row["b"] > 0 and row["verdict"] is not None
    assert rows[("memory_read", "mib_per_second", "service")]["a"] > 100
    # The load generator of side A is measured too; side B has none of its own.
    assert rows[("fio", "randread_iops", "load_generator")]["status_b"] == "not_measured"
    iperf = rows[("iperf3", "gbit_per_second", "")]
    assert iperf["a"] > 0 and iperf["b"] > 0, iperf
    assert iperf["host_a"] == "lg-a" and iperf["host_b"] == "both-b"
    ping = rows[("ping", "rtt_ms", "")]
    assert ping["status_a"] == ping["status_b"] == "measured"
    qperf = rows[("qperf_tcp_lat", "latency_us", "")]
    assert qperf["status_a"] == "measured" and qperf["a"] > 0
    assert qperf["status_b"] in ("not_installed", "not_measured"), qperf
    assert "qperf" in qperf["note_b"]
    assert left == []  # fio's scratch files are gone
    assert wait_for(lambda: not ours_running(), timeout=10)  # the servers too


def test_a_cancel_in_the_middle_stops_every_benchmark_and_removes_the_scratch_file(
    personas, celery_worker, credential, start_host
):
    scratch = Path(tempfile.mkdtemp(prefix="perfcase-scratch-"))
    scratch.chmod(0o777)
    api = ApiClient(personas.member)
    for side in ("a", "b"):
        trust(api, place(personas, credential, start_host(f"disk-{side}", dump=None), side))
    created = api.post(
        f"/api/investigations/{personas.investigation.pk}/collections",
        {
            "kind": "baseline",
            "suite": ["disk"],
            "repeat": 3,
            "seconds": 30,
            "scratch_dir": str(scratch),
            "file_mb": 32,
        },
    )
    assert created.status_code == 201, created.body
    try:
        # fio has begun on both hosts: their scratch files exist.
        wait_for(lambda: len(list(scratch.glob("perfcase-baseline-*.fio"))) == 2, timeout=60)

        cancelled = api.post(f"/api/collections/{created.body['id']}/cancel")

        assert cancelled.status_code == 200 and cancelled.body["cancel_requested_at"]
        ended = wait_for(
            lambda: (
                (body := api.get(f"/api/collections/{created.body['id']}").body)["completed_at"]
                and body
            ),
            timeout=30,
        )
        assert ended["status"] == "cancelled"
        assert {(t["status"], t["error"]) for t in ended["targets"]} == {
            ("cancelled", "Cancelled.")
        }
        assert wait_for(lambda: not ours_running(), timeout=10), ours_running()
        assert list(scratch.iterdir()) == []
        again = api.post(f"/api/collections/{created.body['id']}/cancel")
        assert again.status_code == 400
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
