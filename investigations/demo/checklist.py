"""The demo cases' checklists: only what a person's judgement settles is set by hand."""

from investigations.choices import ItemStatus
from investigations.services.checklist import checklist_item_update


def checklist_load(*, investigation, user) -> None:
    """The main case's. The path, the pairs and the ladder are done by their evidence
    already (the services refresh the checklist), as the root cause is once confirmed; the
    sides do not match while the findings are open."""
    checklist_item_update(
        item=investigation.checklist.get(key="ladder"),
        user=user,
        notes="One instance of each, wrk -t4 -d60s --latency, 50 to 400 connections.",
    )
    checklist_story_load(
        investigation=investigation,
        user=user,
        items=[
            (
                "host_at_knee",
                ItemStatus.DONE,
                "Host facts of both service hosts: the container host runs the 'powersave' "
                "governor at its 1500 MHz minimum, the VM host 'performance' (see the "
                "findings on the CPU governor and clock).",
            ),
        ],
    )


def checklist_story_load(*, investigation, user, items: list) -> None:
    """Each (key, status, notes or the reason it does not apply) set on its item."""
    for key, status, text in items:
        reason = {"na_reason": text} if status == ItemStatus.NOT_APPLICABLE else {"notes": text}
        checklist_item_update(
            item=investigation.checklist.get(key=key), user=user, status=status, **reason
        )
