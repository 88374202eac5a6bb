"""Host facts from many hosts: Perfcase end to end, through the API of a running default
stack, against `ansible -m setup`.

    python -m tests.bench.bench_facts [--hosts 20] [--runs 3] [--parallelism 10] [--engine]

Starts the host aliases as real sshd test hosts (tests/sshd.py; needs root), each presenting
one of the fixtures/hosts/ machines, then in the same run:

- Perfcase as a user runs it: the default stack of `make run` (migrate, load_demo, runstack:
  the web server and one Celery worker of concurrency 2, SQLite and the filesystem broker),
  started in a temporary directory on a free loopback port (tests/bench/stack.py). Through
  its JSON API only, as the demo user: a team, an investigation, a credential with the test
  hosts' key, the hosts (each host key scanned, compared with the one the host has, and
  trusted), half of them on side a and half on side b as "service". Each run posts a
  facts collection and polls GET /api/collections/{id} every 50 ms; its time is from the
  POST to the poll that sees it completed. Then every host's facts are read back through
  GET /api/investigations/{id}/facts and checked. The stack is stopped before ansible runs.
- Its start skew: from each run's targets, max(began_at) - min(began_at) over all targets,
  and earliest A against earliest B (began_at: when a target's probe script started; where
  the API gives none, started_at, and the output says so). Target: under 50 ms.
- Ansible: `ansible all -m setup -a gather_subset=all` with the same hosts, user and key,
  pipelining on, forks = --parallelism, by default one per host as a user would give it
  (ansible-core is pip-installed into this venv on demand; it is not a dependency of
  Perfcase).
- With --engine, also Perfcase's engine alone (no web, no worker, no database): one
  collectors.ssh.Connection per host, collect_facts + parse_facts, at most --parallelism
  hosts at a time, and the engine and ansible on one host alone, for comparison.

Every host's facts are checked: each probe that must work worked, and cpu.model is the
model of the machine the host presents. The median times of --runs runs are compared
against the target "at least 10 times faster than ansible -m setup", and the worst run's
start skew over all targets against "under 50 ms" (median and worst are printed for both
skews).
Exits 1 on errors (a host without facts, a collection or ansible failing), 2 when the test
hosts cannot run here; never for missing a target.
"""

import argparse
import io
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime
from pathlib import Path

from collectors.facts import collect_facts, parse_facts
from collectors.ssh import Connection
from tests.bench.stack import Api, Stack, StackError
from tests.sshd import (
    DUMPS,
    MissingRealTool,
    TestHost,
    TestHostError,
    TestHosts,
    available_dumps,
)

TARGET_RATIO = 10.0
TARGET_SKEW_MS = 50.0
POLL_SECONDS = 0.05
# Longer than a facts collection may take (PERFCASE_FACTS_TIMEOUT 90 s, plus connecting).
COLLECTION_TIMEOUT = 300.0
REQUIRED_PROBES = ("uname", "cpuinfo", "cpu_topology", "cpufreq", "meminfo")
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


def facts_problem(
    probes: dict[str, tuple[str, str]], facts: dict, dump: str | None, models: dict[str, str]
) -> str | None:
    """Why a host's facts are not good, or None. probes: {name: (status, reason)}."""
    failed = [n for n in REQUIRED_PROBES if probes.get(n, ("missing", ""))[0] != "ok"]
    failed += [n for n, (status, _) in probes.items() if status in ("unparseable", "missing")]
    if failed:
        return "probes not ok: " + ", ".join(
            f"{n} ({probes.get(n, ('missing', 'not reported'))[1]})" for n in dict.fromkeys(failed)
        )
    model = " ".join(str(facts.get("cpu.model", "")).split())
    if dump and model != models[dump]:
        return f"cpu.model is {model!r}, the host presents {models[dump]!r}"
    return None


# --- Perfcase through the API of the running stack -------------------------------------------


