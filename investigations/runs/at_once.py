"""Several collections run by one task, at once: what must measure the same moment on the
same hosts (a diagnosis's CPU profile and packet capture at the knee) must not wait for a
second worker slot while the first records. Each collection runs as `run_collection` runs
it, in a thread of its own with its own database connection."""

import threading

from django.db import connection

from investigations.runs.collection import run_collection


def run_collections_at_once(*, collection_ids: list[int]) -> None:
    """Every collection of `collection_ids` to its end, all at once. Safe to run twice: a
    second run finds nothing to claim."""
    failures = []

    def run(collection_id: int) -> None:
        try:
            run_collection(collection_id=collection_id)
        except BaseException as error:  # raised again below, in the task's own thread
            failures.append(error)
        finally:
            connection.close()

    threads = [
        threading.Thread(target=run, args=(collection_id,), name=f"collection-{collection_id}")
        for collection_id in collection_ids
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise failures[0]
