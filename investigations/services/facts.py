"""Host facts: a target's parsed snapshot kept, and the rules re-run over every pair."""

from django.db import transaction
from django.utils import timezone

from collectors.facts import FactsSnapshot
from investigations.models import CollectionTarget, FactSnapshot, Investigation
from investigations.services.checklist import checklist_refresh
from investigations.services.findings import findings_refresh
from investigations.services.targets import collection_complete_if_done, target_succeed


@transaction.atomic
def facts_store(
    *,
    target: CollectionTarget,
    snapshot: FactsSnapshot,
    attempt: int | None = None,
    refresh: bool = True,
) -> FactSnapshot | None:
    """Keep the parsed facts and finish the target; with `refresh`, what follows too: the
    finding rules, the checklist, and the collection's end once every target has ended (a
    collection's runner does those once for all its targets instead). None if the target
    is no longer running (under the claim `attempt`, when given)."""
    if not target_succeed(target=target, attempt=attempt):
        return None
    stored = FactSnapshot.objects.create(
        target=target,
        investigation_id=target.collection.investigation_id,
        host=target.host,
        side=target.side,
        collected_at=timezone.now(),
        facts=snapshot.facts,
        probes={
            name: {"status": p.status, "reason": p.reason, "via_sudo": p.via_sudo}
            for name, p in snapshot.probes.items()
        },
    )
    if refresh:
        facts_refresh(investigation=target.collection.investigation)
        transaction.on_commit(
            lambda: collection_complete_if_done(collection_id=target.collection_id)
        )
    return stored


def facts_refresh(*, investigation: Investigation) -> None:
    """What reads the facts: the findings of every host pair, then the checklist."""
    findings_refresh(investigation=investigation)
    # Facts and their findings are the evidence of one step only.
    checklist_refresh(investigation=investigation, keys=["sides_match"])
