"""The one sweep: every kind's work past its deadline fails, whatever the kind, with one
UPDATE of the Job table.

Each service module is imported once (the kinds register themselves on import, as the
plans do in runs/), so a worker whose sweep runs before anything else knows every kind.
"""

import importlib
import pkgutil
from collections import Counter

from django.db import transaction
from django.db.models import Case, JSONField, Q, Value, When
from django.utils import timezone

from investigations.jobs import AFTER_OVERDUE, KINDS, JobKind
from investigations.models import Job

SERVICES = "investigations.services"


def _import_services() -> None:
    package = importlib.import_module(SERVICES)
    for module in pkgutil.iter_modules(package.__path__):
        importlib.import_module(f"{SERVICES}.{module.name}")


def job_kinds() -> dict[str, JobKind]:
    """Every kind of job, by name (each registers beside its reads, which its service
    imports)."""
    _import_services()
    return KINDS


def overdue_jobs():
    """Every kind's jobs still in a status of its own not ended, past their deadline."""
    not_ended = Q()
    for kind in job_kinds().values():
        not_ended |= Q(kind=kind.name, status__in=list(kind.overdue))
    return Job.objects.filter(not_ended, deadline_at__lt=timezone.now())


def fail_overdue() -> Counter:
    """One UPDATE: every overdue job -> its kind's failed status, with the message its
    status calls for. The rows are locked first (skipping those another sweep holds), so
    two sweeps at once fail nothing twice. Then each kind's `after_overdue` with its rows."""
    kinds = job_kinds()
    with transaction.atomic():
        found = list(
            overdue_jobs()
            .select_for_update(skip_locked=True)
            .values_list("pk", "kind", "object_id")
        )
        if not found:
            return Counter()
        messages = [
            (kind.name, status, message)
            for kind in kinds.values()
            for status, message in kind.overdue.items()
        ]
        Job.objects.filter(pk__in=[pk for pk, _, _ in found]).update(
            status=Case(
                *(When(kind=kind.name, then=Value(kind.failed)) for kind in kinds.values())
            ),
            step="failed",
            finished_at=timezone.now(),
            error=Case(
                *(When(kind=k, status=s, then=Value(message)) for k, s, message in messages)
            ),
            phrases=Case(
                *(
                    When(kind=k, status=s, then=Value({"error": [message, {}]}, JSONField()))
                    for k, s, message in messages
                ),
                output_field=JSONField(),
            ),
        )
    failed: dict[str, list[int]] = {}
    for _, kind, object_id in found:
        failed.setdefault(kind, []).append(object_id)
    for kind, object_ids in sorted(failed.items()):
        if kind in AFTER_OVERDUE:
            AFTER_OVERDUE[kind](object_ids)
    return Counter({kind: len(ids) for kind, ids in failed.items()})


def sweep() -> dict[str, int]:
    """Fail what is still queued or running past its deadline, of every kind. {kind: how
    many failed}, every kind named."""
    failed = fail_overdue()
    return {kind: failed.get(kind, 0) for kind in sorted(job_kinds())}