def api_place(api: Api, hosts: list[TestHost], client_key: str) -> dict:
    """Team, investigation, credential and hosts through the API, keys scanned and trusted;
    the first half of the hosts on side a, the rest on side b. {host id: TestHost} and ids."""
    team = api.post("/api/teams", {"name": "Facts bench"})["id"]
    investigation = api.post(
        "/api/investigations",
        {
            "team": team,
            "title": f"Facts bench: {len(hosts)} hosts",
            "side_a_label": "A",
            "side_b_label": "B",
        },
    )["id"]
    credential = api.post(
        "/api/credentials", {"team": team, "name": "bench key", "private_key": client_key}
    )["id"]
    by_id = {}
    half = (len(hosts) + 1) // 2
    for number, host in enumerate(hosts):
        host_id = api.post(
            "/api/hosts",
            {
                "team": team,
                "name": host.name,
                "address": host.address,
                "port": host.port,
                "username": host.username,
                "credential": credential,
            },
        )["id"]
        # A worker scans (202): poll for its end.
        api.post(f"/api/hosts/{host_id}/host-key/scan", expect=(202,))
        deadline = time.monotonic() + 60
        while (scanned := api.get(f"/api/hosts/{host_id}/host-key/scan"))["status"] not in (
            "done",
            "failed",
        ):
            if time.monotonic() > deadline:
                raise BenchError(f"{host.name}: the host key scan did not end in 60 s")
            time.sleep(0.1)
        # What a careful user does: compare with the key the host itself has.
        if scanned["fingerprint"] != host.host_key.fingerprint:
            raise BenchError(
                f"{host.name}: the scan found {scanned['fingerprint']}, the host has "
                f"{host.host_key.fingerprint}"
            )
        api.post(f"/api/hosts/{host_id}/host-key/trust", {"fingerprint": scanned["fingerprint"]})
        api.post(
            f"/api/investigations/{investigation}/members",
            {"host": host_id, "side": "a" if number < half else "b", "role": "service"},
        )
        by_id[host_id] = host
    return {"investigation": investigation, "hosts": by_id}


def _when(value: str | None) -> datetime | None:
    return datetime.fromisoformat(value) if value else None


def start_skew(targets: list[dict]) -> dict:
    """The spread of the targets' starts (ms): over all of them, and earliest A against
    earliest B; from began_at, or started_at where the API gives no began_at."""
    field = "began_at"
    starts = [(t["side"], _when(t.get("began_at"))) for t in targets]
    if not any(when for _, when in starts):
        field = "started_at"
        note = (
            "no began_at field" if not any("began_at" in t for t in targets) else "began_at empty"
        )
        starts = [(t["side"], _when(t.get("started_at"))) for t in targets]
    else:
        note = ""
    starts = [(side, when) for side, when in starts if when]
    result = {"field": field, "note": note, "counted": len(starts), "all_ms": None, "ab_ms": None}
    if starts:
        times = [when for _, when in starts]
        result["all_ms"] = (max(times) - min(times)).total_seconds() * 1000
        first = {}
        for side, when in starts:
            first[side] = min(when, first.get(side, when))
        if "a" in first and "b" in first:
            result["ab_ms"] = abs((first["a"] - first["b"]).total_seconds()) * 1000
    return result


