"""What an import found, said on the page: how many samples, requests or results each file
gave, how many records were left out and why (collectors.filekind.ReadReport)."""

from django.utils.translation import gettext, gettext_noop, ngettext

from collectors.filekind import EXAMPLES_KEPT

# The reasons the parsers give (in English, collectors being no Django), for the translators.
REASONS = (
    gettext_noop("comment line"),
    gettext_noop("blank line"),
    gettext_noop("empty stack"),
    gettext_noop("other event"),
    gettext_noop("unterminated sample"),
    gettext_noop("unrecognized line"),
    gettext_noop("frame outside a sample"),
    gettext_noop("a job whose rw mode is not read here"),
    gettext_noop("malformed"),
    gettext_noop("cut by the snap length before their TCP header"),
    gettext_noop("of a link type not read here"),
    gettext_noop("with a TCP header shorter than 20 bytes"),
    gettext_noop("inside a tunnel not read here"),
    gettext_noop("TCP in IP fragments, not reassembled"),
    gettext_noop("rows of one endpoint (the 'Aggregated' rows are read)"),
    gettext_noop("intervals while the user count changed"),
)

UNITS = {
    "samples": lambda n: ngettext("%(count)s sample", "%(count)s samples", n),
    "stacks": lambda n: ngettext("%(count)s stack", "%(count)s stacks", n),
    "requests": lambda n: ngettext("%(count)s request", "%(count)s requests", n),
    "results": lambda n: ngettext("%(count)s result", "%(count)s results", n),
    "packets": lambda n: ngettext("%(count)s packet", "%(count)s packets", n),
}


def read_summary(reports) -> str:
    """One sentence a file: "dd.txt: 1,234 samples read; 3 skipped (other event: 3)."."""
    sentences = []
    for report in reports or ():
        if report is None:
            continue
        unit = UNITS.get(report.unit, UNITS["results"])
        read = unit(report.read) % {"count": f"{report.read:,}"}
        if not report.skipped_count:
            sentences.append(
                gettext("%(file)s: %(read)s read.") % {"file": report.file, "read": read}
            )
            continue
        reasons = ", ".join(
            f"{gettext(reason)}: {count:,}"
            for reason, count in list(report.skipped.items())[:EXAMPLES_KEPT]
        )
        sentences.append(
            gettext("%(file)s: %(read)s read; %(skipped)s skipped (%(reasons)s).")
            % {
                "file": report.file,
                "read": read,
                "skipped": f"{report.skipped_count:,}",
                "reasons": reasons,
            }
        )
    return " ".join(sentences)
