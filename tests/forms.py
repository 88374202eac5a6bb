"""What a test reads of a form that failed: the card of one field, its errors in it."""

import re

_CARD = re.compile(r'<div class="field[^"]*">.*?</div>', re.S)


def field_card(page: str, name: str, *, form: str = "") -> str:
    """The HTML of the card (`_field.html`) holding the input named `name` (of the start
    form of the kind `form`, whose ids say its kind: forms/collections.py `start_ids`);
    fails the test when the page has none."""
    for card in _CARD.findall(page):
        if re.search(rf'name="{re.escape(name)}"', card) and f'id="id_{form}' in card:
            return card
    raise AssertionError(f"no field card for {name!r} on the page")


def error_in_card(page: str, name: str, message: str, *, form: str = "") -> bool:
    """Whether `message` is an error shown in the card of the field `name`."""
    card = field_card(page, name, form=form)
    return 'class="field has-error"' in card and message in card