def api_run(api: Api, placed: dict, models: dict[str, str]) -> dict:
    """One facts collection as a user runs it: POST, poll every 50 ms, read the facts back."""
    investigation, hosts = placed["investigation"], placed["hosts"]
    errors = []
    started = time.monotonic()
    collection = api.post(f"/api/investigations/{investigation}/collections", {"kind": "facts"})
    polls, next_poll = 0, started + POLL_SECONDS
    while True:
        time.sleep(max(0.0, next_poll - time.monotonic()))
        answer = api.get(f"/api/collections/{collection['id']}")
        polls += 1
        if answer["status"] in ("completed", "failed"):
            wall = time.monotonic() - started
            break
        if time.monotonic() - started > COLLECTION_TIMEOUT:
            wall = float("nan")
            errors.append(
                f"collection {collection['id']} still {answer['status']} after "
                f"{COLLECTION_TIMEOUT:g} s"
            )
            break
        next_poll = max(next_poll + POLL_SECONDS, time.monotonic())
    targets = answer["targets"]
    if answer["status"] == "failed":
        errors.append(f"collection {collection['id']} failed")
    by_host = {t["host"]: t for t in targets}
    facts = {row["host"]: row for row in api.get(f"/api/investigations/{investigation}/facts")}
    created = _when(collection["created_at"])
    ok, counts = 0, []
    for host_id, host in hosts.items():
        target, row = by_host.get(host_id), facts.get(host_id)
        if target is None:
            problem = "no target in the collection"
        elif target["status"] != "succeeded":
            problem = f"target {target['status']}: {target['error'] or target['step']}"
        elif row is None:
            problem = "no facts"
        elif _when(row["collected_at"]) < created:
            problem = f"the latest facts ({row['collected_at']}) are older than the collection"
        else:
            probes = {
                n: (p.get("status", ""), p.get("reason", "")) for n, p in row["probes"].items()
            }
            problem = facts_problem(probes, row["facts"], host.dump, models)
        if problem:
            errors.append(f"{host.name}: {problem}")
        else:
            ok += 1
            counts.append(len(row["facts"]))
    began = [_when(t.get("began_at") or t.get("started_at")) for t in targets]
    began = [b for b in began if b]
    finished = [f for f in (_when(t.get("finished_at")) for t in targets) if f]
    return {
        "id": collection["id"],
        "wall": wall,
        "polls": polls,
        "status": answer["status"],
        "skew": start_skew(targets),
        # Where the time went, on the server's clock: queue and connect, then the probes.
        "to_first_start": (min(began) - created).total_seconds() if began else float("nan"),
        "starts_to_last_end": (max(finished) - min(began)).total_seconds()
        if began and finished
        else float("nan"),
        "facts": statistics.median(counts) if counts else 0,
        # Where each target's time went, as the API gives it ({phase: seconds}).
        "timings": [t.get("timings") or {} for t in targets],
        "hosts_ok": ok,
        "errors": errors,
    }


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1f} ms"


PHASES = ("queue", "connect", "wait", "probe", "parse", "store")


def timings_table(runs: list[dict]) -> list[str]:
    """Per phase, the median and max over every target of the runs (the API's `timings`)."""
    timings = [t for run in runs for t in run["timings"] if t]
    if not timings:
        return ["  where the time went: the API gave no target timings"]
    lines = [
        f"  where the time went, per host ({len(timings)} targets of {len(runs)} runs, "
        f"seconds from GET /api/collections/{{id}}):",
        f"    {'phase':<8} {'median':>8} {'max':>8}",
    ]
    for phase in PHASES + tuple(sorted({p for t in timings for p in t} - set(PHASES))):
        values = [t[phase] for t in timings if phase in t]
        if values:
            lines.append(f"    {phase:<8} {statistics.median(values):>8.3f} {max(values):>8.3f}")
    return lines


