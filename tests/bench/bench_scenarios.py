"""Diagnosis accuracy on the rebuilt cases: is the injected cause named first?

    python -m tests.bench.bench_scenarios [--cases cpu-governor,same-sides,...] [--runs 1]

Runs the cases of tests/scenarios/cases.py (the very ones the tests run) against the default
stack of `make run` started for the bench (tests/bench/stack.py: its own temporary var dir,
SQLite, the filesystem broker, one worker) and real sshd test hosts (tests/sshd.py; needs
root). Each case: a team, an investigation, a credential and two hosts through the API (keys
scanned by the worker and checked), one difference injected on one side, a diagnosis through
the API with the stages the cause needs, then GET /api/investigations/{id}/hypotheses.

Prints one row per case (expected entry, the entry ranked first and its score, top-1, top-3,
wall time per case and the diagnosis's time per stage), then the accuracy table: top-1,
top-3, wrong causes ranked first, and the time per case. For the case whose sides are the
same, "right" means nothing ranked above the low score (0.3).

Exits 1 on errors (a case that could not run) or a case not named first, 2 when the test
hosts cannot run here.
"""

import argparse
import os
import signal
import statistics
import sys
import time
import traceback
from pathlib import Path


def _terminate(signum, frame):
    # So that a SIGTERM still stops the stack and the test hosts (the `with` blocks).
    raise SystemExit(128 + signum)


class Calls:
    """The stack's API (a fresh HTTP/1.1 connection per request, the bearer token of its
    login) answering (status, body), as run_case takes them."""

    def __init__(self, api):
        self.api = api

    def _call(self, method, path, body=None):
        import http.client
        import json

        from tests.bench.stack import REQUEST_TIMEOUT

        headers = {"Accept": "application/json", "Authorization": f"Bearer {self.api.token}"}
        data = None
        if body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        connection = http.client.HTTPConnection("127.0.0.1", self.api.port, timeout=REQUEST_TIMEOUT)
        try:
            connection.request(method, path, body=data, headers=headers)
            response = connection.getresponse()
            raw = response.read()
        finally:
            connection.close()
        try:
            return response.status, json.loads(raw) if raw else None
        except ValueError:
            return response.status, raw[:1000].decode(errors="replace")

    def get(self, path):
        return self._call("GET", path)

    def post(self, path, body):
        return self._call("POST", path, body)


def _row(outcome) -> str:
    first = f"{outcome.first} ({outcome.ranked[0][1]:.2f})" if outcome.ranked else "nothing"
    stages = ", ".join(f"{name} {seconds:.1f} s" for name, seconds in outcome.stage_seconds.items())
    return (
        f"  {outcome.case:<24} expected {outcome.expected or 'nothing above 0.3':<30} "
        f"first {first:<38} top-1 {'yes' if outcome.top1 else 'NO ':<3} "
        f"top-3 {'yes' if outcome.top3 else 'NO ':<3} {outcome.seconds:5.1f} s ({stages})"
    )


def _why(outcome) -> str:
    """What a case that missed ranked and how its diagnosis's stages ended."""
    stages = "; ".join(
        f"{s['name']} {s['status']}" + (f" ({s['reason']})" if s["reason"] else "")
        for s in outcome.diagnosis["stages"]
        if s["reason"] != "Not asked for."
    )
    return f"ranked {outcome.ranked}; stages: {stages}; compared: {outcome.compared}" + (
        f"; captures: {outcome.captures}" if outcome.captures else ""
    )


def accuracy_table(outcomes: list) -> list[str]:
    count = len(outcomes)
    top1 = sum(o.top1 for o in outcomes)
    top3 = sum(o.top3 for o in outcomes)
    wrong = [o for o in outcomes if o.wrong_first]
    seconds = [o.seconds for o in outcomes]
    lines = [
        "| measure | value |",
        "|---|---|",
        f"| cases | {count} |",
        f"| top-1 (the injected cause ranked first) | {top1}/{count} ({top1 / count:.0%}) |",
        f"| top-3 | {top3}/{count} ({top3 / count:.0%}) |",
        f"| wrong causes ranked first | {len(wrong)}"
        + (f" ({', '.join(f'{o.case}: {o.wrong_first}' for o in wrong)})" if wrong else "")
        + " |",
        f"| time per case (median, worst) | {statistics.median(seconds):.1f} s, "
        f"{max(seconds):.1f} s |",
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    sys.path.insert(0, os.getcwd())
    from tests.bench.stack import Stack, StackError
    from tests.scenarios.cases import CASES, ScenarioError, run_case
    from tests.sshd import MissingRealTool, TestHostError, TestHosts, missing_requirement

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases", default=",".join(CASES), help=f"which (default all: {','.join(CASES)})"
    )
    parser.add_argument("--runs", type=int, default=1, help="runs of each case (default 1)")
    args = parser.parse_args(argv)
    names = [name.strip() for name in args.cases.split(",") if name.strip()]
    unknown = [name for name in names if name not in CASES]
    if unknown or args.runs < 1:
        parser.error(f"unknown cases: {', '.join(unknown)}" if unknown else "--runs: at least 1")
    signal.signal(signal.SIGTERM, _terminate)
    missing = missing_requirement()
    if missing:
        print(f"ERROR: the sshd test hosts cannot run here: {missing}", file=sys.stderr)
        return 2

    print(
        f"Scenario bench: {len(names)} rebuilt cases x {args.runs}, each diagnosed through the "
        f"API of a default stack; {os.cpu_count()} CPUs on this machine, load average "
        f"{os.getloadavg()[0]:.2f}"
    )
    outcomes, errors = [], []
    try:
        with TestHosts() as test_hosts, Stack() as stack:
            api = stack.api()
            api.login("demo", "perfcase-demo")
            print(f"Stack ready in {stack.setup_seconds:.1f} s")
            for run in range(1, args.runs + 1):
                for name in names:
                    started = time.monotonic()
                    try:
                        outcome = run_case(
                            CASES[name], Calls(api), test_hosts, team_name=f"Bench {run}"
                        )
                    except (ScenarioError, StackError, TestHostError, OSError) as error:
                        where = [
                            frame
                            for frame in traceback.extract_tb(error.__traceback__)
                            if "/tests/" in frame.filename
                        ][-1]
                        errors.append(
                            f"{name} (run {run}): {error} "
                            f"({Path(where.filename).name}:{where.lineno} {where.line})"
                        )
                        print(f"  {name:<24} ERROR after {time.monotonic() - started:.1f} s")
                        continue
                    outcomes.append(outcome)
                    print(_row(outcome))
                    if not outcome.top1:
                        print(f"    {_why(outcome)}")
    except MissingRealTool as missing_tool:
        print(f"ERROR: the sshd test hosts cannot run here: {missing_tool}", file=sys.stderr)
        return 2
    except (TestHostError, StackError, OSError) as error:
        print(f"ERROR: {error}", file=sys.stderr)
        return 1

    print()
    if outcomes:
        print("\n".join(accuracy_table(outcomes)))
    if errors:
        print(f"\n{len(errors)} error(s):", file=sys.stderr)
        for error in errors:
            print(f"  {error}", file=sys.stderr)
    return 1 if errors or not all(o.top1 for o in outcomes) else 0


if __name__ == "__main__":
    sys.exit(main())
