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
