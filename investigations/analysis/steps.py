"""What one ladder step says on its own, and what a ladder's sides add up to.

Pure: a step's numbers and the ladder's stop rule in, a verdict out; host samples in, the
step's CPU out.
"""

from django.utils.translation import gettext_noop as _

from collectors.parsers.sampling import average, average_per_cpu, busiest_cpu
from collectors.phrase import Phrase
from investigations.choices import ENDED_LADDER_STATUSES, LadderStatus


def breaking_reason(ladder, step) -> Phrase | None:
    """Why a step passes the ladder's stop rule (error rate, p99), or None."""
    if step.error_rate > ladder.stop_error_rate:
        return Phrase(
            _("%(rate)s of requests failed (limit %(limit)s)"),
            rate=f"{step.error_rate:.1%}",
            limit=f"{ladder.stop_error_rate:.1%}",
        )
    p99 = step.latency_ms.get("p99")
    if ladder.stop_p99_ms is not None and p99 is not None and p99 > ladder.stop_p99_ms:
        return Phrase(
            _("p99 %(p99)s ms (limit %(limit)s ms)"),
            p99=f"{p99:,.1f}",
            limit=f"{ladder.stop_p99_ms:,g}",
        )
    return None


def cpu_average(samples) -> dict:
    """The mean over the service hosts of each host's vmstat means, and the busiest single
    CPU of any of them (mpstat). `samples` are (host, tool, series)."""
    per_host = [average(series) for _, tool, series in samples if tool == "vmstat" and series]
    cpu = {}
    if per_host:
        keys = per_host[0].keys()
        cpu = {key: round(sum(h.get(key, 0) for h in per_host) / len(per_host), 2) for key in keys}
    busiest = [
        (found[1], found[0], host.name)
        for host, tool, series in samples
        if tool == "mpstat" and (found := busiest_cpu(average_per_cpu(series)))
    ]
    if busiest:
        busy, name, host = max(busiest)
        cpu["busiest_cpu"] = {"host": host, "cpu": name, "busy": busy}
    return cpu


def generator_busy(samples) -> float | None:
    """How busy the load generator's CPUs were over the step (100 - vmstat's idle, in %),
    from its (host, tool, series) samples; None without a vmstat series."""
    means = [average(series) for _, tool, series in samples if tool == "vmstat" and series]
    idle = [mean["id"] for mean in means if "id" in mean]
    return round(100 - sum(idle) / len(idle), 1) if idle else None


# A side that began a step this much after its planned moment gets a sentence saying why.
LATE_START_MS = 500.0
# A load generator this busy over the step was saturated: it starts and stops its load tool
# late, and may send less than the load asked.
SATURATED_PERCENT = 90.0


def late_start(*, load: str, a, b) -> Phrase | None:
    """Why the later side of a step began late, from what was measured: its lateness, the
    other side's, and its load generator's CPU over the step (its `cpu["generator"]`). None
    when both began within LATE_START_MS of their planned moment."""
    late = {key: step for key, step in (("a", a), ("b", b)) if step and step.lateness_ms}
    if not late:
        return None
    key = max(late, key=lambda k: late[k].lateness_ms)
    step = late[key]
    if step.lateness_ms < LATE_START_MS:
        return None
    values = {
        "side": key.upper(),
        "load": load,
        "late": f"{step.lateness_ms:,.0f}",
    }
    generator = (step.cpu or {}).get("generator") or {}
    busy = generator.get("busy")
    if busy is None:
        return Phrase(
            _(
                "At load %(load)s side %(side)s began %(late)s ms late; no CPU samples of its "
                "load generator say whether it was saturated."
            ),
            **values,
        )
    values.update(host=generator.get("host", ""), busy=f"{busy:.0f}")
    if busy >= SATURATED_PERCENT:
        return Phrase(
            _(
                "At load %(load)s side %(side)s began %(late)s ms late: its load generator "
                "%(host)s was saturated (%(busy)s %% busy during the step), so it was slow to "
                "start the load tool, and it may have sent less load than asked."
            ),
            **values,
        )
    return Phrase(
        _(
            "At load %(load)s side %(side)s began %(late)s ms late, though its load generator "
            "%(host)s was not saturated (%(busy)s %% busy during the step): the delay came "
            "before the load, in connecting, in the warm-up or at the end of the step before."
        ),
        **values,
    )


def ladder_outcome(*, cancel_requested: bool, side_statuses) -> str | None:
    """The ladder's status once every side has ended (None before): cancelled if a person
    asked, failed if a side failed (one side's results compare with nothing), else completed."""
    statuses = list(side_statuses)
    if any(status not in ENDED_LADDER_STATUSES for status in statuses):
        return None
    if cancel_requested:
        return LadderStatus.CANCELLED
    if LadderStatus.FAILED in statuses:
        return LadderStatus.FAILED
    return LadderStatus.COMPLETED
