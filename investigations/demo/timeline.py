"""The demo cases' timelines: what happened when, as the people on the case wrote it."""

from datetime import datetime, timedelta

from investigations.choices import ActionKind, EventKind
from investigations.services.timeline import timeline_entry_add

# The main case's: (minutes after the start, kind, action, what happened)
DEMO_TIMELINE = [
    (0, EventKind.NOTE, "", "Traffic surge after the campaign went live; many API calls time out."),
    (6, EventKind.ACTION, ActionKind.RATE_LIMIT, "Rate limit on the public API gateway."),
    (
        14,
        EventKind.ACTION,
        ActionKind.RESTART,
        "Restarted the service. VM instances came back; container instances failed to start "
        "and were taken out of traffic.",
    ),
    (25, EventKind.ACTION, ActionKind.SCALE_OUT, "Scaled out both the VM and the container pools."),
    (31, EventKind.NOTE, "", "Two new container instances unhealthy; removed from the pool."),
    (
        55,
        EventKind.ACTION,
        ActionKind.RATE_LIMIT,
        "Error rate normal for 20 minutes: rate limit lifted.",
    ),
    (80, EventKind.NOTE, "", "Second, larger surge. Timeouts again."),
    (83, EventKind.ACTION, ActionKind.RATE_LIMIT, "Rate limit back on."),
    (
        90,
        EventKind.ACTION,
        ActionKind.SCALE_OUT,
        "Scaled out again. Some deployments failed, more of them on containers; container "
        "instances spend seconds in full GC while requests pile up.",
    ),
    (
        130,
        EventKind.NOTE,
        "",
        "Found a code bug that triggers a full GC at start-up on every instance.",
    ),
    (150, EventKind.ACTION, ActionKind.FIX, "Deployed the fix for the start-up full GC."),
    (
        175,
        EventKind.NOTE,
        "",
        "Load test on one instance of each: the container does half the TPS of the VM and its "
        "average response time is higher. Same hardware model, same image.",
    ),
    (
        230,
        EventKind.NOTE,
        "",
        "lscpu on the container host: current MHz sits at the minimum. scaling_governor is "
        "'powersave' there and 'performance' on the VM host.",
    ),
    (
        240,
        EventKind.ACTION,
        ActionKind.FIX,
        "Set the governor to performance on the container hosts (cpupower frequency-set -g "
        "performance); containers now match or beat the VMs.",
    ),
    (
        300,
        EventKind.NOTE,
        "",
        "Follow-up: export the governor from node_exporter and alert when a host is not on "
        "'performance'; benchmark both platforms before the next launch.",
    ),
]


def timeline_load(*, investigation, user, start: datetime, entries: list) -> None:
    """Each (minutes after the start, kind, action, what happened) entered in order."""
    for minutes, kind, action, summary in entries:
        timeline_entry_add(
            investigation=investigation,
            user=user,
            kind=kind,
            action=action,
            summary=summary,
            occurred_at=start + timedelta(minutes=minutes),
        )