def api_half(stack: Stack, hosts: list[TestHost], client_key: str, runs: int, models) -> list:
    """Set the hosts up through the API of the running stack, then time `runs` collections."""
    print(
        f"Started the default stack (migrate, load_demo, runstack) on 127.0.0.1:{stack.port} "
        f"in {stack.setup_seconds:.2f} s, var dir {stack.var_dir}"
        + (f"; left out of its environment: {', '.join(stack.dropped)}" if stack.dropped else "")
    )
    api = stack.api()
    placing = time.monotonic()
    api.login("demo", "perfcase-demo")
    placed = api_place(api, hosts, client_key)
    print(
        f"Through the API: team, investigation, credential, {len(hosts)} hosts scanned, "
        f"trusted and placed in {time.monotonic() - placing:.2f} s"
    )
    done = []
    for number in range(1, runs + 1):
        load = os.getloadavg()[0]
        run = api_run(api, placed, models)
        done.append(run)
        skew = run["skew"]
        print(
            f"  api      run {number}: {run['wall']:.2f} s POST to completed ({run['polls']} "
            f"polls), {run['hosts_ok']}/{len(hosts)} hosts with facts ({run['facts']:.0f} facts "
            f"each); start skew all {_ms(skew['all_ms'])}, A/B {_ms(skew['ab_ms'])} "
            f"({skew['field']}{', ' + skew['note'] if skew['note'] else ''}, "
            f"{skew['counted']} targets); server: {run['to_first_start']:.2f} s to the first "
            f"start, {run['starts_to_last_end']:.2f} s to the last end; load {load:.2f}"
        )
        if run["status"] != "completed" or run["errors"]:
            print("  the stack's log ends:\n" + stack.log_tail(30))
    print("\n".join(timings_table(done)))
    return done


# --- Perfcase's engine alone (--engine) -------------------------------------------------------


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
    probes = {n: (p.status, p.reason) for n, p in snapshot.probes.items()}
    return facts_problem(probes, snapshot.facts, host.dump, models)


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


