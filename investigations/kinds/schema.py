"""The JSON Schema of a kind's parameters, made from its form (the Plan's `parameters_form`),
so that the API documents each kind's own fields as the form holds them.

A form field says its type and bounds (max_length, min_value, max_value, choices); what a
field's `clean_*` holds beyond that (a grammar), the form states in `json_schema`
({field: keywords}), and rules between fields in `json_schema_rules` (object keywords). A
form field with no schema of its own is documented as a string.
"""

from django import forms

NO_NUL = "^[^\\x00]*$"


def _choices(field) -> list:
    return [str(value) for value, _ in field.choices if value != ""]


def field_schema(field: forms.Field) -> dict:
    """A form field as JSON Schema: its type and the bounds Django's field holds."""
    if isinstance(field, forms.MultipleChoiceField):
        schema = {"type": "array", "items": {"type": "string", "enum": _choices(field)}}
    elif isinstance(field, forms.ChoiceField):
        schema = {"type": "string", "enum": [*_choices(field), *([] if field.required else [""])]}
    elif isinstance(field, forms.IntegerField):
        schema = {"type": "integer"}
        if field.min_value is not None:
            schema["minimum"] = field.min_value
        if field.max_value is not None:
            schema["maximum"] = field.max_value
    elif isinstance(field, forms.BooleanField):
        schema = {"type": "boolean"}
    else:
        schema = {"type": "string", "pattern": NO_NUL}
        if getattr(field, "max_length", None) is not None:
            schema["maxLength"] = field.max_length
    if field.help_text:
        schema["description"] = str(field.help_text)
    if field.label:
        schema["title"] = str(field.label)
    return schema


def form_schema(form_class: type[forms.Form]) -> dict:
    """The form's fields as the properties of a JSON object (none required: a missing
    field takes its default), with the form's own statements added."""
    form = form_class()
    stated = getattr(form_class, "json_schema", {})
    properties = {}
    for name, field in form.fields.items():
        own = field_schema(field)
        if "type" in stated.get(name, {}):  # a type of its own: only the words are kept
            own = {key: own[key] for key in ("title", "description") if key in own}
        properties[name] = {**own, **stated.get(name, {})}
    return {
        "type": "object",
        "properties": properties,
        **getattr(form_class, "json_schema_rules", {}),
    }


def kind_parameters_schema(kind, *, common: dict, default: bool) -> dict:
    """One member of the collection request's oneOf: the kind (required unless it is the
    default), the `common` properties and the kind's own."""
    schema = form_schema(kind.form)
    kind_property = {"type": "string", "enum": [str(kind.key)]}
    if default:
        kind_property["default"] = str(kind.key)
    return {
        **schema,
        "title": str(kind.label),
        "properties": {"kind": kind_property, **common, **schema["properties"]},
        **({} if default else {"required": ["kind"]}),
    }
