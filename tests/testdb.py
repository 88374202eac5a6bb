"""One migrated database per version of the code, cloned for each test process.

Migrating takes a test process about 13 s of CPU (rendering the migration states, and the
knowledge base's shipped entries indexed with jieba); four processes migrating at once on two
cores took half a minute before the first test. Instead the first process to get here
migrates a template database, under a lock, and every process (that one too) takes a copy of
it with PostgreSQL's `CREATE DATABASE ... TEMPLATE`, which takes well under a second.

The template is named by a digest of the code the migrations run (`source_digest`), so
`make test`'s serial lane, and the next run of unchanged code, copy the template the
parallel lane made instead of migrating again. A run drops the templates of other versions
when it ends, and keeps its own.
"""

import contextlib
import fcntl
import hashlib
import os
import tempfile
from pathlib import Path

import psycopg

TEMPLATE_SUFFIX = "_template_"
ROOT = Path(__file__).resolve().parent.parent
# What a migration can run: its own files, the app code its data migrations import, the
# shipped knowledge base's data.
SOURCES = ("app", "investigations", "collectors")


def source_digest() -> str:
    """A digest of every source file under SOURCES, by path and contents."""
    digest = hashlib.sha256()
    for folder in SOURCES:
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix in (".py", ".json", ".yaml", ".yml", ".txt", ".sql") and path.is_file():
                digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
                digest.update(path.read_bytes())
    return digest.hexdigest()


def template_name(base: str, version: str) -> str:
    return f"{base}{TEMPLATE_SUFFIX}{version[:12]}"


def _base(settings_dict: dict) -> str:
    """What the templates' names start with: test_ and the configured database's name (a
    process that copied its database has NAME set to the copy: the base it had is kept)."""
    return settings_dict["TEST"].get("TEMPLATE_BASE") or "test_" + settings_dict["NAME"]


def _admin(settings_dict: dict) -> psycopg.Connection:
    """A connection to the server's maintenance database, outside any transaction."""
    return psycopg.connect(
        dbname="postgres",
        user=settings_dict.get("USER") or None,
        password=settings_dict.get("PASSWORD") or None,
        host=settings_dict.get("HOST") or None,
        port=settings_dict.get("PORT") or None,
        autocommit=True,
    )


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _exists(admin: psycopg.Connection, name: str) -> bool:
    found = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name])
    return found.fetchone() is not None


def clone_test_database(connection, version: str) -> str:
    """Give `connection` (the default alias, its TEST NAME already suffixed for this process)
    a migrated test database copied from the template of the code's version; returns its
    name."""
    from django.conf import settings

    settings_dict = connection.settings_dict
    own = settings_dict["TEST"]["NAME"] or connection.creation._get_test_db_name()
    base = settings_dict["TEST"]["TEMPLATE_BASE"] = _base(settings_dict)
    template = template_name(base, version)
    with _locked(template):
        _migrate_template(connection, template, own)
        with _admin(settings_dict) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {_quoted(own)}")
            admin.execute(f"CREATE DATABASE {_quoted(own)} TEMPLATE {_quoted(template)}")
            # A test database is thrown away: no commit of this process, or of a worker or
            # server it starts, waits for the disk (about 3 ms a commit here, 0.08 without).
            admin.execute(f"ALTER DATABASE {_quoted(own)} SET synchronous_commit = off")
    settings_dict["NAME"] = settings.DATABASES[connection.alias]["NAME"] = own
    connection.close()
    return own


def prepare_template() -> None:
    """Migrate the template of this version of the code unless a run already has: what
    `make test` does beside its first collection, before the test processes start
    (tests/lanes.py), so that none of them waits for the migrations."""
    import django
    from django.db import connection

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "app.settings")
    django.setup()
    if connection.vendor != "postgresql":
        return
    settings_dict = connection.settings_dict
    template = template_name(_base(settings_dict), source_digest())
    with _locked(template):
        _migrate_template(connection, template, settings_dict["TEST"]["NAME"])


@contextlib.contextmanager
def _locked(template: str):
    """Held while a process migrates or copies `template` (a file lock: every process of
    every run on this machine)."""
    lock = Path(tempfile.gettempdir()) / f"perfcase-{template}.lock"
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        yield


def _migrate_template(connection, template: str, own: str | None) -> None:
    """Under the lock: migrate `template` if it does not exist yet."""
    settings_dict = connection.settings_dict
    with _admin(settings_dict) as admin:
        if _exists(admin, template):
            return
    # Migrated under another name and renamed once done: a run stopped part-way never
    # leaves a half-migrated template for the next run to copy.
    partial = template + "_partial"
    settings_dict["TEST"]["NAME"] = partial
    try:
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    finally:
        settings_dict["TEST"]["NAME"] = own
    connection.close()  # a template with a session on it cannot be copied
    with _admin(settings_dict) as admin:
        admin.execute(f"ALTER DATABASE {_quoted(partial)} RENAME TO {_quoted(template)}")


def drop_test_database(connection) -> None:
    connection.close()
    with _admin(connection.settings_dict) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {_quoted(connection.settings_dict['NAME'])}")


def drop_other_templates(settings_dict: dict, version: str) -> None:
    """Drop the templates of other versions of the code (the run's own stays, for the next
    run): once every process of the run has ended."""
    base = _base(settings_dict)
    keep = template_name(base, version)
    with _admin(settings_dict) as admin:
        names = admin.execute(
            "SELECT datname FROM pg_database WHERE starts_with(datname, %s) AND datname <> %s",
            [base + TEMPLATE_SUFFIX, keep],
        ).fetchall()
        for (name,) in names:
            admin.execute(f"DROP DATABASE IF EXISTS {_quoted(name)}")
            Path(tempfile.gettempdir(), f"perfcase-{name}.lock").unlink(missing_ok=True)


def flush_by_delete() -> None:
    """Empty the tables after a transactional test with DELETE, not TRUNCATE.

    pytest-django empties every table after a test that commits (Django's `flush`), and on
    PostgreSQL that is one TRUNCATE of all 54 tables: it makes new files for each table and
    index, about 470 ms (130 ms of the server's CPU) a test here. The tables hold a few rows
    by then, which DELETE removes in about 5 ms. The foreign keys Django makes are checked at
    commit (DEFERRABLE INITIALLY DEFERRED), and the flush is one transaction, so the order of
    the tables does not matter. A flush that resets sequences is left as Django does it.
    """
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate = DatabaseOperations.sql_flush
    if getattr(truncate, "deletes", False):
        return

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences:
            return truncate(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        return [
            f"{style.SQL_KEYWORD('DELETE FROM')} {style.SQL_FIELD(self.quote_name(table))};"
            for table in tables
        ]

    sql_flush.deletes = True
    DatabaseOperations.sql_flush = sql_flush


if __name__ == "__main__":
    prepare_template()
