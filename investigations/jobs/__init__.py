"""Background work, of every kind, as one Job row (models/jobs.py) and one set of functions.

A kind (a host-key scan, a webhook delivery, ...) is one `JobKind`, registered beside its
reads (its selectors module): the statuses it uses while its work is not ended and the
message the sweep writes for each. What else ends with work the sweep failed (a collection
whose last target it was) its service says with `@after_overdue(kind)`. The kind's row
points at its Job with a one-to-one `job`; reads go through it (`select_related("job")`).

The lifecycle, whatever the kind:
- `create`: the Job, in the kind's first status; `enqueue` queues its task by the task's
  name once the transaction commits (tasks.py registers the names), so no service imports
  the task module, which imports the services.
- `claim`: a conditional UPDATE (status in the statuses it may be claimed from), counting
  the claim in `attempts`: two workers never both claim, and every later write names the
  claim it comes from, so a superseded run changes nothing.
- `progress`, `finish`, `cancel`: conditional UPDATEs too.
- the sweep (jobs/sweeper.py): one UPDATE fails every kind's work past its deadline.

Reads show overdue work as failed without writing (`is_overdue`, `read_job`): the sweep
records it within SWEEP_SECONDS, and a page must not wait for it.
"""

from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from celery import current_app
from django.db import transaction
from django.db.models import F, Q
from django.utils import timezone

from collectors.phrase import Phrase, as_phrase
from investigations.models import Job
from investigations.models.jobs import ACTIVE_STATUSES
from investigations.phrases import with_phrases


@dataclass(frozen=True)
class JobKind:
    """What the jobs module knows of a kind of work."""

    name: str
    # Each status of the kind's work not yet ended -> the message (a gettext_noop template)
    # written when it is found past its deadline. Every one is in ACTIVE_STATUSES.
    overdue: dict[str, str]
    # The status work past its deadline ends in.
    failed: str = "failed"


KINDS: dict[str, JobKind] = {}
# kind -> called with the ids of the kind's rows (Job.object_id) the sweep failed, after it
# did: what ends with them.
AFTER_OVERDUE: dict[str, Callable[[list[int]], None]] = {}


def register(kind: JobKind) -> JobKind:
    """Make a kind known to the sweep (its selectors module does, on import)."""
    unknown = set(kind.overdue) - set(ACTIVE_STATUSES)
    if unknown:  # the sweep's index reads the active statuses only
        raise ValueError(f"{kind.name}: {sorted(unknown)} not in models.jobs.ACTIVE_STATUSES")
    KINDS[kind.name] = kind
    return kind


def after_overdue(kind: str):
    """Decorator: `(object_ids) -> None` runs after the sweep failed these rows' jobs."""

    def register_hook(function: Callable[[list[int]], None]):
        AFTER_OVERDUE[kind] = function
        return function

    return register_hook


def enqueue(task_name: str, *args, **options) -> None:
    """Queue the task named `task_name` with `args` once the current transaction commits
    (at once outside one), so that the worker reads committed rows. `options` are
    apply_async's (soft_time_limit, time_limit, countdown); without them the task's own
    limits hold."""
    transaction.on_commit(lambda: current_app.send_task(task_name, args=list(args), **options))


def create(
    kind: str,
    *,
    object_id: int | None = None,
    status: str,
    user=None,
    deadline_at: datetime | None = None,
    **fields,
) -> Job:
    """A new Job of `kind` for the row `object_id`, in `status`, asked for by `user`."""
    return Job.objects.create(
        kind=kind,
        object_id=object_id,
        status=status,
        requested_by=user if user is not None and user.is_authenticated else None,
        deadline_at=deadline_at,
        **fields,
    )


def _errors(error: "str | Phrase | None") -> dict:
    """The fields that say `error`: none for None, cleared for ""."""
    if error is None:
        return {}
    if not error:
        return {"error": "", "phrases": {}}
    return with_phrases({"error": as_phrase(error)}, limits={"error": 4000})