def _terminate(signum, frame):
    # So that a SIGTERM still stops the stack and the test hosts (the `with` blocks).
    raise SystemExit(128 + signum)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hosts", type=int, default=20, help="host aliases (default 20)")
    parser.add_argument(
        "--parallelism",
        type=int,
        default=None,
        help="ansible's forks and the engine's threads (default: as many as there are hosts, "
        "as a user would give ansible); the stack uses its own",
    )
    parser.add_argument("--runs", type=int, default=3, help="runs of each side (default 3)")
    parser.add_argument(
        "--engine",
        action="store_true",
        help="also time Perfcase's engine alone (no web, worker or database), as before",
    )
    args = parser.parse_args(argv)
    args.parallelism = args.parallelism or args.hosts
    if args.hosts < 1 or args.parallelism < 1 or args.runs < 1:
        parser.error("--hosts, --parallelism and --runs must be at least 1")
    signal.signal(signal.SIGTERM, _terminate)

    print(
        f"Facts bench: {args.hosts} hosts, {args.runs} runs per side, ansible forks "
        f"{args.parallelism}, {os.cpu_count()} CPUs on this machine, load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    api_runs, ansible_runs, engine, engine_alone, ansible_alone, errors = [], [], [], [], [], []
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

            with Stack() as stack:
                try:
                    api_runs = api_half(stack, hosts, test_hosts.client_key, args.runs, models)
                except (BenchError, StackError):
                    print("The stack's log ends:\n" + stack.log_tail(30), file=sys.stderr)
                    raise
            for number, run in enumerate(api_runs, 1):
                errors += [f"api run {number}: {e}" for e in run["errors"]]

            for number in range(1, args.runs + 1):
                run = ansible_run(ansible, inventory, hosts, args.parallelism, directory, number)
                ansible_runs.append(run)
                errors += [f"ansible run {number}: {e}" for e in run["errors"]]
                print(
                    f"  ansible  run {number}: {run['wall']:.2f} s wall, "
                    f"{run['hosts_ok']}/{len(hosts)} hosts with facts "
                    f"({run['facts']:.0f} top-level facts each)"
                )

            if args.engine:
                for number in range(1, args.runs + 1):
                    run = perfcase_run(hosts, args.parallelism, models)
                    engine.append(run)
                    errors += [f"engine run {number}: {e}" for e in run["errors"]]
                    print(
                        f"  engine   run {number}: {run['wall']:.2f} s wall, per host median "
                        f"{run['per_host_median']:.3f} s (max {run['per_host_max']:.3f} s), "
                        f"{run['hosts_ok']}/{len(hosts)} hosts with facts "
                        f"({run['facts']:.0f} facts each)"
                    )
                # For reading the figures: one host at a time, so that neither side waits for
                # the CPU (on this machine the "remote" hosts share its cores with the client).
                alone = hosts[:1]
                engine_alone = [perfcase_run(alone, 1, models) for _ in range(args.runs)]
                ansible_alone = [
                    ansible_run(ansible, inventory, alone, 1, directory, 100 + number)
                    for number in range(args.runs)
                ]
                for run in engine_alone + ansible_alone:
                    errors += [f"one-host run: {e}" for e in run["errors"]]
    except MissingRealTool as missing:
        print(f"ERROR: the sshd test hosts cannot run here: {missing}", file=sys.stderr)
        return 2
    except (BenchError, StackError, TestHostError, subprocess.SubprocessError, OSError) as error:
        print(f"ERROR: {error}", file=sys.stderr)
        return 1

    print()
    timed = [r for r in api_runs if r["wall"] == r["wall"]]
    ansible_wall = statistics.median(r["wall"] for r in ansible_runs)
    print(f"ansible:  median wall {ansible_wall:.2f} s for {len(hosts)} hosts")
    if timed:
        api_wall = statistics.median(r["wall"] for r in timed)
        ratio = ansible_wall / api_wall
        print(
            f"perfcase: median {api_wall:.2f} s for {len(hosts)} hosts through the API of the "
            f"running stack (POST to the poll that saw it completed)"
        )
        print(f"ratio ansible / perfcase: {ratio:.1f}x")
    else:
        ratio = None
        print("perfcase: no collection completed, no time to compare")
    if args.engine:
        engine_wall = statistics.median(r["wall"] for r in engine)
        per_host = statistics.median(r["per_host_median"] for r in engine)
        print(
            f"engine alone (no web, worker or database, {args.parallelism} at a time): median "
            f"wall {engine_wall:.2f} s (per-host median {per_host:.3f} s), ratio ansible / "
            f"engine {ansible_wall / engine_wall:.1f}x (information only)"
        )
        alone_engine = statistics.median(r["wall"] for r in engine_alone)
        alone_ansible = statistics.median(r["wall"] for r in ansible_alone)
        print(
            f"one host alone (median of {args.runs}): engine {alone_engine:.3f} s, ansible "
            f"{alone_ansible:.3f} s, ratio {alone_ansible / alone_engine:.1f}x (information only)"
        )

    if ratio is not None:
        verdict = "PASS" if ratio >= TARGET_RATIO else "FAIL"
        print(
            f"{verdict}: target 'at least {TARGET_RATIO:g} times faster than ansible -m setup', "
            f"measured {ratio:.1f} times"
        )
    skews = [r["skew"] for r in api_runs if r["skew"]["all_ms"] is not None]
    if skews:
        fields = sorted({s["field"] for s in skews})
        spread = [s["all_ms"] for s in skews]
        ab = [s["ab_ms"] for s in skews if s["ab_ms"] is not None]
        worst = max(spread)
        verdict = "PASS" if worst < TARGET_SKEW_MS else "FAIL"
        print(
            f"{verdict}: target 'start skew of one collection under {TARGET_SKEW_MS:g} ms', "
            f"over all {len(hosts)} targets: median {statistics.median(spread):.1f} ms, worst "
            f"{worst:.1f} ms"
            + (
                f"; earliest A against earliest B: median {statistics.median(ab):.1f} ms, "
                f"worst {max(ab):.1f} ms"
                if ab
                else "; no A/B pair (one side only)"
            )
            + f" (from {'/'.join(fields)}; the API gives times to the millisecond)"
        )
        if "started_at" in fields:
            print(
                "  note: the API gave no began_at, so the skew is of started_at (when each "
                "target was claimed), not of the probes' start"
            )
    else:
        print("start skew: no target started, nothing to measure")
    if errors:
        print(f"\n{len(errors)} error(s):", file=sys.stderr)
        for error in errors:
            print(f"  {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
