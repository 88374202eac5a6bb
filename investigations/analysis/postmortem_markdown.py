"""A postmortem (selectors/postmortem.py's PostmortemReport) as Markdown, in the active
language.

What people typed is escaped so that it reads as they wrote it and can do nothing else:
no headings, lists, quotes, code, tables, links, images or HTML of its own. Markdown's
special characters get a backslash (CommonMark lets any ASCII punctuation be escaped), and
so do the marks that only mean something at the start of a line (#, -, +, =, "1."); leading
spaces, which would make code blocks, are dropped.
"""

import re
from datetime import datetime, timedelta

from django.utils import dateformat, timezone
from django.utils.translation import gettext as _

from investigations.analysis.ladder_compare import NOTHING_TO_COMPARE, VERDICT_HEADLINES, gap_text
from investigations.phrases import translate

# Anywhere in a line: escapes, code, emphasis, links and images, HTML and autolinks,
# blockquotes, table cells, strikethrough and code fences.
INLINE_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
# An HTML entity (&lt; &#60;) would turn into the character it names.
ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")
# At the start of a line: headings, list items, setext underlines and thematic breaks.
LINE_START_MARK = re.compile(r"^([#+=-])")
ORDERED_ITEM = re.compile(r"^(\d{1,9})([.)])")
# Control characters other than tab and newline have no business in a document.
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
NO_TEXT = "—"


def _line(text: str) -> str:
    """One line of a person's text, escaped."""
    text = CONTROL.sub("", text).strip()
    text = INLINE_SPECIAL.sub(r"\\\1", text)
    text = ENTITY.sub(r"\\&", text)
    text = LINE_START_MARK.sub(r"\\\1", text)
    return ORDERED_ITEM.sub(r"\1\\\2", text)


def inline(text: str) -> str:
    """A person's text on one line (a heading, a list item, a table cell)."""
    return _line(" ".join((text or "").split()))


def block(text: str, indent: str = "") -> str:
    """A person's text as paragraphs, its line breaks kept. Inside a list item (`indent`:
    its continuation indent), blank lines are dropped so that it stays in the item."""
    lines = (text or "").replace("\r\n", "\n").replace("\r", "\n").split("\n")
    paragraphs, current = [], []
    for raw in lines:
        line = _line(raw)
        if line:
            current.append(line)
        elif current and not indent:
            paragraphs.append(current)
            current = []
    if current:
        paragraphs.append(current)
    # A hard line break (two spaces) keeps the writer's lines.
    joined = [f"  \n{indent}".join(paragraph) for paragraph in paragraphs]
    return f"\n\n{indent}".join(joined)


def moment(value: datetime | None) -> str:
    """A time in the active zone, as the pages show it."""
    if value is None:
        return NO_TEXT
    return dateformat.format(timezone.localtime(value), "Y-m-d H:i T")


def duration_text(value: timedelta | None) -> str:
    """How long, to the minute: "45 min", "2 h 5 min", "3 d 4 h"."""
    if value is None:
        return NO_TEXT
    seconds = int(abs(value.total_seconds()))
    days, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3_600)
    minutes, seconds = divmod(rest, 60)
    if days:
        return _("%(days)s d %(hours)s h") % {"days": days, "hours": hours}
    if hours:
        return _("%(hours)s h %(minutes)s min") % {"hours": hours, "minutes": minutes}
    if minutes:
        return _("%(minutes)s min") % {"minutes": minutes}
    return _("%(seconds)s s") % {"seconds": seconds}


def _number(value: float | None) -> str:
    return NO_TEXT if value is None else f"{value:g}"


def _link(label: str, url: str, base_url: str) -> str:
    """A link of ours (`url` a path on this site) with a label people may have written."""
    label = inline(label) or NO_TEXT
    return f"[{label}](<{base_url}{url}>)" if url else label


def _written(text: str, empty: str) -> str:
    return block(text) if (text or "").strip() else f"*{empty}*"


