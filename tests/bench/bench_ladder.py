"""Ladder orchestration: how late each step starts, how far apart the sides start, and what a
step costs beyond its measurement.

    python -m tests.bench.bench_ladder [--steps 5,10,20,40,80] [--step-seconds 2] [--runs 2]

Starts four real sshd test hosts (tests/sshd.py; needs root): a load generator and a service
host on each side, and two loopback HTTP servers (tests/loadservers.py). Each run is a real
ladder with real wrk, vmstat and mpstat over SSH, run by the very code the Celery task runs
(ladder_claim + run_ladder) on a scratch SQLite database of its own; the queueing in front
of the task is left out, as it passes before the first step's planned start.

Per step and side, from the stored rows:

- start skew: |A's real start - B's real start| of the same step (target: under 100 ms),
  where a real start is the moment the side's thread sends the load tool's command (one
  clock for both sides);
- lateness: real start - planned start (the schedule both sides follow);
- overhead: stored - real start - step seconds: the tool's exit, parsing, the samplers'
  last lines and the database write, beyond the measurement itself.

Exits 1 on errors (a ladder that did not complete), 2 when the test hosts cannot run here;
never for missing the target.
"""

import argparse
import logging
import os
import statistics
import sys
import tempfile
import time

TARGET_SKEW_MS = 100.0