def claim(
    job_id: int,
    *,
    status: str,
    claimable: Iterable[str],
    seconds: int | None = None,
    also: Q | None = None,
    **fields,
) -> int | None:
    """The job -> `status` if it is in one of the `claimable` statuses (or matches `also`),
    counting the claim: its number (the job's `attempts`), or None if another worker has it
    or it ended. With `seconds`, its deadline is that far from now."""
    now = timezone.now()
    where = Q(status__in=list(claimable))
    if also is not None:
        where |= also
    changes = {"status": status, "began_at": now, "attempts": F("attempts") + 1, **fields}
    if seconds is not None:
        changes["deadline_at"] = now + timedelta(seconds=seconds)
    with transaction.atomic():
        if not Job.objects.filter(where, pk=job_id).update(**changes):
            return None
        return Job.objects.filter(pk=job_id).values_list("attempts", flat=True).get()


def progress(
    job_id: int,
    *,
    attempt: int | None = None,
    active: Iterable[str] = ACTIVE_STATUSES,
    percent: int | None = None,
    step: "str | Phrase | None" = None,
) -> bool:
    """How far the job is (its percent, its step), from the claim `attempt` only."""
    changes: dict = {}
    if percent is not None:
        changes["progress"] = percent
    if step is not None:
        changes.update(with_phrases({"step": as_phrase(step)}, limits={"step": 200}))
    jobs = Job.objects.filter(pk=job_id, status__in=list(active))
    if attempt is not None:
        jobs = jobs.filter(attempts=attempt)
    return bool(changes) and bool(jobs.update(**changes))


def finish(
    job_id: int,
    *,
    status: str,
    attempt: int | None = None,
    active: Iterable[str] = ACTIVE_STATUSES,
    error: "str | Phrase | None" = None,
    **fields,
) -> bool:
    """The job, if still in one of its `active` statuses (and under the claim `attempt`),
    ends in `status`, with `error` (a Phrase is read in each person's language). Whether it
    did: run twice, the second finds it ended."""
    jobs = Job.objects.filter(pk=job_id, status__in=list(active))
    if attempt is not None:
        jobs = jobs.filter(attempts=attempt)
    changes = {"finished_at": timezone.now(), **_errors(error), **fields}
    return bool(jobs.update(status=status, **changes))


def cancel(job_id: int) -> bool:
    """Ask the job's worker to stop: it reads `cancel_requested_at` and ends cancelled."""
    return bool(
        Job.objects.filter(
            pk=job_id, status__in=ACTIVE_STATUSES, cancel_requested_at__isnull=True
        ).update(cancel_requested_at=timezone.now())
    )


def is_overdue(
    *, status: str, deadline_at: datetime | None, active: Collection[str], now=None
) -> bool:
    """Work still in one of its `active` statuses past its deadline: its worker is gone
    (killed or hung). The rule every read shares with the sweep."""
    return status in active and deadline_at is not None and deadline_at < (now or timezone.now())


def read_job(job: Job | None, kind: JobKind, now=None) -> Job | None:
    """The job, read as failed if it is overdue (with the message the sweep will write).
    Only the loaded object changes: a read never writes."""
    if job is not None and is_overdue(
        status=job.status, deadline_at=job.deadline_at, active=kind.overdue, now=now
    ):
        message = kind.overdue[job.status]
        job.status, job.error = kind.failed, message
        job.phrases = {**(job.phrases or {}), "error": [message, {}]}
    return job


def keep_alive(job_id: int, *, attempt: int, seconds: int) -> bool:
    """The claim `attempt` is alive: its deadline moves to `seconds` from now (a job that
    waits on other work, such as a diagnosis on its stages, says so with every look)."""
    return bool(
        Job.objects.filter(pk=job_id, attempts=attempt, status__in=ACTIVE_STATUSES).update(
            deadline_at=timezone.now() + timedelta(seconds=seconds)
        )
    )
