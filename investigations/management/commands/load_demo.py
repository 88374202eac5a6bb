"""`manage.py load_demo`: the demo user, team and cases of investigations.demo."""

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from investigations.demo import demo_load


class Command(BaseCommand):
    help = "Create the demo user, team and investigations (idempotent; DEBUG only)."

    def handle(self, *args, **options):
        if not settings.DEBUG:
            raise CommandError(
                "The demo user has a published password: load_demo runs only with DEBUG on."
            )
        if not demo_load():
            self.stdout.write("Demo data already loaded.")
            return
        self.stdout.write(self.style.SUCCESS("Demo data loaded."))
