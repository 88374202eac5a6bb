"""The demo cases' write-ups and the action items the teams set themselves."""

from datetime import timedelta

from django.utils import timezone

from investigations.demo.root_causes import DEMO_FIX
from investigations.services.postmortem import action_item_create, postmortem_update

# The demo case's write-up, in our own words, and what the team set out to do after it.
DEMO_POSTMORTEM = {
    "summary": (
        "The order API in containers served half the TPS of the same API on VMs of the same "
        "hardware model. The container hosts ran the 'powersave' CPU frequency governor, so "
        "their cores stayed near the minimum clock under load; a full GC at start-up that "
        "the slower side never caught up with made it look like an application problem."
    ),
    "impact": (
        "About four hours of halved checkout throughput on the container side during the "
        "migration rehearsal; no data lost, the VMs kept serving."
    ),
    "fix": DEMO_FIX,
    "verification": (
        "The same ladder (50 to 400 concurrent users) re-run after the change: both sides "
        "within 5 % at every step, the knee moved past 300 users on the containers."
    ),
    "lessons": (
        "Compare host facts before load-testing: the governor differed from the first "
        "collection. A setting that falls back silently after a reboot needs an alert, not "
        "a runbook line."
    ),
}
DEMO_ACTIONS = [
    # (title, done, due in days from the load)
    ("Alert when node_cpu_scaling_governor is not 'performance' on any node", False, 7),
    ("Keep the performance governor in the container hosts' tuned profile", True, None),
    ("Fix the full GC the order API runs at start-up", False, 21),
]


def postmortem_load(*, investigation, user, postmortem: dict, actions: list) -> None:
    """The write-up and its action items: (title, done, due in days from today or None),
    each owned by `user`."""
    postmortem_update(investigation=investigation, user=user, **postmortem)
    today = timezone.localdate()
    for title, done, due_in in actions:
        action_item_create(
            investigation=investigation,
            user=user,
            title=title,
            owner=user,
            due=today + timedelta(days=due_in) if due_in else None,
            done=done,
        )
