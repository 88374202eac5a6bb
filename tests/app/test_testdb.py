"""The suite's own test databases (tests/testdb.py): what each process is given."""

import pytest
from django.core.management import call_command
from django.core.management.color import no_style
from django.db import connection

from investigations.models import ChecklistItem, Investigation, TimelineEvent

pytestmark = pytest.mark.skipif(
    connection.vendor != "postgresql", reason="the test databases are PostgreSQL's"
)


@pytest.mark.django_db(transaction=True)
def test_the_flush_after_a_committing_test_empties_every_table(personas):
    tables = connection.introspection.django_table_names(only_existing=True)
    statements = connection.ops.sql_flush(no_style(), tables, allow_cascade=True)
    assert statements and all(sql.startswith("DELETE FROM ") for sql in statements)
    # Rows that reference each other (a case, its checklist, its timeline, its team, its
    # people) are committed; the flush removes them whatever order the tables come in.
    assert Investigation.objects.exists() and ChecklistItem.objects.exists()
    assert TimelineEvent.objects.exists()

    call_command("flush", interactive=False, inhibit_post_migrate=True, verbosity=0)

    with connection.cursor() as cursor:
        left = {}
        for table in tables:
            cursor.execute(f"SELECT count(*) FROM {connection.ops.quote_name(table)}")
            if count := cursor.fetchone()[0]:
                left[table] = count
    assert left == {}


def test_a_flush_that_resets_sequences_is_still_a_truncate():
    [sql] = connection.ops.sql_flush(
        no_style(), ["investigations_investigation"], reset_sequences=True
    )
    assert sql.startswith("TRUNCATE ") and "RESTART IDENTITY" in sql


@pytest.mark.django_db
def test_commits_do_not_wait_for_the_disk():
    with connection.cursor() as cursor:
        cursor.execute("SHOW synchronous_commit")
        assert cursor.fetchone() == ("off",)
