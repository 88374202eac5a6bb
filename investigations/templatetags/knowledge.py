"""The texts of knowledge-base entries as people wrote them: plain text, escaped, with its
paragraphs and line breaks kept, lines that begin with "- " as a list and `backticks` as
code. No Markdown: whatever else is typed comes out as typed."""

import re

from django import template
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

register = template.Library()

_PARAGRAPHS = re.compile(r"\n[ \t]*\n+")
_CODE = re.compile(r"`([^`\n]+)`")
_BULLET = "- "


def _line(text: str) -> str:
    # Escaped first: what the code marks wrap can hold no markup any more.
    return _CODE.sub(r"<code>\1</code>", str(escape(text)))


def _paragraph(paragraph: str) -> str:
    """A paragraph's lines: runs of "- " lines become a list, the others a <p> with <br>."""
    html, lines, items = [], [], []
    for line in paragraph.split("\n"):
        if line.startswith(_BULLET):
            if lines:
                html.append("<p>" + "<br>".join(lines) + "</p>")
                lines = []
            items.append("<li>" + _line(line[len(_BULLET) :].strip()) + "</li>")
        else:
            if items:
                html.append("<ul>" + "".join(items) + "</ul>")
                items = []
            lines.append(_line(line))
    if lines:
        html.append("<p>" + "<br>".join(lines) + "</p>")
    if items:
        html.append("<ul>" + "".join(items) + "</ul>")
    return "".join(html)


@register.filter
def entry_text(text: str | None) -> SafeString:
    paragraphs = _PARAGRAPHS.split((text or "").replace("\r\n", "\n").strip())
    html = "".join(_paragraph(p.strip()) for p in paragraphs if p.strip())
    return mark_safe(html)  # noqa: S308 (every line escaped by _line)
