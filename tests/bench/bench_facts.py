"""Host facts from many hosts: Perfcase's engine against `ansible -m setup`.

    python -m tests.bench.bench_facts [--hosts 20] [--parallelism 10] [--runs 3]

Starts the host aliases as real sshd test hosts (tests/sshd.py; needs root), each presenting
one of the fixtures/hosts/ machines, then in the same run:

- Perfcase: one collectors.ssh.Connection per host, collect_facts + parse_facts, at most
  --parallelism hosts at a time (a ThreadPoolExecutor);
- Ansible: `ansible all -m setup -a gather_subset=all` with the same hosts, user and key,
  pipelining on, forks = --parallelism (ansible-core is pip-installed into this venv on
  demand; it is not a dependency of Perfcase).

Each side runs --runs times with fresh connections; the medians are compared against the
target "Perfcase gathers facts at least 10 times faster". Exits 1 on errors (a host without
facts, ansible failing), 2 when the test hosts cannot run here; never for missing the target.
"""

import argparse
import io
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from collectors.facts import collect_facts, parse_facts
from collectors.ssh import Connection
from tests.sshd import (
    DUMPS,
    MissingRealTool,
    TestHost,
    TestHostError,
    TestHosts,
    available_dumps,
)

TARGET_RATIO = 10.0
VENV_BIN = Path(sys.executable).parent


class BenchError(Exception):
    pass


def expected_models() -> dict[str, str]:
    """The model name each dump presents, from the lscpu output recorded with it."""
    models = {}
    for dump in available_dumps():
        listing = DUMPS / f"{dump}.lscpu-expected.txt"
        for line in listing.read_text().splitlines():
            if line.startswith("Model name:"):
                models[dump] = " ".join(line.split(":", 1)[1].split())
    return models


# --- Perfcase ---------------------------------------------------------------------------------


def collect_one(host: TestHost) -> dict:
    started = time.monotonic()
    sink = io.BytesIO()
    with Connection(host.endpoint()) as connection:
        result = collect_facts(connection, sink)
    snapshot = parse_facts(sink.getvalue())
    return {
        "host": host,
        "seconds": time.monotonic() - started,
        "result": result,
        "snapshot": snapshot,
    }


def check_facts(outcome: dict, models: dict[str, str]) -> str | None:
    """Why this host's facts are not good, or None."""
    host, result, snapshot = outcome["host"], outcome["result"], outcome["snapshot"]
    if result.exit_status != 0 or result.truncated:
        return f"probe script exit status {result.exit_status}, truncated={result.truncated}"
    failed = [
        n
        for n in ("uname", "cpuinfo", "cpu_topology", "cpufreq", "meminfo")
        if snapshot.probes[n].status != "ok"
    ]
    failed += [n for n, p in snapshot.probes.items() if p.status in ("unparseable", "missing")]
    if failed:
        return "probes not ok: " + ", ".join(f"{n} ({snapshot.probes[n].reason})" for n in failed)
    model = " ".join(str(snapshot.facts.get("cpu.model", "")).split())
    if host.dump and model != models[host.dump]:
        return f"cpu.model is {model!r}, the host presents {models[host.dump]!r}"
    return None


def perfcase_run(hosts: list[TestHost], parallelism: int, models: dict[str, str]) -> dict:
    started = time.monotonic()
    with ThreadPoolExecutor(max_workers=parallelism) as pool:
        futures = [pool.submit(collect_one, host) for host in hosts]
        outcomes, errors = [], []
        for host, future in zip(hosts, futures, strict=True):
            try:
                outcomes.append(future.result())
            except Exception as error:
                errors.append(f"{host.name}: {type(error).__name__}: {error}")
    wall = time.monotonic() - started
    for outcome in outcomes:
        problem = check_facts(outcome, models)
        if problem:
            errors.append(f"{outcome['host'].name}: {problem}")
    seconds = [o["seconds"] for o in outcomes]
    return {
        "wall": wall,
        "per_host_median": statistics.median(seconds) if seconds else float("nan"),
        "per_host_max": max(seconds, default=float("nan")),
        "facts": statistics.median(len(o["snapshot"].facts) for o in outcomes) if outcomes else 0,
        "hosts_ok": len(outcomes) - sum(1 for o in outcomes if check_facts(o, models)),
        "errors": errors,
    }


# --- Ansible ----------------------------------------------------------------------------------


