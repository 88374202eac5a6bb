"""`manage.py makemessages` that also extracts the templates of phrases that count
(collectors.phrase.ngettext_noop), with their plurals."""

from django.core.management.commands import makemessages


class Command(makemessages.Command):
    xgettext_options = [*makemessages.Command.xgettext_options, "--keyword=ngettext_noop:1,2"]