def _setup_django(directory: str) -> None:
    os.environ["DATABASE_URL"] = f"sqlite:///{directory}/bench.sqlite3"
    os.environ["PERFCASE_VAR_DIR"] = directory
    os.environ["CELERY_BROKER_URL"] = ""  # the filesystem broker under the scratch directory
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "app.settings")
    import django

    django.setup()
    for noisy in ("paramiko", "kombu"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def _place(test_hosts) -> object:
    """A team, an investigation and the four hosts in place, their keys trusted."""
    from django.contrib.auth import get_user_model

    from investigations.services.hostkeys import host_key_scan, host_key_trust
    from investigations.services.inventory import credential_create, host_create, member_add
    from investigations.services.investigations import investigation_create
    from investigations.services.teams import team_create

    user = get_user_model().objects.create_user(username="bench", password="bench-only")
    team = team_create(user=user, name="Bench")
    investigation = investigation_create(team=team, user=user, title="Ladder bench")
    credential = credential_create(
        team=team, user=user, name="bench", private_key=test_hosts.client_key
    )
    for side in ("a", "b"):
        for role in ("load_generator", "service"):
            test_host = test_hosts.start(f"{role[:4]}-{side}", dump=None)
            host = host_create(
                team=team,
                name=test_host.name,
                address=test_host.address,
                port=test_host.port,
                username=test_host.username,
                credential=credential,
            )
            member_add(investigation=investigation, user=user, host=host, side_key=side, role=role)
            scanned = host_key_scan(host=host)
            host_key_trust(host=host, user=user, fingerprint=scanned.fingerprint)
    return investigation, user


def one_ladder(investigation, user, urls, steps, step_seconds) -> dict:
    from investigations.models import LadderStep
    from investigations.runs.ladder import run_ladder
    from investigations.services.ladder_results import ladder_claim
    from investigations.services.ladders import ladder_request

    # The task this queues goes to the scratch broker, where no worker takes it: the ladder
    # is claimed and run here instead.
    ladder = ladder_request(
        investigation=investigation,
        user=user,
        side_a_url=urls[0],
        side_b_url=urls[1],
        steps=steps,
        step_seconds=step_seconds,
        warmup_seconds=0,
    )
    started = time.monotonic()
    run_ladder(ladder_claim(ladder_id=ladder.pk, seconds=3600))
    wall = time.monotonic() - started
    ladder.refresh_from_db()
    rows = LadderStep.objects.filter(ladder_side__ladder=ladder).select_related(
        "ladder_side__side"
    )
    by_step: dict[int, dict[str, LadderStep]] = {}
    for step in rows:
        by_step.setdefault(step.index, {})[step.ladder_side.side.key] = step
    skew, lateness, overhead = [], [], []
    for sides in by_step.values():
        if len(sides) == 2:
            skew.append(abs((sides["a"].started_at - sides["b"].started_at).total_seconds()))
        for step in sides.values():
            lateness.append((step.started_at - step.planned_at).total_seconds())
            overhead.append(
                (step.recorded_at - step.started_at).total_seconds() - ladder.step_seconds
            )
    errors = [
        f"side {side.side.key}: {side.status} {side.error}".strip()
        for side in ladder.sides.select_related("side")
        if side.status != "completed" or side.steps.count() != len(steps)
    ]
    return {
        "status": ladder.status,
        "wall": wall,
        "skew": skew,
        "lateness": lateness,
        "overhead": overhead,
        "errors": errors,
    }


def _ms(values: list[float]) -> str:
    if not values:
        return "no data"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return (
        f"median {statistics.median(values) * 1000:.1f} ms, p95 {p95 * 1000:.1f} ms, "
        f"max {max(values) * 1000:.1f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", default="5,10,20,40,80", help="loads (default 5,10,20,40,80)")
    parser.add_argument("--step-seconds", type=int, default=2, help="per step (default 2)")
    parser.add_argument("--runs", type=int, default=2, help="ladders (default 2)")
    args = parser.parse_args(argv)
    try:
        steps = [int(word) for word in args.steps.split(",")]
    except ValueError:
        parser.error("--steps: whole numbers separated by commas")
    if args.runs < 1 or args.step_seconds < 1:
        parser.error("--runs and --step-seconds must be at least 1")

    sys.path.insert(0, os.getcwd())
    from tests.loadservers import http_server
    from tests.sshd import MissingRealTool, TestHostError, TestHosts

    print(
        f"Ladder bench: {args.runs} ladders of {len(steps)} steps ({args.steps}) x "
        f"{args.step_seconds} s with wrk, vmstat and mpstat over SSH, "
        f"{os.cpu_count()} CPUs on this machine"
    )
    runs = []
    try:
        with (
            tempfile.TemporaryDirectory(prefix="perfcase-bench-") as directory,
            TestHosts() as test_hosts,
            http_server(wait_ms=5) as side_a,
            http_server(wait_ms=5) as side_b,
        ):
            _setup_django(directory)
            investigation, user = _place(test_hosts)
            for number in range(1, args.runs + 1):
                run = one_ladder(investigation, user, (side_a, side_b), steps, args.step_seconds)
                runs.append(run)
                print(
                    f"  ladder {number}: {run['status']} in {run['wall']:.1f} s; "
                    f"start skew {_ms(run['skew'])}"
                )
    except MissingRealTool as missing:
        print(f"ERROR: the sshd test hosts cannot run here: {missing}", file=sys.stderr)
        return 2
    except (TestHostError, OSError) as error:
        print(f"ERROR: {error}", file=sys.stderr)
        return 1

    skew = [value for run in runs for value in run["skew"]]
    lateness = [value for run in runs for value in run["lateness"]]
    overhead = [value for run in runs for value in run["overhead"]]
    print()
    print(f"A/B start skew ({len(skew)} steps):     {_ms(skew)}")
    print(f"start after the planned time:     {_ms(lateness)}")
    print(f"per-step orchestration overhead:  {_ms(overhead)}")
    worst = max(skew, default=float("inf")) * 1000
    verdict = "PASS" if worst < TARGET_SKEW_MS else "FAIL"
    print(f"{verdict}: target 'A/B start skew under {TARGET_SKEW_MS:g} ms', worst {worst:.1f} ms")
    errors = [f"ladder {n}: {e}" for n, run in enumerate(runs, 1) for e in run["errors"]]
    if errors:
        print(f"\n{len(errors)} error(s):", file=sys.stderr)
        for error in errors:
            print(f"  {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
