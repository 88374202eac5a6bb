"""The demo case's host facts, stored as a collection stores them."""

import hashlib
import tempfile

from collectors.facts import parse_facts
from investigations.choices import CollectionKind
from investigations.demo.hosts import DEMO_HOSTS
from investigations.demo.shipped import shipped
from investigations.runs.capture import Captured
from investigations.services.collections import collection_request
from investigations.services.facts import facts_refresh, facts_store
from investigations.services.targets import (
    artifact_store,
    collection_complete_if_done,
    target_claim,
)


def facts_load(*, investigation, user) -> None:
    """A facts snapshot per host, stored as a collection stores it: the request makes the
    targets; each is claimed here at once and given the probe output shipped in files/, so
    the run the request enqueues finds nothing left to claim and connects to nothing. The
    rules then raise their findings from these facts."""
    collection = collection_request(
        investigation=investigation, user=user, kind=CollectionKind.FACTS
    )
    for target in collection.targets.all():
        claimed = target_claim(target_id=target.pk, seconds=60)
        _, raw = shipped(DEMO_HOSTS[claimed.side.key][2])
        facts_store(
            target=claimed,
            snapshot=parse_facts(raw),
            attempt=claimed.attempts,
            refresh=False,
        )
        captured = _captured(f"facts-{claimed.host.name}-{claimed.side.key}.txt", raw)
        try:
            artifact_store(target=claimed, captured=captured)
        finally:
            captured.close()
    facts_refresh(investigation=investigation)
    collection_complete_if_done(collection_id=collection.pk)


def _captured(name: str, raw: bytes) -> Captured:
    """A shipped output as the runner's capture would hold it, to keep as an artifact."""
    file = tempfile.TemporaryFile()
    file.write(raw)
    return Captured(
        name=name,
        file=file,
        size=len(raw),
        sha256=hashlib.sha256(raw).hexdigest(),
        truncated=False,
        exit_status=0,
    )
