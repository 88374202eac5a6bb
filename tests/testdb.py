"""One migrated database per test run, cloned for each pytest-xdist process.

Migrating takes a test process about 13 s of CPU (rendering the migration states, and the
knowledge base's shipped entries indexed with jieba); four processes migrating at once on two
cores took half a minute before the first test. Instead the first process to get here
migrates a template database, under a lock, and every process (that one too) takes a copy of
it with PostgreSQL's `CREATE DATABASE ... TEMPLATE`, which takes well under a second. The
pytest-xdist controller drops the template when the run ends.
"""

import fcntl
import tempfile
from pathlib import Path

import psycopg

TEMPLATE_SUFFIX = "_template_"


def template_name(base: str, run: str) -> str:
    return f"{base}{TEMPLATE_SUFFIX}{run[:12]}"


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


def clone_test_database(connection, run: str) -> str:
    """Give `connection` (the default alias, its TEST NAME already suffixed for this process)
    a migrated test database copied from the run's template; returns its name."""
    from django.conf import settings

    settings_dict = connection.settings_dict
    own = settings_dict["TEST"]["NAME"]
    base = "test_" + settings_dict["NAME"]
    template = template_name(base, run)
    lock = Path(tempfile.gettempdir()) / f"perfcase-{template}.lock"
    with open(lock, "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)
        with _admin(settings_dict) as admin:
            migrated = _exists(admin, template)
        if not migrated:
            settings_dict["TEST"]["NAME"] = template
            try:
                connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
            finally:
                settings_dict["TEST"]["NAME"] = own
            connection.close()  # a template with a session on it cannot be copied
        with _admin(settings_dict) as admin:
            admin.execute(f"DROP DATABASE IF EXISTS {_quoted(own)}")
            admin.execute(f"CREATE DATABASE {_quoted(own)} TEMPLATE {_quoted(template)}")
    settings_dict["NAME"] = settings.DATABASES[connection.alias]["NAME"] = own
    connection.close()
    return own


def drop_test_database(connection) -> None:
    connection.close()
    with _admin(connection.settings_dict) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {_quoted(connection.settings_dict['NAME'])}")


def drop_templates(settings_dict: dict, run: str) -> None:
    """Drop the run's template (the controller, once every process has ended)."""
    template = template_name("test_" + settings_dict["NAME"], run)
    with _admin(settings_dict) as admin:
        admin.execute(f"DROP DATABASE IF EXISTS {_quoted(template)}")
    Path(tempfile.gettempdir(), f"perfcase-{template}.lock").unlink(missing_ok=True)
