"""Rules about the service under test itself: how it is started."""

from django.utils.translation import gettext_noop as _

from investigations.analysis.rules.base import simple_rule
from investigations.choices import FindingSeverity as Severity

jvm_options = simple_rule(
    "service.jvm_options",
    "jvm_options",
    Severity.MEDIUM,
    _("The service's JVM options differ"),
    _("Heap size, garbage collector and their tuning flags change throughput and pause times."),
    _("Run the same start-up flags on both sides."),
    root_cause="gc-pressure",
)