def _symptom(report) -> list[str]:
    s = report.symptom
    if not s.stated:
        return [f"*{_('The symptom is not stated yet.')}*"]
    metric = inline(s.metric) or _("(metric not named)")
    if s.load.strip():
        metric = _("%(metric)s at %(load)s") % {"metric": metric, "load": inline(s.load)}
    lines = [f"**{_('Symptom:')}** {metric}", ""]
    unit = f" {inline(s.unit)}" if s.unit.strip() else ""
    values = []
    for key in ("a", "b"):
        value = s.value_a if key == "a" else s.value_b
        side = inline(report.sides.get(key, ""))
        shown = _number(value) + (unit if value is not None else "")
        values.append(f"{key.upper()} · {side}: **{shown}**")
    lines.append("  \n".join(values))
    if s.ratio:
        times = f"{s.ratio:.2f}×"
        verdict = (
            _("A is %(times)s worse than B") % {"times": times}
            if s.ratio >= 1
            else _("A is better than B (B is %(times)s of A)") % {"times": times}
        )
        lines += ["", f"**{verdict}** ({s.direction_label})"]
    return lines


def _impact(report) -> list[str]:
    lines = [f"## {_('Impact')}", "", *_symptom(report), ""]
    for time in report.times:
        line = f"- **{time.label}:** {moment(time.at)}"
        duration = time.since_start
        if duration is not None and duration.value is not None:
            line += f" ({duration.label}: {duration.text})"
        lines.append(line)
    lines += ["", _written(report.impact, _("No impact written yet.")), ""]
    return lines


def _timeline(report) -> list[str]:
    # Whether the entries were chosen or are the default ones is the page's business: the
    # document tells them either way.
    lines = [f"## {_('Timeline')}", ""]
    if not report.events:
        lines += [f"*{_('Nothing on the timeline.')}*", ""]
    for entry in report.events:
        kind = entry.kind_label + (f" ({entry.action_label})" if entry.action_label else "")
        lines.append(
            f"- **{moment(entry.occurred_at)}** · {kind} · {inline(entry.author)}: "
            + block(entry.summary, indent="  ")
        )
    return [*lines, ""]


def _method(report) -> list[str]:
    lines = [f"## {_('Method')}", ""]
    for number, step in enumerate(report.method, start=1):
        indent = " " * (len(str(number)) + 2)
        parts = [f"{number}. **{inline(step.title)}** — {step.status_label}"]
        if step.evidence:
            parts[0] += f" ({inline(step.evidence)})"
        if step.na_reason and step.status == "not_applicable":
            parts.append(f"{indent}{_('Not applicable:')} {block(step.na_reason, indent)}")
        if step.notes.strip():
            parts.append(f"{indent}{_('Notes:')} {block(step.notes, indent)}")
        lines.append("  \n".join(parts))
    if not report.method:
        lines.append(f"*{_('No checklist.')}*")
    return [*lines, ""]


def _root_causes(report, base_url: str) -> list[str]:
    lines = [f"## {_('Root causes')}", ""]
    if not report.root_causes:
        lines += [f"*{_('No root cause confirmed yet.')}*", ""]
    for cause in report.root_causes:
        lines += [
            f"### {_link(cause.title, cause.url, base_url)}",
            "",
            f"{cause.category_label} · "
            + _("confirmed by %(user)s on %(when)s")
            % {"user": inline(cause.confirmed_by) or NO_TEXT, "when": moment(cause.confirmed_at)},
            "",
        ]
        if cause.evidence:
            lines += [f"**{_('Evidence:')}**", ""]
            lines += [
                f"- {item.kind_label}: {_link(item.label, item.url, base_url)}"
                for item in cause.evidence
            ]
            lines.append("")
        if cause.fix.strip():
            lines += [f"**{_('Fix applied:')}**", "", block(cause.fix), ""]
    return lines


def _ladders(report, base_url: str) -> list[str]:
    if not report.ladders:
        return [f"*{_('No ladder was run on this case.')}*", ""]
    lines = [f"### {_('Ladders')}", ""]
    for ladder in report.ladders:
        name = _("Ladder #%(pk)s") % {"pk": ladder.id}
        when = moment(ladder.created_at)
        line = f"- {_link(name, ladder.url, base_url)} ({ladder.status_label}, {when})"
        verdicts = [
            _("knee of side %(side)s: %(reason)s")
            % {"side": side.upper(), "reason": inline(reason)}
            for side, (_load, reason) in ladder.knees.items()
        ]
        if ladder.divergence:
            verdicts.append(_("divergence: %(reason)s") % {"reason": inline(ladder.divergence)})
        lines.append(line + (": " + "; ".join(verdicts) if verdicts else ""))
    return [*lines, ""]