def ensure_ansible() -> Path:
    ansible = VENV_BIN / "ansible"
    if not ansible.exists():
        print("ansible is missing: python -m pip install ansible-core (into this venv only)")
        subprocess.run(
            [sys.executable, "-m", "pip", "install", "--quiet", "ansible-core"], check=True
        )
    if not ansible.exists():
        raise BenchError(f"pip installed ansible-core but {ansible} is not there")
    return ansible


def write_inventory(hosts: list[TestHost], key_path: Path, directory: Path) -> Path:
    lines = ["[bench]"]
    for host in hosts:
        lines.append(
            f"{host.name} ansible_host={host.address} ansible_port={host.port} "
            f"ansible_user={host.username} ansible_ssh_private_key_file={key_path}"
        )
    # A known interpreter: no discovery round trip, which only makes Ansible faster here.
    lines += ["", "[bench:vars]", "ansible_python_interpreter=/usr/bin/python3"]
    inventory = directory / "inventory.ini"
    inventory.write_text("\n".join(lines) + "\n")
    return inventory


def ansible_run(
    ansible: Path,
    inventory: Path,
    hosts: list[TestHost],
    parallelism: int,
    directory: Path,
    number: int,
) -> dict:
    # Fresh SSH connections for every run: a ControlPath directory of the run's own.
    control = directory / f"cp-{number}"
    control.mkdir()
    env = {
        **os.environ,
        "ANSIBLE_HOME": str(directory / "ansible-home"),
        "ANSIBLE_LOCAL_TEMP": str(directory / "ansible-local-tmp"),
        "ANSIBLE_HOST_KEY_CHECKING": "False",
        "ANSIBLE_PIPELINING": "1",
        "ANSIBLE_SSH_CONTROL_PATH_DIR": str(control),
        "ANSIBLE_SSH_EXTRA_ARGS": "-o UserKnownHostsFile=/dev/null -o LogLevel=ERROR",
        "ANSIBLE_LOAD_CALLBACK_PLUGINS": "1",
        "ANSIBLE_STDOUT_CALLBACK": "oneline",
        "ANSIBLE_NOCOLOR": "1",
        "ANSIBLE_DEPRECATION_WARNINGS": "0",
    }
    started = time.monotonic()
    completed = subprocess.run(
        [
            str(ansible),
            "all",
            "-i",
            str(inventory),
            "-m",
            "setup",
            "-a",
            "gather_subset=all",
            "--forks",
            str(parallelism),
            "--limit",
            ",".join(h.name for h in hosts),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    wall = time.monotonic() - started
    _stop_control_masters(control)
    # The oneline callback: "NAME | SUCCESS => {json}" or "NAME | UNREACHABLE!: ..." per host.
    errors, facts, succeeded = [], [], set()
    for line in completed.stdout.splitlines():
        name, bar, rest = line.partition(" | ")
        if not bar:
            continue
        if rest.startswith("SUCCESS => "):
            try:
                result = json.loads(rest.removeprefix("SUCCESS => "))
            except ValueError:
                errors.append(f"{name}: unreadable result {rest[:200]}")
                continue
            if result.get("ansible_facts"):
                succeeded.add(name)
                facts.append(len(result["ansible_facts"]))
            else:
                errors.append(f"{name}: no ansible_facts")
        else:
            errors.append(f"{name}: {rest[:300]}")
    for host in hosts:
        if host.name not in succeeded and not any(e.startswith(host.name + ":") for e in errors):
            errors.append(f"{host.name}: no result from ansible")
    if completed.returncode != 0 and not errors:
        errors.append(f"ansible exited {completed.returncode}: {completed.stderr[-500:]}")
    return {
        "wall": wall,
        "facts": statistics.median(facts) if facts else 0,
        "hosts_ok": len(succeeded),
        "errors": sorted(set(errors)),
    }


def _stop_control_masters(control: Path) -> None:
    """End the ControlPersist ssh masters this run left, by their own control sockets."""
    ssh = shutil.which("ssh") or "ssh"
    for socket_path in control.iterdir():
        subprocess.run(
            [ssh, "-o", f"ControlPath={socket_path}", "-O", "exit", "bench"],
            capture_output=True,
            timeout=10,
        )


# --- the run ----------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=20, help="host aliases (default 20)")
    parser.add_argument("--parallelism", type=int, default=10, help="at once (default 10)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each side (default 3)")
    args = parser.parse_args(argv)
    if args.hosts < 1 or args.parallelism < 1 or args.runs < 1:
        parser.error("--hosts, --parallelism and --runs must be at least 1")

    print(
        f"Facts bench: {args.hosts} hosts, parallelism {args.parallelism}, {args.runs} runs "
        f"per side, {os.cpu_count()} CPUs on this machine"
    )
    try:
        ansible = ensure_ansible()
        models = expected_models()
        dumps = sorted(models)
        started = time.monotonic()
        with (
            TestHosts() as test_hosts,
            tempfile.TemporaryDirectory(prefix="perfcase-bench-") as tmp,
        ):
            hosts = [
                test_hosts.start(f"bench-{i:02d}", dump=dumps[(i - 1) % len(dumps)])
                for i in range(1, args.hosts + 1)
            ]
            print(
                f"Started {len(hosts)} sshd test hosts ({hosts[0].address} .. "
                f"{hosts[-1].address}) in {time.monotonic() - started:.2f} s"
            )
            directory = Path(tmp)
            inventory = write_inventory(hosts, test_hosts.client_key_path, directory)

            perfcase, ansible_runs, errors = [], [], []
            for number in range(1, args.runs + 1):
                run = perfcase_run(hosts, args.parallelism, models)
                perfcase.append(run)
                errors += [f"perfcase run {number}: {e}" for e in run["errors"]]
                print(
                    f"  perfcase run {number}: {run['wall']:.2f} s wall, per host median "
                    f"{run['per_host_median']:.3f} s (max {run['per_host_max']:.3f} s), "
                    f"{run['hosts_ok']}/{len(hosts)} hosts with facts "
                    f"({run['facts']:.0f} facts each)"
                )
            for number in range(1, args.runs + 1):
                run = ansible_run(ansible, inventory, hosts, args.parallelism, directory, number)
                ansible_runs.append(run)
                errors += [f"ansible run {number}: {e}" for e in run["errors"]]
                print(
                    f"  ansible  run {number}: {run['wall']:.2f} s wall, "
                    f"{run['hosts_ok']}/{len(hosts)} hosts with facts "
                    f"({run['facts']:.0f} top-level facts each)"
                )

            # For reading the figures: one host at a time, so that neither side waits for the
            # CPU (on this machine the "remote" hosts share its cores with the client).
            alone = hosts[:1]
            perfcase_alone = [perfcase_run(alone, 1, models) for _ in range(args.runs)]
            ansible_alone = [
                ansible_run(ansible, inventory, alone, 1, directory, 100 + number)
                for number in range(args.runs)
            ]
            for run in perfcase_alone + ansible_alone:
                errors += [f"one-host run: {e}" for e in run["errors"]]
    except MissingRealTool as missing:
        print(f"ERROR: the sshd test hosts cannot run here: {missing}", file=sys.stderr)
        return 2
    except (BenchError, TestHostError, subprocess.SubprocessError, OSError) as error:
        print(f"ERROR: {error}", file=sys.stderr)
        return 1

    perfcase_wall = statistics.median(r["wall"] for r in perfcase)
    per_host = statistics.median(r["per_host_median"] for r in perfcase)
    ansible_wall = statistics.median(r["wall"] for r in ansible_runs)
    ratio = ansible_wall / perfcase_wall
    print()
    print(
        f"perfcase: median wall {perfcase_wall:.2f} s for {len(hosts)} hosts "
        f"(per-host median {per_host:.3f} s)"
    )
    print(f"ansible:  median wall {ansible_wall:.2f} s for {len(hosts)} hosts")
    print(f"ratio ansible / perfcase: {ratio:.1f}x")
    alone_perfcase = statistics.median(r["wall"] for r in perfcase_alone)
    alone_ansible = statistics.median(r["wall"] for r in ansible_alone)
    print(
        f"one host alone (median of {args.runs}): perfcase {alone_perfcase:.3f} s, ansible "
        f"{alone_ansible:.3f} s, ratio {alone_ansible / alone_perfcase:.1f}x (information only)"
    )
    verdict = "PASS" if ratio >= TARGET_RATIO else "FAIL"
    print(
        f"{verdict}: target 'at least {TARGET_RATIO:g} times faster than ansible -m setup', "
        f"measured {ratio:.1f} times"
    )
    if errors:
        print(f"\n{len(errors)} error(s):", file=sys.stderr)
        for error in errors:
            print(f"  {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
