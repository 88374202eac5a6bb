"""Running a collection: all its targets at once, from one task.

The task's own thread claims the targets, decides how to reach each host (credentials
decrypted, jump hosts followed), and starts a thread per target (at most
COLLECTION_PARALLELISM at a time). The target threads only talk to the hosts: connect, wait
at the start gate, run the plan. Everything they have to say (progress, the moment they
began, the result) comes back to the task's thread, which alone writes the database: one
writer, a handful of short transactions, and no connection per thread.
"""

import logging
import queue
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings
from django.db import transaction

from collectors.errors import CollectorError
from collectors.phrase import Phrase
from collectors.phrase import gettext_noop as _
from investigations.connections import connector_for
from investigations.models import Collection
from investigations.runs import plan_for
from investigations.runs.base import TargetRun, run_target
from investigations.runs.gate import StartGate, StepGate
from investigations.runs.timings import phase_seconds
from investigations.selectors.collections import collection_cancel_requested
from investigations.services.collections import target_deadline_seconds
from investigations.services.targets import (
    collection_complete_if_done,
    target_cancel,
    target_fail,
    targets_claim,
    targets_keep_alive,
    targets_report,
    targets_resume,
    targets_time,
)

logger = logging.getLogger(__name__)

OUT_OF_TIME = Phrase(_("Gave up: the collection took too long."))
REFRESH_SECONDS = 5
CANCEL_POLL_SECONDS = 1.0
# How often the runner tells that its targets still live (their deadlines move on).
KEEP_ALIVE_SECONDS = 5.0


def run_collection(*, collection_id: int, target_ids=None) -> None:
    """Run the collection's queued targets (or those of `target_ids`) to their end.
    Targets a stopped worker left running are resumed first; run twice, the second run
    finds nothing to claim."""
    collection = Collection.objects.select_related("investigation").get(pk=collection_id)
    plan = plan_for(collection.kind)
    targets_resume(collection_id=collection_id, target_ids=target_ids)
    targets = targets_claim(
        collection_id=collection_id,
        seconds=target_deadline_seconds(collection=collection),
        target_ids=target_ids,
    )
    runs, connectors = [], {}
    for target in targets:
        try:
            connectors[target.pk] = connector_for(target.host)
        except CollectorError as error:
            target_fail(target_id=target.pk, error=error.phrase, attempt=target.attempts)
            continue
        runs.append(target)
    if runs:
        _run_all(plan, collection, runs, connectors)
    collection_complete_if_done(collection_id=collection_id)


