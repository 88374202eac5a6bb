"""Collections: one request for evidence, fanned out to a target per host and side.

Requesting and cancelling a collection asks the kind's plan (runs/), so this module sits
above the plans; a target's own lifecycle, which the plans write, is services/targets.py.
"""

import math
from datetime import timedelta

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from django.utils.translation import gettext_noop

from collectors.phrase import Phrase, ngettext_noop
from investigations.choices import (
    CollectionKind,
    EventKind,
    TargetStatus,
)
from investigations.jobs import enqueue
from investigations.kinds import collected_kinds, kind_named
from investigations.models import (
    Collection,
    CollectionTarget,
    EnvironmentMember,
    Investigation,
    Job,
)
from investigations.phrases import with_phrases
from investigations.runs import plan_for
from investigations.selectors.collections import TARGET_JOB
from investigations.services.targets import target_cancel
from investigations.services.timeline import label_phrase, timeline_event_log

QUEUED = Phrase(gettext_noop("queued"))


def collection_time_limit(*, collection: Collection, targets: int) -> int:
    """Seconds the collection's task may run from now: the wait for its planned start, then
    its targets at once, in waves of COLLECTION_PARALLELISM, after the start gate's wait."""
    waves = math.ceil(targets / settings.COLLECTION_PARALLELISM)
    seconds = plan_for(collection.kind).seconds_for(collection.parameters)
    wait = max(0.0, (collection.start_at - timezone.now()).total_seconds())
    return math.ceil(wait) + waves * seconds + settings.SSH_CONNECT_TIMEOUT + 30


def target_deadline_seconds(*, collection: Collection) -> int:
    """Seconds from now a claimed target of the collection may go without a sign of life:
    the wait for its planned start, connecting, its own length (Plan.expected_seconds: the
    seconds it was asked for) and TARGET_GRACE_SECONDS. Its run moves the deadline on while
    it lives (targets_keep_alive); a run whose worker died is failed soon after."""
    seconds = plan_for(collection.kind).expected_seconds(collection.parameters)
    wait = max(0.0, (collection.start_at - timezone.now()).total_seconds())
    return math.ceil(wait) + settings.SSH_CONNECT_TIMEOUT + seconds + settings.TARGET_GRACE_SECONDS


@transaction.atomic
def collection_request(
    *,
    investigation: Investigation,
    user,
    kind: str = CollectionKind.FACTS,
    host_ids=None,
    parameters: dict | None = None,
    queue_run: bool = True,
) -> Collection:
    """Create the collection and its targets, log it, and enqueue the one task that runs
    them all at once (unless `queue_run` is False: the caller queues a task that runs it
    together with others, `perfcase.collections_run`)."""
    keys = [str(each.key) for each in collected_kinds()]
    if kind not in keys:
        choices = ", ".join(keys)
        raise ValidationError({"kind": _("Choose one of: %(choices)s.") % {"choices": choices}})
    plan = plan_for(kind)
    parameters, start_at = plan.schedule(
        investigation=investigation, user=user, parameters=plan.clean(parameters or {})
    )
    members = EnvironmentMember.objects.filter(investigation=investigation).select_related(
        "host", "side"
    )
    if host_ids is None and plan.default_roles is not None:
        members = members.filter(role__in=plan.default_roles)
    if host_ids is not None:
        wanted = set(host_ids)
        members = [m for m in members if m.host_id in wanted]
        missing = wanted - {m.host_id for m in members}
        if missing:
            raise ValidationError(
                {
                    "hosts": _(
                        "Only hosts placed on a side of this investigation can be collected "
                        "from (not: %(hosts)s)."
                    )
                    % {"hosts": ", ".join(map(str, sorted(missing)))}
                }
            )
    # One target per host and side, whatever roles the host has there.
    placements = {(m.host_id, m.side_id): m for m in members}
    if not placements and host_ids is None and plan.default_roles is not None:
        raise ValidationError(
            {
                "hosts": _(
                    "No host has the role %(roles)s on a side: place one, or choose the hosts."
                )
                % {"roles": ", ".join(plan.default_roles)}
            }
        )
    if not placements:
        raise ValidationError({"hosts": _("Place hosts on the sides first.")})
    now = timezone.now()
    collection = Collection.objects.create(
        investigation=investigation,
        kind=kind,
        parameters=parameters,
        requested_by=user,
        start_at=start_at or now + timedelta(milliseconds=settings.COLLECTION_START_DELAY_MS),
    )
    # Until a worker claims them: targets no worker began (their worker was killed before
    # it did, or none runs) are failed by the sweep once the run's own time has passed.
    never_after = collection.start_at + timedelta(
        seconds=collection_time_limit(collection=collection, targets=len(placements))
    )
    work = Job.objects.bulk_create(
        Job(
            kind=TARGET_JOB.name,
            status=TargetStatus.QUEUED,
            requested_by=collection.requested_by,
            deadline_at=never_after,
            created_at=now,
            **with_phrases({"step": QUEUED}),
        )
        for _ in placements
    )
    targets = CollectionTarget.objects.bulk_create(
        CollectionTarget(collection=collection, host=m.host, side=m.side, job=job)
        for m, job in zip(placements.values(), work, strict=True)
    )
    for job, target in zip(work, targets, strict=True):
        job.object_id = target.pk
    Job.objects.bulk_update(work, ["object_id"])
    names = ", ".join(sorted(f"{m.host.name} ({m.side.key.upper()})" for m in placements.values()))
    timeline_event_log(
        investigation=investigation,
        kind=EventKind.COLLECTION,
        summary=Phrase(
            ngettext_noop(
                "%(kind)s requested from %(count)s host: %(hosts)s",
                "%(kind)s requested from %(count)s hosts: %(hosts)s",
            ),
            kind=label_phrase(kind_named(collection.kind).label),
            count=len(targets),
            hosts=names,
        ),
        author=user,
        details={"collection": collection.pk, **parameters},
    )
    if queue_run:
        limit = collection_time_limit(collection=collection, targets=len(targets))
        enqueue(
            "perfcase.collection_run", collection.pk, soft_time_limit=limit, time_limit=limit + 30
        )
    return collection


@transaction.atomic
def collection_cancel(*, collection: Collection, user) -> Collection:
    """Ask a collection to stop: its queued targets end at once, its running ones stop what
    they started on their hosts (the runner looks every second) and end cancelled."""
    collection = Collection.objects.select_for_update().get(pk=collection.pk)
    if collection.completed_at is not None:
        raise ValidationError(_("This collection has already ended."))
    if collection.cancel_requested_at is None:
        collection.cancel_requested_at = timezone.now()
        collection.save(update_fields=["cancel_requested_at"])
        timeline_event_log(
            investigation=collection.investigation,
            kind=EventKind.COLLECTION,
            summary=Phrase(
                gettext_noop("%(kind)s #%(number)s: cancel requested"),
                kind=label_phrase(kind_named(collection.kind).label),
                number=collection.pk,
            ),
            author=user,
            details={"collection": collection.pk},
        )
    for target_id in collection.targets.filter(job__status=TargetStatus.QUEUED).values_list(
        "pk", flat=True
    ):
        target_cancel(target_id=target_id)
    return collection