def _rerun(report, base_url: str) -> list[str]:
    """The newest rerun against the ladder it ran again: the verdict and the table."""
    check = report.rerun
    if check is None:
        return []
    comparison = check.comparison
    heading = _("Before and after the fix: ladder #%(before)s and #%(after)s") % {
        "before": check.before.pk,
        "after": check.after.pk,
    }
    reason = translate(comparison.reason)
    lines = [
        f"### {heading}",
        "",
        f"**{_(VERDICT_HEADLINES.get(comparison.verdict, NOTHING_TO_COMPARE))}** "
        f"{inline(reason[:1].upper() + reason[1:])}.",
        "",
    ]
    if not comparison.steps:
        return lines
    headers = [
        _("Load"),
        _("A before"),
        _("A after"),
        _("B before"),
        _("B after"),
        _("Gap before"),
        _("Gap after"),
    ]
    lines += ["| " + " | ".join(headers) + " |", "|" + " ---: |" * len(headers)]
    for step in comparison.steps:
        values = [step.a_before, step.a_after, step.b_before, step.b_after]
        cells = [NO_TEXT if v is None else f"{v:,.0f}" for v in values]
        gaps = [gap_text(step.gap_before), gap_text(step.gap_after)]
        lines.append(f"| {step.load:g} | " + " | ".join(cells + gaps) + " |")
    return [*lines, ""]


def _actions(report) -> list[str]:
    lines = [f"## {_('Action items')}", ""]
    if not report.actions:
        return [*lines, f"*{_('No action items yet.')}*", ""]
    lines += [
        f"| {_('Action')} | {_('Owner')} | {_('Due')} | {_('Done')} |",
        "| --- | --- | --- | --- |",
    ]
    for item in report.actions:
        done = f"✓ {moment(item.done_at)}" if item.done else ""
        due = item.due.isoformat() if item.due else NO_TEXT
        lines.append(
            f"| {inline(item.title)} | {inline(item.owner_name) or NO_TEXT} | {due} | {done} |"
        )
    return [*lines, ""]


def postmortem_markdown(report, *, base_url: str = "") -> str:
    """The whole write-up; links to the case's pages start with `base_url`. Without one
    (made outside a request, PERFCASE_BASE_URL unset) they are paths, and it says so."""
    head = [
        f"# {inline(report.title)}",
        "",
        f"*{_('Postmortem')}* · "
        + " · ".join(
            [
                f"**{_('Severity:')}** {report.severity_label}",
                f"**{_('Status:')}** {report.status_label}",
                f"**{_('Team:')}** {inline(report.team)}",
                f"**{_('Lead:')}** {inline(report.lead) or NO_TEXT}",
            ]
        ),
        "",
        f"**{_('Side A:')}** {inline(report.sides.get('a', ''))} · "
        f"**{_('Side B:')}** {inline(report.sides.get('b', ''))}",
        "",
        f"## {_('Summary')}",
        "",
        _written(report.summary, _("No summary written yet.")),
        "",
    ]
    lines = [
        *head,
        *_impact(report),
        *_timeline(report),
        *_method(report),
        *_root_causes(report, base_url),
        f"## {_('Fix')}",
        "",
        _written(report.fix, _("No fix written yet.")),
        "",
        f"## {_('Verification')}",
        "",
        _written(report.verification, _("No verification written yet.")),
        "",
        *_ladders(report, base_url),
        *_rerun(report, base_url),
        *_actions(report),
        f"## {_('Lessons')}",
        "",
        _written(report.lessons, _("No lessons written yet.")),
        "",
    ]
    if not base_url:
        note = _("The links are paths on the Perfcase site: PERFCASE_BASE_URL is not set.")
        lines += ["---", "", f"*{note}*", ""]
    return "\n".join(lines).rstrip("\n") + "\n"


# Characters no file name should carry on any system people download to.
UNSAFE_IN_FILE_NAMES = re.compile(r'[\x00-\x1f\x7f/\\:*?"<>|]+')


def postmortem_filename(report) -> str:
    """The download's name: the case's title (any script), made safe for a file name."""
    title = UNSAFE_IN_FILE_NAMES.sub(" ", report.title)
    title = "-".join(title.split())[:80].strip(".-") or f"investigation-{report.investigation_id}"
    return f"postmortem-{report.investigation_id}-{title}.md"