def _run_all(plan, collection, targets, connectors) -> None:
    by_id = {target.pk: target for target in targets}
    parallel = min(len(targets), settings.COLLECTION_PARALLELISM)
    gate = StartGate(
        parties=parallel,
        not_before=collection.start_at,
        max_wait=settings.SSH_CONNECT_TIMEOUT + 2,
    )
    steps = StepGate(parties=parallel)
    stop = threading.Event()
    reports: queue.SimpleQueue = queue.SimpleQueue()

    def report(target_id, attempt, **changes):
        reports.put((target_id, attempt, changes))

    # The threads start connecting together once all exist: a thread started while others
    # already run paramiko's handshakes waits its turn for the GIL to start at all.
    go = threading.Event()
    runs = {
        target.pk: TargetRun(
            target_id=target.pk,
            attempt=target.attempts,
            host_name=target.host.name,
            address=target.host.address,
            side=target.side.key,
            parameters=collection.parameters,
            deadline=0.0,  # set when its thread starts
            gate=gate,
            report=report,
            host_id=target.host_id,
            stop=stop,
            steps=steps,
        )
        for target in targets
    }
    pool = ThreadPoolExecutor(max_workers=parallel, thread_name_prefix=f"collect-{collection.pk}")
    pending = {
        pool.submit(run_target, go, plan, runs[target.pk], connectors[target.pk])
        for target in targets
    }
    go.set()
    try:
        unread, last_refresh, last_poll = False, time.monotonic(), time.monotonic()
        cancelling, ended, kept_alive = False, set(), time.monotonic()
        while pending:
            done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
            if time.monotonic() - kept_alive >= KEEP_ALIVE_SECONDS:
                kept_alive = time.monotonic()
                targets_keep_alive(
                    claims=[(t.pk, t.attempts) for t in targets if t.pk not in ended],
                    seconds=settings.TARGET_GRACE_SECONDS,
                )
            if not stop.is_set() and time.monotonic() - last_poll >= CANCEL_POLL_SECONDS:
                last_poll = time.monotonic()
                if collection_cancel_requested(collection_id=collection.pk):
                    cancelling = True
                    stop.set()  # the targets stop what they started and end cancelled
            outcomes = [future.result() for future in done]
            ended |= {outcome.target_id for outcome in outcomes}
            if cancelling:  # nothing that comes back after a cancel is kept
                for outcome in outcomes:
                    if not outcome.error and not outcome.cancelled:
                        plan.discard(outcome.result)
                    outcome.cancelled = True
            # What the ended targets said last is overtaken by their end.
            _write_reports(reports, ended={outcome.target_id for outcome in outcomes})
            if not done:
                continue
            # One transaction a batch: the last batch's targets end in the same commit as
            # the rules and the timeline's "collected", so nobody reads the collection
            # complete without its findings.
            with transaction.atomic():
                stored = {}
                for outcome in outcomes:
                    if not outcome.error and not outcome.cancelled:
                        storing = time.monotonic()
                        plan.store(target=by_id[outcome.target_id], result=outcome.result)
                        stored[outcome.target_id] = time.monotonic() - storing
                        unread = True
                # What reads the results (rules, checklist) runs at the end, and meanwhile
                # at most every REFRESH_SECONDS, so that a slow host does not hold the rest.
                if unread and (not pending or time.monotonic() - last_refresh > REFRESH_SECONDS):
                    plan.refresh(investigation=collection.investigation)
                    unread, last_refresh = False, time.monotonic()
                for outcome in outcomes:
                    if outcome.cancelled:
                        target_cancel(target_id=outcome.target_id, attempt=outcome.attempt)
                    elif outcome.error:
                        target_fail(
                            target_id=outcome.target_id,
                            error=outcome.error,
                            attempt=outcome.attempt,
                        )
                # Where each ended target's time went, with its end (its thread is over).
                targets_time(
                    timings={
                        (outcome.target_id, outcome.attempt): phase_seconds(
                            requested=collection.created_at,
                            claimed=by_id[outcome.target_id].started_at,
                            clock=runs[outcome.target_id].clock,
                            store=stored.get(outcome.target_id, 0.0),
                        )
                        for outcome in outcomes
                    }
                )
                if not pending:
                    collection_complete_if_done(collection_id=collection.pk)
    except SoftTimeLimitExceeded:
        stop.set()
        # The threads still waiting on hosts end by their own command timeouts; whatever
        # they bring back is dropped.
        for target in by_id.values():
            target_fail(target_id=target.pk, error=OUT_OF_TIME, attempt=target.attempts)
    finally:
        pool.shutdown(wait=not pending, cancel_futures=True)


def _write_reports(reports: queue.SimpleQueue, ended: set[int]) -> None:
    """What the target threads said since the last look, the newest per target (of the
    targets that have just ended, only when they began)."""
    latest: dict[tuple[int, int], dict] = {}
    while True:
        try:
            target_id, attempt, changes = reports.get_nowait()
        except queue.Empty:
            break
        if target_id in ended:  # its progress is over; when it began still counts
            changes = {k: v for k, v in changes.items() if k not in ("progress", "step")}
        if changes:
            latest.setdefault((target_id, attempt), {}).update(changes)
    if latest:
        targets_report(reports=latest)
